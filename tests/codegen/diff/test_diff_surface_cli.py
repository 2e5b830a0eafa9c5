"""``mcpbind diff`` on snapshot files: detection, the published snapshot schema, CI behaviour.

The examples in ``examples/surface/`` are the ones docs/diff-in-ci.md shows: ``released.json``,
and a branch that breaks clients (``breaking.json``) or does not (``compatible.json``).
"""

from __future__ import annotations

import copy
import json
import re
from functools import partial
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from codegen_cli import invoke
from mcpbind.codegen.diff.command import diff_command
from mcpbind.codegen.diff.snapshot import KNOWN_KEYWORDS, check, surface_schema

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "surface"
RELEASED, BREAKING, COMPATIBLE = (
    str(EXAMPLES / f"{n}.json") for n in ("released", "breaking", "compatible")
)
REPORT_SCHEMA = ROOT / "codegen" / "diff" / "report.schema.json"
SCHEMA = surface_schema()


run = partial(invoke, diff_command)


def one_line_error(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcpbind: error: "), stderr
    return lines[0]


def released() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(Path(RELEASED).read_text())
    return document


def write(tmp_path: Path, name: str, document: Any) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


# -- the published schema, and the validator that applies it -----------------------------------


def test_the_schema_is_2020_12_and_the_examples_conform() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    for path in (RELEASED, BREAKING, COMPATIBLE):
        jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(Path(path).read_text()))


def _keywords(node: Any, inside_properties: bool = False) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if not inside_properties:
                found.add(key)
            found |= _keywords(value, key in ("properties", "$defs") and not inside_properties)
    elif isinstance(node, list):
        for value in node:
            found |= _keywords(value)
    return found


def test_the_schema_uses_only_keywords_the_validator_knows() -> None:
    assert _keywords(SCHEMA) <= KNOWN_KEYWORDS


MINIMAL = {
    "format": "mcpbind.surface/1",
    "revision": "2025-06-18",
    "serverInfo": {"name": "s", "version": "0"},
    "instructions": None,
    "capabilities": {},
    "tools": [],
    "resources": [],
    "resourceTemplates": [],
    "prompts": [],
}
GOOD = [
    MINIMAL,
    {
        **MINIMAL,
        "instructions": "Hello.",
        "serverInfo": {"name": "s", "version": "0", "title": "S", "icons": []},
        "tools": [
            {
                "name": "t",
                "title": "T",
                "inputSchema": {"type": "object", "$schema": "x", "properties": {"a": True}},
                "outputSchema": {"type": "object", "required": []},
                "annotations": {"title": "T", "openWorldHint": False},
                "_meta": {"k": 1},
                "icons": [],
            }
        ],
        "resources": [{"uri": "x:/", "name": "x", "size": 3, "annotations": {"priority": 1}}],
        "resourceTemplates": [{"uriTemplate": "x:/{a}", "name": "x", "mimeType": "text/plain"}],
        "prompts": [{"name": "p", "arguments": [{"name": "a", "required": False}]}],
    },
]


# MCP requires `type: object` of a tool's schemas; a server that leaves it out is still diffed.
GOOD.append({**MINIMAL, "tools": [{"name": "loose", "inputSchema": {}}]})


@pytest.mark.parametrize("document", GOOD, ids=["minimal", "every field", "untyped input"])
def test_the_validator_accepts_what_the_schema_accepts(document: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(document)
    assert check(document, SCHEMA, SCHEMA, "") is None


BAD: list[tuple[str, Any, str]] = [
    ("no tools", lambda d: d.pop("tools"), "/: 'tools' is required"),
    ("tool without a name", lambda d: d["tools"][0].pop("name"), "/tools/0: 'name' is required"),
    (
        "a non-object input schema",
        lambda d: d["tools"][0].update(inputSchema={"type": "string"}),
        "/tools/0/inputSchema/type",
    ),
    (
        "a string hint",
        lambda d: d["tools"][1]["annotations"].update(readOnlyHint="yes"),
        "readOnlyHint: expected boolean",
    ),
    (
        "required given as a string",
        lambda d: d["prompts"][0]["arguments"][0].update(required="no"),
        "/prompts/0/arguments/0/required",
    ),
    ("an unknown top-level field", lambda d: d.update(extra=1), "unexpected 'extra'"),
    (
        "an empty resource URI",
        lambda d: d["resources"][0].update(uri=""),
        "/resources/0/uri: must not be empty",
    ),
    (
        "a numeric instruction",
        lambda d: d.update(instructions=3),
        "/instructions: expected string or null",
    ),
    (
        "a size that is true",
        lambda d: d["resources"][0].update(size=True),
        "/resources/0/size: expected integer",
    ),
]


@pytest.mark.parametrize(("what", "mutate", "fragment"), BAD, ids=[b[0] for b in BAD])
def test_the_validator_rejects_what_the_schema_rejects(
    what: str, mutate: Any, fragment: str, tmp_path: Path
) -> None:
    document = released()
    mutate(document)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(SCHEMA).validate(document)
    problem = check(document, SCHEMA, SCHEMA, "")
    assert problem is not None and fragment in problem, problem
    code, _, err = run(RELEASED, write(tmp_path, "bad.json", document))
    assert code == 2
    line = one_line_error(err)
    assert "not a valid server snapshot" in line and fragment in line


# -- the command ---------------------------------------------------------------------------------


def test_a_breaking_branch_fails_the_build() -> None:
    code, out, _ = run(RELEASED, BREAKING)
    assert code == 1
    assert out.startswith(f"mcpbind diff {RELEASED} -> {BREAKING}: 9 changes (8 breaking, ")
    assert "bindings" not in out.splitlines()[0]
    assert "TOOL_REMOVED: tool 'delete_note' removed: calling it fails (breaks clients)" in out
    assert "TOOL_ARGUMENT_REQUIRED inputSchema.limit: argument 'limit' is now required" in out


def test_a_compatible_branch_passes() -> None:
    code, out, _ = run(RELEASED, COMPATIBLE)
    assert code == 0
    assert ": 7 changes (0 breaking, 0 potentially-breaking, 7 compatible)" in out
    assert "fix-ups" not in out  # no schema, no fix-ups line


def test_fail_on_potentially_breaking_and_never() -> None:
    code, _, _ = run(RELEASED, BREAKING, "--only", "potentially-breaking")
    assert code == 0  # the one mimeType change does not fail the default --fail-on
    code, _, _ = run(
        RELEASED, BREAKING, "--only", "potentially-breaking", "--fail-on", "potentially-breaking"
    )
    assert code == 1
    assert run(RELEASED, BREAKING, "--fail-on", "never")[0] == 0


def test_json_report_validates_and_names_its_subjects() -> None:
    code, out, _ = run(RELEASED, BREAKING, "--format", "json")
    document = json.loads(out)
    jsonschema.Draft202012Validator(json.loads(REPORT_SCHEMA.read_text())).validate(document)
    assert code == 1 and document["failed"] is True and document["fixups"] == {}
    subjects = {e["subject"] for e in document["entries"]}
    assert subjects == {"capability", "tool", "resource", "resource-template", "prompt"}
    [removed] = [e for e in document["entries"] if e["rule"] == "TOOL_REMOVED"]
    assert (removed["path"], removed["affects"], removed["direction"]) == (
        "tools/delete_note",
        ["client"],
        "client_to_server",
    )


def test_markdown_github_and_junit() -> None:
    _, markdown, _ = run(RELEASED, BREAKING, "--format", "markdown", "--fail-on", "never")
    assert markdown.startswith("## MCP server surface changes: ")
    assert "generated bindings" not in markdown
    _, github, _ = run(RELEASED, BREAKING, "--format", "github")
    assert "::error title=TOOL_REMOVED tools/delete_note " in github
    assert "::warning title=RESOURCE_MIME_TYPE_CHANGED " in github
    _, junit, _ = run(RELEASED, BREAKING, "--format", "junit")
    assert 'failures="8"' in junit


def test_an_ignore_file_accepts_a_removed_tool(tmp_path: Path) -> None:
    ignores = tmp_path / "ignore.toml"
    ignores.write_text(
        '[[ignore]]\nrule = "TOOL_REMOVED"\npath = "tools/delete_*"\n'
        'reason = "delete_note moved to the admin server"\n'
    )
    _, out, _ = run(RELEASED, BREAKING, "--ignore", str(ignores), "--format", "json")
    document = json.loads(out)
    assert [i["path"] for i in document["ignored"]] == ["tools/delete_note"]
    assert "TOOL_REMOVED" not in {e["rule"] for e in document["entries"]}
    assert document["failed"] is True  # the other breaking changes remain


def test_revision_change_is_a_note(tmp_path: Path) -> None:
    newer = released()
    newer["revision"] = "2026-07-28"
    code, out, _ = run(RELEASED, write(tmp_path, "newer.json", newer))
    assert code == 0
    assert (
        "protocol revision 2026-07-28 (was 2025-11-25): `mcpbind diff 2025-11-25 2026-07-28`" in out
    )


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (
            lambda d: d.update(format="mcpbind.surface/2"),
            "snapshot format 'mcpbind.surface/2' is not supported",
        ),
        (
            lambda d: d["tools"].append(copy.deepcopy(d["tools"][0])),
            "tools lists name 'delete_note' twice",
        ),
    ],
    ids=["a later format", "a tool listed twice"],
)
def test_unusable_snapshots_are_one_line_and_exit_2(
    change: Any, fragment: str, tmp_path: Path
) -> None:
    document = released()
    change(document)
    code, _, err = run(RELEASED, write(tmp_path, "bad.json", document))
    assert code == 2 and fragment in one_line_error(err)


def test_a_snapshot_against_a_schema_is_one_line_and_exit_2() -> None:
    code, _, err = run(RELEASED, "2025-11-25")
    assert code == 2
    assert "is a server snapshot but 2025-11-25 is not" in one_line_error(err)
    code, _, err = run("2025-11-25", BREAKING)
    assert code == 2 and f"{BREAKING} is a server snapshot" in one_line_error(err)


def test_raw_means_nothing_for_snapshots() -> None:
    code, _, err = run(RELEASED, BREAKING, "--raw")
    assert code == 2 and "--raw compares schemas" in one_line_error(err)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"format": 1}', "not an MCP schema"),
        ("[]", "must be a JSON object"),
        ("{", "not valid JSON"),
    ],
)
def test_a_json_file_that_is_neither_is_one_line_and_exit_2(
    text: str, fragment: str, tmp_path: Path
) -> None:
    other = tmp_path / "other.json"
    other.write_text(text)
    code, _, err = run(str(other), str(other))
    assert code == 2 and fragment in one_line_error(err)


def test_rules_lists_the_surface_rules_aligned() -> None:
    code, out, _ = run("rules")
    assert code == 0
    by_rule = {line.split()[0]: line for line in out.splitlines()}
    assert by_rule["TOOL_ARGUMENT_REMOVED"].split()[1] == "potentially-breaking..breaking"
    assert by_rule["TOOL_REMOVED"].split()[1] == "breaking"
    assert by_rule["TOOL_ANNOTATION_CHANGED"].split()[1] == "compatible..breaking"
    starts = [re.match(r"\S+\s+\S+\s+", line) for line in out.splitlines()]
    assert len({m.end() for m in starts if m}) == 1  # every description starts in one column
