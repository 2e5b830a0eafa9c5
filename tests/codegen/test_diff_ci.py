"""``mcpbind diff`` in CI: filters, the ignore file, exit codes, rules, and the machine formats
(JSON validated against the published schema, GitHub annotations, JUnit XML parsed back)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from functools import partial
from pathlib import Path

import jsonschema
import pytest
from codegen_cli import invoke
from mcpbind.codegen.cli import main
from mcpbind.codegen.diff import Rule

SCHEMA = Path(__file__).resolve().parents[2] / "codegen" / "diff" / "report.schema.json"
STEP = ("2025-11-25", "2026-07-28")


run = partial(invoke, main, "diff")


def as_json(*args: str) -> dict[str, object]:
    document: dict[str, object] = json.loads(run(*args, "--format", "json")[1])
    return document


def test_json_validates_against_the_published_schema() -> None:
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    for args in (STEP, ("2024-11-05", "2025-03-26", "--raw"), ("2025-06-18", "2025-06-18")):
        document = as_json(*args)
        validator.validate(document)
    bad = {**as_json(*STEP), "entries": [{"rule": "X"}]}
    assert not validator.is_valid(bad)
    # the published schema names every rule, no more
    published = json.loads(SCHEMA.read_text())["$defs"]["Rule"]["enum"]
    assert published == [r.value for r in Rule]


def test_rules_lists_every_rule_with_severity_and_one_line() -> None:
    code, out, _ = run("rules")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == len(Rule)
    by_rule = {line.split()[0]: line.split()[1] for line in lines}
    assert by_rule["METHOD_BECAME_INPUT_REQUEST"] == "breaking"
    assert by_rule["DEPRECATED"] == "compatible"
    assert by_rule["PROPERTY_ADDED"] == "compatible..breaking"


def test_severity_and_only_filters() -> None:
    full = as_json(*STEP)
    breaking = as_json(*STEP, "--only", "breaking")
    at_least = as_json(*STEP, "--severity", "potentially-breaking")
    summary, only = full["summary"], breaking["summary"]
    assert isinstance(summary, dict) and isinstance(only, dict)
    assert only["total"] == only["breaking"] == summary["breaking"] > 0
    assert only["compatible"] == only["potentially-breaking"] == 0
    entries = at_least["entries"]
    assert isinstance(entries, list)
    assert {e["severity"] for e in entries} == {"breaking", "potentially-breaking"}
    code, _, _ = run(*STEP, "--only", "compatible")
    assert code == 0  # nothing breaking remains: CI passes


def test_ignore_file_accepts_changes_reports_unused_and_sets_the_exit_code(tmp_path: Path) -> None:
    ignore = tmp_path / "ignore.toml"
    ignore.write_text(
        '[[ignore]]\nrule = "*"\npath = "*"\nreason = "we accept the whole stateless step"\n'
        '[[ignore]]\nrule = "METHOD_REMOVED"\npath = "nothing/*"\nreason = "stale entry"\n'
    )
    code, out, err = run(*STEP, "--ignore", str(ignore))
    assert code == 0
    assert ": no changes" in out.splitlines()[0]
    assert "unused ignore: METHOD_REMOVED nothing/* (stale entry)" in out
    assert "mcpbind: warning: unused ignore METHOD_REMOVED nothing/*" in err
    ignore.write_text(
        '[[ignore]]\nrule = "SERVER_REQUEST_REMOVED"\npath = "tasks/*"\n'
        'reason = "tasks left the core protocol"\n'
    )
    document = as_json(*STEP, "--ignore", str(ignore))
    ignored = document["ignored"]
    assert isinstance(ignored, list) and len(ignored) == 4
    assert document["unused_ignores"] == [] and document["failed"] is True


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('[[ignore]]\nrule = "METHOD_REMOVED"\npath = "x"\n', "a non-empty 'reason' is required"),
        ('[[ignore]]\nrule = "NOPE"\npath = "x"\nreason = "r"\n', "unknown rule or tag 'NOPE'"),
        ('[[ignore]]\nrule = "METHOD_REMOVED"\nreason = "r"\n', "'path'"),
        ("[[ignore]\n", "not valid TOML"),
    ],
)
def test_a_bad_ignore_file_is_one_line_and_exit_2(tmp_path: Path, text: str, fragment: str) -> None:
    ignore = tmp_path / "ignore.toml"
    ignore.write_text(text)
    code, out, err = run(*STEP, "--ignore", str(ignore))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and fragment in err


def test_github_annotations() -> None:
    code, out, _ = run(*STEP, "--format", "github")
    assert code == 1
    lines = out.splitlines()
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
    became = [
        line for line in lines if "METHOD_BECAME_INPUT_REQUEST sampling/createMessage" in line
    ]
    assert len(became) == 1 and became[0].startswith("::error title=")
    # property values escape ':' and ',' so the runner parses the title
    assert (
        "title=METHOD_BECAME_INPUT_REQUEST sampling/createMessage (2025-11-25 -> 2026-07-28)::"
        in (became[0])
    )
    _, relaxed, _ = run(*STEP, "--format", "github", "--fail-on", "never")
    assert not [line for line in relaxed.splitlines() if line.startswith("::error")]


def test_junit_xml_parses_back() -> None:
    code, out, _ = run(*STEP, "--format", "junit")
    assert code == 1
    root = ET.fromstring(out)
    [suite] = root.findall("testsuite")
    cases = suite.findall("testcase")
    failures = [c for c in cases if c.find("failure") is not None]
    assert int(suite.get("tests", "0")) == len(cases) > 0
    assert int(suite.get("failures", "0")) == len(failures) > 0
    assert all(f.find("failure").get("type") for f in failures)  # type: ignore[union-attr]
    names = {c.get("name") for c in failures}
    assert "METHOD_BECAME_INPUT_REQUEST roots/list" in names
    passed = [c for c in cases if c.find("failure") is None]
    assert passed and all(c.find("system-out") is not None for c in passed)
    _, relaxed, _ = run(*STEP, "--format", "junit", "--fail-on", "never")
    assert ET.fromstring(relaxed).find("testsuite").get("failures") == "0"  # type: ignore[union-attr]


def test_identical_messages_are_folded_and_invented_names_stay_at_their_owner() -> None:
    document = as_json(*STEP)
    entries = document["entries"]
    assert isinstance(entries, list)
    [result_type] = [e for e in entries if "CallToolResult.resultType" in e["paths"]]
    assert result_type["count"] == 8 and len(set(result_type["paths"])) == 8
    paths = [p for e in entries for p in e["paths"]]
    # CompleteResultCompletion is a name mcpbind invented for CompleteResult.completion
    assert "CompleteResult.completion.values" in paths
    assert not [p for p in paths if p.startswith("CompleteResultCompletion")]
    assert not [p for p in paths if p.endswith("RequestParamsMeta")]
    _, text, _ = run(*STEP)
    assert len(text.splitlines()) < 340  # was 390 before folding; message unions now listed
