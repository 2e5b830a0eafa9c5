"""The long fuzzing run: every client-to-server method of every pinned revision, many examples.

Runs ``tests/runtime/test_fuzz_methods.py`` (real servers over stdio and Streamable HTTP, both
eras; see ``tests/runtime/fuzzkit.py``) with ``--examples`` per method and revision instead of
the suite's 3, drawn afresh each run (``--seed`` repeats one), and prints the examples checked
per method, transport and revision. Failures are printed by pytest, each with its example.

    .venv/bin/python bench/fuzz.py --examples 100
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=100, help="per method and revision")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (repeat a run)")
    parser.add_argument("-k", default=None, help="pytest -k expression (a subset)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.tsv"
        env = {
            **os.environ,
            "MCPBIND_FUZZ_EXAMPLES": str(args.examples),
            "MCPBIND_FUZZ_RANDOM": "1",
            "MCPBIND_FUZZ_REPORT": str(report),
        }
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                   "tests/runtime/test_fuzz_methods.py", "-o", "addopts=", "--timeout=0"]  # fmt: skip
        if args.seed is not None:
            command.append(f"--hypothesis-seed={args.seed}")
        if args.k:
            command += ["-k", args.k]
        started = time.monotonic()
        status = subprocess.call(command, cwd=ROOT, env=env)
        elapsed = time.monotonic() - started
        rows = report.read_text().splitlines() if report.exists() else []
    counts = collections.Counter(tuple(row.split("\t")) for row in rows)
    by_method: dict[str, dict[str, int]] = collections.defaultdict(dict)
    columns = sorted({f"{transport} {revision}" for transport, revision, _ in counts})
    for (transport, revision, method), count in counts.items():
        by_method[method][f"{transport} {revision}"] = count
    print(f"\n{sum(counts.values())} examples in {elapsed:.0f} s (pytest exit status {status})")
    print("| method | " + " | ".join(columns) + " |")
    print("|---|" + "--:|" * len(columns))
    for method in sorted(by_method):
        cells = [str(by_method[method].get(column, "")) for column in columns]
        print(f"| {method} | " + " | ".join(cells) + " |")
    return status


if __name__ == "__main__":
    sys.exit(main())
