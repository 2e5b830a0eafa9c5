"""``mcpbind diff``: the yaml, html and singleline formats, ``diff schema``, the changelog check,
and extension schemas as layers (issue 27 items 4-6)."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import sys
import tomllib
import xml.etree.ElementTree as ET
from functools import partial
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest
import yaml
from codegen_cli import invoke
from mcpbind.codegen.diff.changelog_check import parse_changelog
from mcpbind.codegen.diff.command import diff_command
from mcpbind.codegen.errors import CodegenError
from mcpbind.codegen.load import load_extension
from mcpbind.codegen.pins import load_extension_pins, load_pins, package_schema_dir

REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
PAIRS = list(itertools.pairwise(REVISIONS))
ROOT = Path(__file__).resolve().parents[3]


run = partial(invoke, diff_command)


def report_schema() -> dict[str, object]:
    code, out, _ = run("schema")
    assert code == 0
    schema: dict[str, object] = json.loads(out)
    return schema


def test_diff_schema_prints_the_packaged_report_schema() -> None:
    shipped = ROOT / "codegen" / "diff" / "report.schema.json"
    assert run("schema")[1] == shipped.read_text(encoding="utf-8")
    jsonschema.Draft202012Validator.check_schema(report_schema())


@pytest.mark.parametrize(
    ("old", "new", "extra"),
    [
        ("2025-03-26", "2025-06-18", ()),
        ("2025-11-25", "2026-07-28", ("--check-changelog",)),
        ("2024-11-05", "2025-03-26", ("--check-changelog", "--severity", "breaking")),
        ("tasks@2026-05-22", "tasks@2026-08-21", ()),
    ],
)
def test_json_and_yaml_of_real_pairs_are_valid_reports(
    old: str, new: str, extra: tuple[str, ...]
) -> None:
    validator = jsonschema.Draft202012Validator(report_schema())
    _, text, _ = run(old, new, "--format", "json", "--fail-on", "never", *extra)
    document = json.loads(text)
    validator.validate(document)
    assert ("changelog" in document) == ("--check-changelog" in extra)
    _, as_yaml, _ = run(old, new, "--format", "yaml", "--fail-on", "never", *extra)
    assert yaml.safe_load(as_yaml) == document  # the same document, in YAML


def test_singleline_is_one_line_per_change() -> None:
    _, out, _ = run("2025-11-25", "2026-07-28", "--format", "singleline", "--fail-on", "never")
    _, as_json, _ = run("2025-11-25", "2026-07-28", "--format", "json", "--fail-on", "never")
    lines = out.splitlines()
    assert len(lines) == json.loads(as_json)["summary"]["total"]
    assert "breaking METHOD_REMOVED initialize: method 'initialize' removed" in out
    pattern = re.compile(r"^(breaking|potentially-breaking|compatible) [A-Z_]+ \S+: .+$")
    assert all(pattern.match(line) for line in lines), [x for x in lines if not pattern.match(x)]


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.outside: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href") or (value and "://" in value):
                self.outside.append(f"{tag} {name}={value}")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_yaml_without_pyyaml_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)  # as on a plain install without the extra
    code, out, err = run("2025-03-26", "2025-06-18", "--format", "yaml")
    assert code == 2 and out == ""
    assert (
        err
        == "mcpbind: error: --format yaml needs PyYAML: pip install 'mcpbind[codegen]' (or pyyaml)\n"
    )


def test_html_is_one_self_contained_page_with_escaped_content(tmp_path: Path) -> None:
    # a schema file whose name and definitions carry markup: none of it may become markup
    folder = tmp_path / "<script>alert(1)"
    folder.mkdir()
    source = json.loads((ROOT / "schema" / "2025-11-25" / "schema.json").read_text())
    old = folder / "old.json"
    old.write_text(json.dumps(source))
    source["$defs"]["<script>Evil</script>"] = {"type": "object"}
    new = folder / "new.json"
    new.write_text(json.dumps(source))
    code, page, err = run(str(old), str(new), "--format", "html")
    assert code == 0, err
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    parser = _Page()
    parser.feed(page)
    assert "script" not in parser.tags and "link" not in parser.tags and "img" not in parser.tags
    assert parser.outside == []  # no external asset, no link anywhere
    assert "<style>" in page  # the style sheet is inline
    assert "&lt;script&gt;Evil&lt;/script&gt;" in page and "<script>" not in page
    assert any("<script>Evil</script>" in t for t in parser.text)  # shown as text


def test_html_carries_the_changelog_check() -> None:
    _, page, _ = run("2025-11-25", "2026-07-28", "--format", "html", "--check-changelog")
    assert "<h2>Changelog check: 2026-07-28</h2>" in page
    assert "<code>tasks/cancel</code>" in page


# --- the changelog check ---------------------------------------------------------------------


def test_changelog_parsing_finds_items_names_and_references() -> None:
    entries = parse_changelog(
        "---\ntitle: x\n---\n\n## Major changes\n\n1. Remove `ping` and **[batching](/x)**\n"
        "   (PR [#416](https://github.com/o/r/pull/416))\n2. Add `server/discover` (SEP-2575)\n\n"
        "## Full changelog\n\n- [see GitHub](https://example.com)\n"
    )
    assert [(e.section, e.number) for e in entries] == [("Major changes", 1), ("Major changes", 2)]
    first, second = entries
    assert "ping" in first.names and first.features == ("batch",)
    assert "pull" not in first.names  # link targets name pages, not the schema
    assert {"server/discover", "server", "discover"} <= second.names
    assert second.references == ("SEP-2575",)


def test_changelog_check_finds_unmentioned_breaks_and_unbacked_entries() -> None:
    code, out, _ = run(
        "2025-11-25", "2026-07-28", "--format", "json", "--check-changelog", "--fail-on", "never"
    )
    assert code == 0  # only --fail-on-changelog turns findings into an exit status
    check = json.loads(out)["changelog"]
    unmentioned = {(f["rule"], f["path"]) for f in check["unmentioned"]}
    # tasks/cancel left the core protocol; the changelog's tasks entry names the others only
    assert ("METHOD_REMOVED", "tasks/cancel") in unmentioned
    # named by the changelog: never reported
    assert not {p for _, p in unmentioned} & {"initialize", "ping", "logging/setLevel"}
    unbacked = {(e["section"], e["number"]) for e in check["unbacked"]}
    # numbers' bounds and defaults: mcpbind's fix-ups already gave the old side what it says
    assert ("Other schema changes", 1) in unbacked
    assert ("Deprecated", 3) not in unbacked  # includeContext: schema.ts marks it @deprecated
    prose = {(e["section"], e["number"]) for e in check["prose"]}
    assert ("Minor changes", 7) in prose  # the authorization server's `iss`: not in the schema
    assert (
        check["counts"]["entries"]
        == len(check["unbacked"]) + len(check["prose"]) + check["counts"]["backed"]
    )


def test_plain_words_back_entries_but_never_mention_breaking_changes() -> None:
    _, out, _ = run("2025-06-18", "2025-11-25", "--format", "json", "--check-changelog")
    check = json.loads(out)["changelog"]
    not_backed = {(e["section"], e["number"]) for e in check["prose"] + check["unbacked"]}
    # "expose icons as additional metadata": no code name, but `Tool.icons` and `Icon` changed
    assert ("Major changes", 2) not in not_backed
    assert ("Governance and process updates", 1) in not_backed
    # the 2026-07-28 tasks entry says "tasks" in prose: tasks/cancel stays unmentioned
    _, out, _ = run("2025-11-25", "2026-07-28", "--format", "json", "--check-changelog")
    assert "tasks/cancel" in {f["path"] for f in json.loads(out)["changelog"]["unmentioned"]}


def test_fail_on_changelog_exits_3_only_when_asked_and_only_for_findings() -> None:
    args = ("2025-11-25", "2026-07-28", "--fail-on", "never", "--format", "singleline")
    assert run(*args, "--check-changelog")[0] == 0
    code, out, _ = run(*args, "--fail-on-changelog")
    assert code == 3 and "changelog CHANGELOG_UNMENTIONED tasks/cancel" in out
    assert run("2024-11-05", "2025-03-26", "--fail-on-changelog")[0] == 0  # all backed
    assert run("2025-11-25", "2026-07-28", "--fail-on-changelog")[0] == 1  # --fail-on first


def test_github_and_junit_carry_the_changelog_findings() -> None:
    args = ("2025-11-25", "2026-07-28", "--fail-on", "never", "--check-changelog")
    _, out, _ = run(*args, "--format", "github")
    assert "::warning title=CHANGELOG_UNMENTIONED tasks/cancel::METHOD_REMOVED is breaking" in out
    _, out, _ = run(*args, "--format", "github", "--fail-on-changelog")
    assert "::error title=CHANGELOG_UNMENTIONED tasks/cancel::" in out
    code, out, _ = run(*args, "--format", "junit", "--fail-on-changelog")
    assert code == 3
    suites = ET.fromstring(out.split("?>", 1)[1])
    check = suites.find("testsuite[@name='changelog check (2026-07-28)']")
    assert check is not None and check.get("failures") == check.get("tests") != "0"
    assert len(suites.findall("testsuite")) == 2


def test_changelog_check_of_a_revision_without_changelog_is_one_line() -> None:
    code, _, err = run("2025-03-26", "2024-11-05", "--check-changelog")
    assert code == 2 and err.strip() == (
        "mcpbind: error: --check-changelog: revision 2024-11-05 has no changelog pinned"
    )


def _docs_section() -> dict[str, str]:
    text = (ROOT / "docs" / "diff-in-ci.md").read_text(encoding="utf-8")
    block = text.split("<!-- changelog-check:begin -->\n", 1)[1].split(
        "<!-- changelog-check:end -->", 1
    )[0]
    sections = re.split(r"^(?=#### )", block, flags=re.MULTILINE)
    found = {}
    for section in sections:
        if section.startswith("#### "):
            head, body = section.split("\n", 1)
            found[head.removeprefix("#### ").strip()] = body.strip("\n")
    return found


@pytest.mark.parametrize(("old", "new"), PAIRS)
def test_docs_table_is_what_the_command_prints_now(old: str, new: str) -> None:
    _, out, _ = run(old, new, "--check-changelog", "--format", "markdown", "--fail-on", "never")
    printed = out.split(f"### Changelog check: {new}\n", 1)[1].strip("\n")
    assert _docs_section()[f"{old} → {new}"] == printed, (
        f"docs/diff-in-ci.md is stale: paste the section `mcpbind diff {old} {new} "
        "--check-changelog --format markdown` prints under its heading"
    )


def test_changelog_check_of_server_snapshots_is_refused() -> None:
    surface = ROOT / "examples" / "surface"
    code, _, err = run(
        str(surface / "released.json"), str(surface / "compatible.json"), "--check-changelog"
    )
    assert code == 2
    assert err == "mcpbind: error: --check-changelog reads a revision's changelog, not a server's\n"


# --- extension schemas -------------------------------------------------------------------------


def test_extension_pins_are_verified_and_kept_apart_from_revisions() -> None:
    extensions = load_extension_pins()
    assert {n: sorted(v) for n, v in extensions.items()} == {
        "apps": ["2.0.0", "2.0.4"],
        "tasks": ["2026-05-22", "2026-08-21"],
    }
    assert not set(load_pins()) & {"apps", "tasks"}  # generate reads revisions only
    table = tomllib.loads((package_schema_dir() / "pins.toml").read_text())
    for name, versions in extensions.items():
        for version, pin in versions.items():
            data = (ROOT / pin.path).read_bytes()
            assert hashlib.sha256(data).hexdigest() == pin.sha256
            assert table["extensions"][name][version]["sha256"] == pin.sha256
            assert pin.base in load_pins()


def test_an_extension_file_with_other_bytes_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin = load_extension_pins()["tasks"]["2026-08-21"]
    copy = tmp_path / "extensions" / "tasks" / "2026-08-21" / "schema.json"
    copy.parent.mkdir(parents=True)
    copy.write_bytes((ROOT / pin.path).read_bytes() + b"\n")
    monkeypatch.setenv("MCPBIND_SCHEMA_DIR", str(tmp_path))
    with pytest.raises(CodegenError, match="sha256 mismatch"):
        load_extension(pin)
    code, _, err = run("tasks@2026-05-22", "tasks@2026-08-21")
    assert code == 2 and "sha256 mismatch" in err


def test_extension_versions_diff_between_themselves() -> None:
    # two real upstream versions of each: ext-tasks at two commits, ext-apps 2.0.0 and 2.0.4
    _, out, _ = run("tasks@2026-05-22", "tasks@2026-08-21", "--format", "json")
    document = json.loads(out)
    assert (document["old"], document["new"]) == (
        "2026-07-28+tasks@2026-05-22",
        "2026-07-28+tasks@2026-08-21",
    )
    paths = {p for e in document["entries"] for p in e["paths"]}
    assert "CancelTaskResult.resultType" in paths  # results now carry resultType
    assert all(not p.startswith(("Tool.", "CallToolRequest")) for p in paths)  # core kept
    _, out, _ = run("apps@2.0.0", "apps@2.0.4", "--format", "json")
    changed = {e["name"] for e in json.loads(out)["entries"]}
    assert changed and all(name.startswith("McpUi") for name in changed)


def test_an_extension_layers_over_a_revision() -> None:
    _, out, _ = run("2026-07-28", "2026-07-28+tasks", "--format", "json")
    document = json.loads(out)
    assert document["new"] == "2026-07-28+tasks@2026-08-21"  # the newest pinned version
    added = {e["name"] for e in document["entries"] if e["rule"] == "DEFINITION_ADDED"}
    assert {"GetTaskRequest", "UpdateTaskRequest", "TasksExtensionCapability"} <= added
    # the extension's methods join the method table (client -> server), its notification too
    methods = {p for e in document["entries"] if e["rule"] == "METHOD_ADDED" for p in e["paths"]}
    assert methods == {"tasks/get", "tasks/update", "tasks/cancel"}
    # used only when both sides declared the extension: gated, so adding them is compatible
    gated = "gated by the extension 'io.modelcontextprotocol/tasks' (declared by both sides)"
    assert all(
        e["direction"] == "client_to_server"
        and e["severity"] == "compatible"
        and gated in e["message"]
        for e in document["entries"]
        if e["rule"] == "METHOD_ADDED"
    )
    notes = [e for e in document["entries"] if e["rule"] == "NOTIFICATION_ADDED"]
    assert [(e["path"], e["direction"]) for e in notes] == [
        ("notifications/tasks", "server_to_client")
    ]
    rules = {e["rule"] for e in document["entries"]}
    assert {"DEFINITION_ADDED", "METHOD_ADDED", "NOTIFICATION_ADDED"} <= rules
    assert rules <= {"DEFINITION_ADDED", "METHOD_ADDED", "NOTIFICATION_ADDED", "UNION_MEMBER_ADDED"}
    unions = {e["path"] for e in document["entries"] if e["rule"] == "UNION_MEMBER_ADDED"}
    assert unions <= {"ClientRequest", "ServerNotification"}  # the members, where reported
    assert any("tasks@2026-08-21 (io.modelcontextprotocol/tasks)" in n for n in document["notes"])
    _, layered, _ = run("2025-11-25", "2026-07-28+tasks", "--format", "json", "--fail-on", "never")
    # 2025-11-25's tasks against the extension's: tasks/get stays, tasks/result goes
    entries = json.loads(layered)["entries"]
    removed = {p for e in entries if e["rule"] == "METHOD_REMOVED" for p in e["paths"]}
    assert {"tasks/result", "tasks/list"} <= removed and "tasks/get" not in removed
    assert any(
        e["rule"] == "CONST_CHANGED" and e["path"] == "TaskStatusNotification.method"
        for e in entries
    )
    # MCP Apps' ui/* messages go between a view and its host: definitions only
    _, apps, _ = run("2025-11-25", "2025-11-25+apps", "--format", "json")
    assert {e["rule"] for e in json.loads(apps)["entries"]} == {"DEFINITION_ADDED"}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("2026-07-28+nope", "unknown extension 'nope'; pinned extensions: apps, tasks"),
        ("2026-07-28+tasks@1999", "extension tasks has no pinned version '1999'"),
        ("2026-07-28+", "an empty extension name after '+'"),
    ],
)
def test_bad_extension_names_are_one_line_errors(spec: str, message: str) -> None:
    code, _, err = run("2025-11-25", spec)
    assert code == 2 and err.count("\n") == 1 and message in err
