"""Benchmark of ``mcpbind diff``'s output formats, changelog check and extension layers on the
largest pinned pair (2025-11-25 -> 2026-07-28), as whole processes. Not a test.

Run from the repository root (or with ``PYTHONPATH`` at another checkout, to compare commits)::

    .venv/bin/python bench/diff_formats.py --repeat 7

Each figure is the median of ``--repeat`` fresh processes running the whole command
(interpreter start-up, imports, loading and verifying the pinned files, the IRs, the diff and
the rendering), after one untimed warm-up run that writes the ``.pyc`` files: wall clock, and
the CPU time the process used (user + system, from ``getrusage``), which other work on a busy
machine moves less. The aim is under 1 s of wall clock for every variant. ``python -c pass`` is
shown for reference: every run pays for it.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)

PAIR = ("2025-11-25", "2026-07-28")
VARIANTS: dict[str, tuple[str, ...]] = {
    "text": (),
    "json": ("--format", "json"),
    "html": ("--format", "html"),
    "singleline": ("--format", "singleline"),
    "yaml": ("--format", "yaml"),
    "text --check-changelog": ("--check-changelog",),
    "json --check-changelog": ("--format", "json", "--check-changelog"),
    "+tasks layered (text)": (),
}
AIM_S = 1.0


def _command(variant: str, extra: tuple[str, ...]) -> list[str]:
    new = f"{PAIR[1]}+tasks" if "+tasks" in variant else PAIR[1]
    base = [sys.executable, "-m", "mcpbind.codegen", "diff", PAIR[0], new, "--fail-on", "never"]
    return [*base, *extra]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(command: list[str], repeat: int) -> tuple[float, float]:
    """Median wall clock and median CPU time of ``command``, in seconds."""
    subprocess.run(command, check=True, capture_output=True)  # warm-up: .pyc written
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), _cpu()
        subprocess.run(command, check=True, capture_output=True, env=os.environ)
        walls.append(time.perf_counter() - start)
        cpus.append(_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", choices=list(VARIANTS), action="append")
    args = parser.parse_args()
    print(f"{'':28} {'wall':>7}    {'CPU':>7}")
    wall, cpu = _time([sys.executable, "-c", "pass"], args.repeat)
    print(f"{'python -c pass':28} {wall * 1000:7.0f} ms {cpu * 1000:7.0f} ms")
    for variant, extra in VARIANTS.items():
        if args.only and variant not in args.only:
            continue
        wall, cpu = _time(_command(variant, extra), args.repeat)
        mark = "" if wall < AIM_S else f"  (over the {AIM_S:g} s aim)"
        print(f"{variant:28} {wall * 1000:7.0f} ms {cpu * 1000:7.0f} ms{mark}")


if __name__ == "__main__":
    main()
