"""``bench/peer_table.py`` runs, and the table it wrote into the docs has a row for every peer.

Nothing is measured here (the script is a benchmark, run by hand): ``--help`` and ``--list``
only, then the marked section of ``docs/benchmarks.md`` is read.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path("bench") / "peer_table.py"
START, END = "<!-- peer-table:start -->", "<!-- peer-table:end -->"
#: A version in a row's name ("Python SDK 2.3.0 `MCPServer`"): ``--list`` names rows without.
VERSION = re.compile(r" v?\d+(\.\d+)+")


def script(repo_root: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(repo_root / SCRIPT), *args],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_script_explains_itself(repo_root: Path) -> None:
    assert "--write-docs" in script(repo_root, "--help")


def test_the_docs_table_has_a_row_for_every_peer(repo_root: Path) -> None:
    names = [line.split("\t")[1] for line in script(repo_root, "--list").splitlines()]
    assert "FastMCP" in " ".join(names) and "zeromcp" in " ".join(names)
    page = (repo_root / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert page.count(START) == 1 and page.count(END) == 1
    section = page.split(START, 1)[1].split(END, 1)[0]
    tables: list[list[str]] = []
    for line in section.splitlines():
        if not line.startswith("| "):
            continue
        if line.startswith("| peer |"):
            tables.append([])
        else:
            tables[-1].append(VERSION.sub("", line.split(" | ", 1)[0].removeprefix("| ")))
    assert len(tables) == 2, "a stdio table and a Streamable HTTP table"
    for rows in tables:
        assert rows == names
