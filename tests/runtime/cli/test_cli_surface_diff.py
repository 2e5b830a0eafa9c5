"""What ``mcpbind inspect --json`` writes is what ``mcpbind diff`` reads: real snapshots valid
against the one published schema (``codegen/diff/surface.schema.json``), accepted by the diff's
own check, and a tool removed between two snapshots reported as breaking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from clikit import NOTES, REPO, cli
from mcpbind.codegen.diff.snapshot import check, surface_schema

pytestmark = [pytest.mark.timeout(120)]

SCHEMA = REPO / "codegen" / "diff" / "surface.schema.json"


def snapshot(*args: str, cwd: Path = REPO) -> dict[str, Any]:
    done = cli("inspect", *args, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_snapshots_are_valid_against_the_published_schema(revision: str) -> None:
    document = snapshot(NOTES, "--revision", revision)
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(document)
    published = surface_schema()
    assert check(document, published, published, "") is None  # the diff's own check agrees


def test_diff_reports_a_removed_tool_between_two_snapshots(tmp_path: Path) -> None:
    source = (REPO / NOTES).read_text()
    (tmp_path / "before.py").write_text(source)
    # The same server without its `repeat` tool (its decorator and function dropped).
    start = source.index("@app.tool()\ndef repeat")
    end = source.index("@app.resource", start)
    (tmp_path / "after.py").write_text(source[:start] + source[end:])
    for name in ("before", "after"):
        (tmp_path / f"{name}.json").write_text(json.dumps(snapshot(f"{name}.py", cwd=tmp_path)))
    done = cli("diff", "before.json", "after.json", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # a breaking change
    assert "repeat" in done.stdout
    same = cli("diff", "before.json", "before.json", cwd=tmp_path)
    assert same.returncode == 0, same.stdout + same.stderr
