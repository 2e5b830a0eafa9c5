"""Where a change comes from (issue 27 items 2 and 5): the revision, or an extension layered over
it; the ``extension`` selectors that pick changes by it; extension methods gated by the
extension's declaration."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from codegen_cli import invoke
from mcpbind.codegen.diff import Rule
from mcpbind.codegen.diff.command import diff_command, load_side
from mcpbind.codegen.diff.origins import Origins, attribute
from mcpbind.codegen.ir import Direction
from mcpbind.codegen.ir.extensions import EXTENSIONS

ROOT = Path(__file__).resolve().parents[3]
LAYERED = ("2025-11-25", "2026-07-28+tasks")
TASKS = "tasks@2026-08-21"
GATE = "extensions.io.modelcontextprotocol/tasks"


run = functools.partial(invoke, diff_command)


@functools.cache
def report(*args: str) -> dict[str, Any]:
    code, out, err = run(*args, "--format", "json", "--fail-on", "never")
    assert code == 0, err
    document: dict[str, Any] = json.loads(out)
    return document


def changes(document: dict[str, Any]) -> set[tuple[str, str, str | None]]:
    """(rule, path, origin) of every change, unfolded."""
    return {(e["rule"], p, e["origin"]) for e in document["entries"] for p in e["paths"]}


def extension_names() -> set[str]:
    """The tasks extension's own definitions and methods."""
    schema = json.loads((ROOT / "schema/extensions/tasks/2026-08-21/schema.json").read_text())
    (known,) = [e for e in EXTENSIONS if e.identifier == "io.modelcontextprotocol/tasks"]
    return {*schema["$defs"], *known.requests, *known.notifications}


def test_only_extension_shows_exactly_the_extensions_changes() -> None:
    every = changes(report(*LAYERED))
    only = changes(report(*LAYERED, "--only", "extension"))
    assert only and {origin for _, _, origin in only} == {TASKS}
    assert only == {c for c in every if c[2] is not None}  # all of them, and nothing else
    for selector in ("area:extension", "extension:tasks", f"extension:{TASKS}"):
        assert changes(report(*LAYERED, "--only", selector)) == only, selector
    for selector in ("extension:apps", "extension:tasks@2026-05-22"):
        assert not report(*LAYERED, "--only", selector)["entries"], selector
    # with a severity word: both must match
    breaking = changes(report(*LAYERED, "--only", "breaking,extension"))
    assert breaking and breaking < only
    # the revision's own changes are the plain revision step's; what the layer takes from that
    # step is about the extension's definitions and methods
    revision = {(rule, path) for rule, path, origin in every if origin is None}
    plain = {(rule, path) for rule, path, _ in changes(report(*LAYERED[:1], "2026-07-28"))}
    assert revision and revision <= plain
    replaced = plain - revision
    assert replaced and all(re.split(r"[.|\[{]", p)[0] in extension_names() for _, p in replaced)


def test_ignore_and_severity_overrides_select_by_origin(tmp_path: Path) -> None:
    every = changes(report(*LAYERED))
    ours = {c for c in every if c[2] is not None}
    ignore = tmp_path / "ignore.toml"
    ignore.write_text(
        '[[ignore]]\nrule = "extension"\npath = "*"\nreason = "the tasks layer is reviewed apart"\n'
    )
    kept = report(*LAYERED, "--ignore", str(ignore))
    assert changes(kept) == every - ours
    assert len(kept["ignored"]) == len(ours) and not kept["unused_ignores"]
    config = tmp_path / "diff.toml"
    config.write_text('[severity]\n"extension:tasks" = "info"\n')
    levelled = report(*LAYERED, "--config", str(config))["entries"]
    assert {e["severity"] for e in levelled if e["origin"]} == {"compatible"}
    plain = {(e["rule"], e["path"], e["severity"]) for e in report(*LAYERED)["entries"]}
    assert {(e["rule"], e["path"], e["severity"]) for e in levelled if not e["origin"]} <= plain
    off = tmp_path / "off.toml"  # another name: ``report`` remembers by arguments
    off.write_text('[severity]\nextension = "off"\n')
    assert changes(report(*LAYERED, "--config", str(off))) == every - ours
    # one extension by name: an unknown one is a one-line error, exit status 2
    ignore.write_text('[[ignore]]\nrule = "extension:taks"\npath = "*"\nreason = "r"\n')
    code, _, err = run(*LAYERED, "--ignore", str(ignore))
    assert code == 2 and err.count("\n") == 1
    assert "unknown extension 'taks'; pinned extensions: apps, tasks" in err


@pytest.mark.parametrize(
    ("old", "new", "origin"),
    [
        ("tasks@2026-05-22", "tasks@2026-08-21", "tasks@2026-08-21"),
        ("tasks@2026-08-21", "tasks@2026-05-22", "tasks@2026-05-22"),  # the NEW side's label
        ("apps@2.0.0", "apps@2.0.4", "apps@2.0.4"),
    ],
)
def test_between_an_extensions_versions_every_change_is_the_extensions(
    old: str, new: str, origin: str
) -> None:
    found = changes(report(old, new))
    assert found and {o for _, _, o in found} == {origin}
    assert changes(report(old, new, "--only", "extension")) == found


def test_shared_definitions_keep_the_revisions_origin() -> None:
    """A definition both the revision and the extension define keeps the revision's copy, so
    its changes are the revision's; one only the extension defines (the 2026-07-28 core has no
    ``Task``) is the extension's, even where the old revision defined it."""
    found = changes(report(*LAYERED))
    shared = json.loads((ROOT / "schema/extensions/tasks/2026-08-21/schema.json").read_text())
    assert "Result" in shared["$defs"]  # the extension carries a copy of the core's
    assert ("PROPERTY_ADDED", "Result.resultType", None) in found
    assert ("PROPERTY_ADDED", "Task.ttlMs", TASKS) in found
    assert ("CONST_CHANGED", "TaskStatusNotification.method", TASKS) in found
    # a union member: by the side it is on; ServerResult losing 2025-11-25's GetTaskResult is
    # the revision's, ClientRequest gaining the extension's UpdateTaskRequest the extension's
    members = {
        (e["rule"], e["path"], e["old"] or e["new"]): e["origin"]
        for e in report(*LAYERED)["entries"]
        if e["rule"].startswith("UNION_MEMBER_")
    }
    assert members[("UNION_MEMBER_REMOVED", "ServerResult", "GetTaskResult")] is None
    assert members[("UNION_MEMBER_ADDED", "ClientRequest", "UpdateTaskRequest")] == TASKS
    # the method the extension defines: its every change, whichever side (tasks/get was core)
    methods = {(rule, origin) for rule, path, origin in found if path == "tasks/get"}
    assert methods == {("SERVER_REQUEST_REMOVED", TASKS), ("METHOD_CAPABILITY_CHANGED", TASKS)}


def test_every_format_marks_what_an_extension_brought() -> None:
    document = report(*LAYERED)
    assert all(("extension" in e["categories"]) == bool(e["origin"]) for e in document["entries"])
    _, lines, _ = run(*LAYERED, "--format", "singleline", "--fail-on", "never")
    marked = [line for line in lines.splitlines() if line.endswith(" [tasks]")]
    assert len(marked) == sum(e["count"] for e in document["entries"] if e["origin"])
    _, text, _ = run(*LAYERED, "--fail-on", "never")
    assert "DEFINITION_ADDED [tasks] (11): CancelledTask, CompletedTask" in text
    assert "tasks/update\n    compatible            METHOD_ADDED: method 'tasks/update'" in text
    _, markdown, _ = run(*LAYERED, "--format", "markdown", "--fail-on", "never")
    assert "- New definitions \\[tasks\\]: `CancelledTask`" in markdown
    assert "(`CONST_CHANGED`) *bindings* \\[tasks\\]" in markdown
    _, page, _ = run(*LAYERED, "--format", "html", "--fail-on", "never")
    assert "(declared by both sides) [tasks]</td>" in page
    # a revision step without extensions: nothing marked, every origin null
    plain = report("2025-06-18", "2025-11-25")
    assert {e["origin"] for e in plain["entries"]} == {None}


def test_extension_methods_are_gated_by_the_extensions_declaration() -> None:
    ir, _ = load_side("2026-07-28+tasks")
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        assert ir.method(method).capability_for(Direction.CLIENT_TO_SERVER) == GATE
    assert ir.method("tools/call").capability_for(Direction.CLIENT_TO_SERVER) == "tools"
    plain, _ = load_side("2026-07-28")
    assert [m for m in plain.methods if m.method.startswith("tasks/")] == []
    added = [
        e for e in report("2026-07-28", "2026-07-28+tasks")["entries"] if e["subject"] == "method"
    ]
    assert {e["rule"] for e in added} == {"METHOD_ADDED"}
    assert {e["severity"] for e in added} == {"compatible"}  # was potentially-breaking ungated
    # 2025-11-25's tasks/get was gated by the server's `tasks` capability
    (regated,) = [
        e
        for e in report(*LAYERED)["entries"]
        if e["rule"] == "METHOD_CAPABILITY_CHANGED" and e["path"] == "tasks/get"
    ]
    assert (regated["old"], regated["new"]) == ("tasks", GATE)


def test_rules_listing_says_the_extension_category_selects_by_origin() -> None:
    code, listed, note = run("rules", "--only", "extension")
    assert code == 0 and len(listed.splitlines()) == len(Rule)  # any rule can come from one
    assert "selects changes by where they come from" in note
    _, out, _ = run("rules", "--format", "json")
    document = json.loads(out)
    assert not [r["rule"] for r in document["rules"] if "extension" in r["categories"]]
    assert "by the change's origin" in document["categories"]["extension"]
    code, _, err = run("rules", "--only", "extension:nope")
    assert code == 2 and "unknown extension 'nope'" in err


def test_attribute_without_extensions_changes_nothing() -> None:
    found = report("2025-06-18", "2025-11-25")
    assert found["entries"]
    ir, _ = load_side("2025-11-25")
    assert Origins().with_hoisted(ir) == Origins()
    assert attribute([], Origins(), Origins()) == []
