"""``mcpbind diff``: formats, ``--fail-on`` exit codes, files as inputs, one line for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from mcpbind.codegen.diff.command import diff_command

ANSI = "\x1b["


def run(*args: str, color: bool = False) -> tuple[int, str, str]:
    result = CliRunner().invoke(diff_command, list(args), color=color)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def assert_one_line_error(stderr: str, fragment: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("mcpbind: error: ") and fragment in lines[0], lines[0]
    assert "Traceback" not in stderr


def test_text_is_grouped_by_method_then_definition_without_colour_off_a_tty() -> None:
    code, out, _ = run("2025-03-26", "2025-06-18")
    assert code == 1  # batching removed: breaking, and --fail-on defaults to breaking
    assert out.startswith("mcpbind diff 2025-03-26 -> 2025-06-18: ")
    assert out.index("\nMethods\n") < out.index("\nCapabilities\n") < out.index("\nDefinitions\n")
    assert "METHOD_ADDED: method 'elicitation/create' added" in out
    assert "DEFINITION_RENAMED: definition ResourceReference renamed" in out
    assert "PROPERTY_ADDED (23): " in out  # harmless additions folded into one line
    assert ANSI not in out


def test_text_has_colour_on_a_tty_and_lists_everything_when_verbose() -> None:
    _, out, _ = run("2025-03-26", "2025-06-18", color=True)
    assert ANSI in out and click.unstyle(out) != out
    _, verbose, _ = run("2025-03-26", "2025-06-18", "--verbose")
    # the same change in five definitions the server sends is one folded line, with every path
    assert (
        "PROPERTY_ADDED (5 places, server -> client): property 'title' added (optional, string)"
        in verbose
    )
    assert (
        "at Prompt.title, PromptArgument.title, Resource.title, ResourceTemplate.title," in verbose
    )


def test_markdown_is_a_release_notes_section() -> None:
    code, out, _ = run("2025-03-26", "2025-06-18", "--format", "markdown", "--fail-on", "never")
    assert code == 0
    assert out.startswith("## MCP schema changes: 2025-03-26 → 2025-06-18\n")
    assert out.index("### Breaking changes") < out.index("### Compatible changes")
    assert "- `JSONRPCMessage`: union member array\\[JSONRPCRequest" in out
    assert "- New definitions: `BaseMetadata`" in out


def test_json_is_one_object_per_folded_entry() -> None:
    code, out, _ = run("2025-11-25", "2026-07-28", "--format", "json")
    assert code == 1
    document = json.loads(out)
    assert (document["old"], document["new"]) == ("2025-11-25", "2026-07-28")
    assert document["failed"] is True and document["fail_on"] == "breaking"
    removed = [c for c in document["entries"] if c["rule"] == "METHOD_REMOVED"]
    [initialize] = [c for c in removed if c["path"] == "initialize"]
    assert (initialize["direction"], initialize["severity"]) == ("client_to_server", "breaking")


def test_descriptions_only_when_asked() -> None:
    _, plain, _ = run("2025-06-18", "2025-11-25", "--format", "json")
    _, full, _ = run("2025-06-18", "2025-11-25", "--format", "json", "--include-descriptions")
    assert "DESCRIPTION_CHANGED" not in _rules(plain)
    assert "DESCRIPTION_CHANGED" in _rules(full)


def _rules(text: str) -> set[str]:
    return {c["rule"] for c in json.loads(text)["entries"]}


@pytest.mark.parametrize(
    ("old", "new", "fail_on", "code"),
    [
        ("2024-11-05", "2025-03-26", "breaking", 0),
        ("2024-11-05", "2025-03-26", "potentially-breaking", 1),
        ("2025-03-26", "2025-06-18", "breaking", 1),
        ("2025-06-18", "2025-06-18", "potentially-breaking", 0),
        ("2024-11-05", "2025-03-26", "bindings", 1),
    ],
)
def test_fail_on_sets_exit_status_1(old: str, new: str, fail_on: str, code: int) -> None:
    assert run(old, new, "--fail-on", fail_on)[0] == code
    assert run(old, new, "--fail-on", "never")[0] == 0
    if fail_on == "breaking":
        assert run(old, new)[0] == code  # the default


def test_files_compare_the_same_revision_at_two_spec_commits(
    schema_dir: Path, release_day: Path
) -> None:
    day = release_day / "2026-07-28"
    code, out, _ = run(str(day / "schema.json"), str(schema_dir / "2026-07-28"), "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert document["old"] == f"2026-07-28 ({day / 'schema.json'})"
    assert sorted(c["rule"] for c in document["entries"]) == [
        "DEFINITION_ADDED",
        "DEFINITION_RENAMED",
    ]


def test_a_file_is_named_by_its_stem(tmp_path: Path, schema_dir: Path) -> None:
    copy = tmp_path / "candidate.json"
    copy.write_bytes((schema_dir / "2025-11-25" / "schema.json").read_bytes())
    code, out, _ = run("2025-11-25", str(copy))
    assert code == 0 and "-> candidate (" in out and ": no changes" in out


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (None, "cannot read schema"),
        ("{not json", "not valid JSON"),
        ('{"$defs": {"A": {"type": "string"}}}', "neither 'initialize' nor 'server/discover'"),
        (
            '{"$defs": {"ClientRequest": {"anyOf": [{"$ref": "#/$defs/Missing"}]}}}',
            "not an MCP schema mcpbind understands",
        ),
    ],
)
def test_bad_files_are_one_line_and_exit_2(
    tmp_path: Path, content: str | None, fragment: str
) -> None:
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    code, out, err = run("2025-11-25", str(path))
    assert code == 2 and out == ""
    assert_one_line_error(err, fragment)


def test_unknown_revision_is_one_line_and_exit_2() -> None:
    code, _, err = run("2099-01-01", "2025-11-25")
    assert code == 2
    assert_one_line_error(err, "unknown revision '2099-01-01'")


def test_registered_as_mcpbind_diff() -> None:
    from mcpbind.codegen.cli import main

    result = CliRunner().invoke(main, ["diff", "2025-03-26", "2025-06-18", "--fail-on", "breaking"])
    assert result.exit_code == 1
    assert "DEFINITION_RENAMED: definition ResourceReference renamed" in result.stdout
