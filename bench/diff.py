"""Benchmark of ``mcpbind diff`` on the pinned revisions, and its rule counts (issue 27). Not a test.

Run from the repository root::

    PYTHONPATH=. .venv/bin/python bench/diff.py --repeat 7 [--json figures.json]

What it measures, each figure the median of ``--repeat`` runs after one untimed warm-up, in this
process, as wall clock and as CPU time (``time.process_time``: on a shared machine the steadier of
the two, and the one to compare commits by):

1. ``diff_revisions(old, new, include_descriptions=True)`` for every pinned pair of neighbours and
   for the largest pair (2025-11-25 -> 2026-07-28), both ways; the IRs are built once, outside the
   timing (loading is the loader's cost, measured by ``bench/codegen.py --stages``). The aim is the
   largest pair under 1 s.
2. The whole report as the command builds it (``build_report``: load, IR, documents, diff) for the
   largest pair, the figure a CI job pays per run.
3. ``mcpbind diff 2025-11-25 2026-07-28 --format json`` as a fresh process (interpreter start-up
   and imports included), wall clock.
4. The rule catalogue: how many rules, by kind and by area (``mcpbind diff rules --format json``).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)

LARGEST = ("2025-11-25", "2026-07-28")
REPO = Path(__file__).resolve().parent.parent


def timed(action: Callable[[], object], repeat: int) -> dict[str, Any]:
    action()
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        action()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return {
        "median": statistics.median(wall),
        "min": min(wall),
        "cpu_median": statistics.median(cpu),
        "cpu_min": min(cpu),
    }


def command(repeat: int, repo: Path) -> dict[str, Any]:
    """The whole command in a fresh interpreter, as CI runs it."""
    argv = [sys.executable, "-c", "from mcpbind.codegen.cli import main; main()", "diff", *LARGEST]
    argv += ["--format", "json", "--fail-on", "never"]
    env = {**os.environ, "PYTHONPATH": str(repo)}

    def once() -> None:
        subprocess.run(argv, env=env, cwd=repo, check=True, capture_output=True)

    return timed(once, repeat)


def _ms(figure: dict[str, Any]) -> str:
    return f"{figure['median'] * 1000:.1f} / {figure['cpu_median'] * 1000:.1f}"


def rule_counts() -> dict[str, Any]:
    """Rule counts by kind and area; before the taxonomy existed only the total is known."""
    from mcpbind.codegen.diff import RULE_DOCS

    try:
        from mcpbind.codegen.diff.taxonomy import TAGS
    except ImportError:
        return {"total": len(RULE_DOCS)}
    return {
        "total": len(RULE_DOCS),
        "by_kind": dict(Counter(t.kind for t in TAGS.values()).most_common()),
        "by_area": dict(Counter(t.area for t in TAGS.values()).most_common()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", dest="out", default=None, help="also write figures here")
    parser.add_argument(
        "--repo", type=Path, default=REPO, help="the checkout the command runs from (for a before)"
    )
    args = parser.parse_args()

    from mcpbind.codegen.diff import diff_revisions
    from mcpbind.codegen.diff.command import build_report
    from mcpbind.codegen.ir import build_ir
    from mcpbind.codegen.load import load_revision
    from mcpbind.codegen.pins import load_pins

    revisions = list(load_pins())
    irs = {rev: build_ir(load_revision(rev)) for rev in revisions}
    pairs = [*itertools.pairwise(revisions), (revisions[0], revisions[-1])]
    figures: dict[str, Any] = {"pairs": {}}
    print(f"{'pair (ms: wall / cpu)':<28} {'forward':>15} {'backward':>15} {'changes':>8}")
    for old, new in pairs:
        forward = timed(functools.partial(diff_revisions, irs[old], irs[new], True), args.repeat)
        backward = timed(functools.partial(diff_revisions, irs[new], irs[old], True), args.repeat)
        count = len(diff_revisions(irs[old], irs[new], True))
        figures["pairs"][f"{old} -> {new}"] = {"forward": forward, "backward": backward}
        print(f"{old + ' -> ' + new:<28} {_ms(forward):>15} {_ms(backward):>15} {count:>8}")
    report = timed(lambda: build_report(*LARGEST, False, True), args.repeat)
    figures["report"] = report
    print(f"build_report {' -> '.join(LARGEST)} (ms: wall / cpu): {_ms(report)}")
    figures["command"] = command(args.repeat, args.repo)
    wall = figures["command"]["median"] * 1000
    print(f"mcpbind diff {' '.join(LARGEST)}, a fresh process: {wall:.0f} ms wall")
    figures["rules"] = rule_counts()
    print(f"rules: {json.dumps(figures['rules'])}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2)


if __name__ == "__main__":
    main()
