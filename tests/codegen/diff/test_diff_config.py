"""Selecting rules by tag, ``mcpbind diff rules --format json``, and the config file
(``mcpbind-diff.toml`` or ``[tool.mcpbind.diff]``): levels, ignores, fail-on, bad input."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcpbind.codegen.cli import main
from mcpbind.codegen.diff import Rule
from mcpbind.codegen.diff.tags import Action, Area, Direction, Kind
from mcpbind.codegen.diff.taxonomy import (
    CATEGORIES,
    SPECS,
    TAGS,
    Selection,
    categories_of,
    resolve,
    select,
)

STEP = ("2025-11-25", "2026-07-28")


def run(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """``mcpbind diff ARGS`` run in ``cwd``, where it looks for its config."""
    with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
        result = CliRunner().invoke(main, ["diff", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def entries(*args: str, cwd: Path | None = None) -> list[dict[str, Any]]:
    code, out, err = run(*STEP, *args, "--format", "json", "--fail-on", "never", cwd=cwd)
    assert code == 0, err
    found: list[dict[str, Any]] = json.loads(out)["entries"]
    return found


def test_rules_json_lists_every_rule_with_its_tags_and_categories() -> None:
    code, out, _ = run("rules", "--format", "json")
    assert code == 0
    document = json.loads(out)
    listed = document["rules"]
    assert [r["rule"] for r in listed] == [r.value for r in Rule]
    assert set(document["categories"]) == set(CATEGORIES)
    for item in listed:
        assert set(item["tags"]) == {"direction", "area", "kind", "action"}
        assert item["doc"] and item["severity"]
    kinds = Counter(r["tags"]["kind"] for r in listed if r["keyword"])
    assert sum(kinds.values()) == len(SPECS) >= 150
    maximum = next(r for r in listed if r["rule"] == "MAXIMUM_DECREASED")
    assert maximum["tags"] == {
        "direction": "senders",
        "area": "constraint",
        "kind": "constraints",
        "action": "decreased",
    }
    assert maximum["keyword"] == "maximum" and "wire" in maximum["categories"]


def test_rules_can_be_listed_by_selector() -> None:
    code, out, _ = run("rules", "--only", "area:dialect", "--format", "json")
    assert code == 0
    listed = json.loads(out)["rules"]
    assert listed and {r["tags"]["area"] for r in listed} == {"dialect"}
    _, text, _ = run("rules", "--only", "MAXIMUM_*")
    assert [line.split()[0] for line in text.splitlines()] == [
        "MAXIMUM_ADDED",
        "MAXIMUM_REMOVED",
        "MAXIMUM_INCREASED",
        "MAXIMUM_DECREASED",
    ]
    _, breaking, _ = run("rules", "--only", "breaking,area:constraint")
    assert "MAXIMUM_DECREASED" in breaking and "MAXIMUM_INCREASED" not in breaking
    _, table, _ = run("rules", "--only", "docs", "--format", "markdown")
    assert "| `TITLE_CHANGED` | compatible | none | definition | documentation | changed |" in table


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("area:method", lambda e: e["tags"]["area"] == "method"),
        ("protocol", lambda e: e["tags"]["area"] in ("method", "capability")),
        ("kind:existence", lambda e: e["tags"]["kind"] == "existence"),
        ("UNION_MEMBER_*", lambda e: e["rule"].startswith("UNION_MEMBER_")),
    ],
)
def test_only_selects_by_tag_category_and_glob(selector: str, expected: Any) -> None:
    chosen = entries("--only", selector)
    assert chosen and all(expected(e) for e in chosen)
    assert len(chosen) < len(entries())


def test_only_combines_severity_words_with_selectors() -> None:
    chosen = entries("--only", "breaking,area:method")
    assert chosen
    assert {e["severity"] for e in chosen} == {"breaking"}
    assert {e["tags"]["area"] for e in chosen} == {"method"}


def test_an_unknown_selector_names_the_closest_one() -> None:
    code, _, err = run(*STEP, "--only", "area:methd")
    assert code == 2 and "did you mean 'area:method'?" in err
    code, _, err = run("rules", "--only", "MAXIMUM_DECREASD")
    assert code == 2 and "did you mean 'MAXIMUM_DECREASED'?" in err


def test_an_ignore_may_name_a_tag(tmp_path: Path) -> None:
    ignore = tmp_path / "ignore.toml"
    ignore.write_text('[[ignore]]\nrule = "area:method"\npath = "*"\nreason = "methods: known"\n')
    code, out, _ = run(*STEP, "--ignore", str(ignore), "--format", "json", "--fail-on", "never")
    document = json.loads(out)
    assert code == 0 and document["ignored"]
    assert all(TAGS[Rule(i["rule"])].area.value == "method" for i in document["ignored"])
    assert not [e for e in document["entries"] if e["tags"]["area"] == "method"]


def write(tmp_path: Path, text: str, name: str = "mcpbind-diff.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return tmp_path


def test_config_levels_rules_by_id_tag_and_category(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        '[severity]\nwire = "info"\n"area:method" = "warning"\nMETHOD_REMOVED = "error"\n'
        'docs = "off"\n',
    )
    found = entries(cwd=config)
    by_rule = {(e["rule"], e["severity"]) for e in found}
    assert ("METHOD_REMOVED", "breaking") in by_rule  # the ID is the most specific
    assert ("SERVER_REQUEST_REMOVED", "potentially-breaking") in by_rule  # then the tag
    assert ("PROPERTY_REMOVED", "compatible") in by_rule  # then the category
    assert not [e for e in found if e["rule"] == "DEPRECATED"]  # off
    assert [e for e in entries() if e["rule"] == "DEPRECATED"]
    code, out, _ = run(*STEP, cwd=config)
    assert code == 1 and "re-levelled" in out


def test_config_fail_on_is_the_default_and_the_option_wins(tmp_path: Path) -> None:
    config = write(tmp_path, 'fail-on = "never"\n')
    assert run(*STEP, cwd=config)[0] == 0
    assert run(*STEP, "--fail-on", "breaking", cwd=config)[0] == 1


def test_config_in_pyproject_and_its_ignores(tmp_path: Path) -> None:
    write(
        tmp_path,
        '[project]\nname = "x"\n\n[tool.mcpbind.diff]\nfail-on = "breaking"\n\n'
        '[[tool.mcpbind.diff.ignore]]\nrule = "*"\npath = "*"\nreason = "all accepted"\n',
        "pyproject.toml",
    )
    code, out, _ = run(*STEP, "--format", "json", cwd=tmp_path)
    assert code == 0 and json.loads(out)["entries"] == []


def test_a_pyproject_without_the_table_is_no_config(tmp_path: Path) -> None:
    write(tmp_path, '[project]\nname = "x"\n', "pyproject.toml")
    assert run(*STEP, cwd=tmp_path)[0] == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[severity]\nMAXIMUM_DECREASD = "error"\n', "did you mean 'MAXIMUM_DECREASED'?"),
        ('[severity]\n"area:constrant" = "off"\n', "did you mean 'area:constraint'?"),
        ('[severity]\nMAXIMUM_DECREASED = "fatal"\n', "level 'fatal' is not one of"),
        ('fail_on = "never"\n', "unknown key 'fail_on'; did you mean 'fail-on'?"),
        ('fail-on = "sometimes"\n', "fail-on must be one of"),
        ('[[ignore]]\nrule = "NOPE"\npath = "x"\nreason = "r"\n', "unknown rule or tag 'NOPE'"),
        ("severity = [", "not valid TOML"),
    ],
)
def test_a_bad_config_is_one_line_and_exit_2(tmp_path: Path, text: str, message: str) -> None:
    code, _, err = run(*STEP, cwd=write(tmp_path, text))
    assert code == 2, err
    assert message in err and len(err.strip().splitlines()) == 1


def test_an_explicit_config_path(tmp_path: Path) -> None:
    path = tmp_path / "ci.toml"
    path.write_text('fail-on = "never"\n')
    assert run(*STEP, "--config", str(path))[0] == 0
    assert run(*STEP, "--config", str(tmp_path / "missing.toml"))[0] == 2


def test_every_tag_value_selects_something() -> None:
    for tags in TAGS.values():
        for label in tags.labels():
            assert resolve(label)
    for name in CATEGORIES:
        assert resolve(name), name
    # the origin selectors name every rule; a change's origin says whether it is selected
    assert select("extension") == select("area:extension") == Selection(frozenset(Rule), "*")
    assert select("extension:tasks") == Selection(frozenset(Rule), "tasks")
    assert select("extension:tasks@2026-05-22").origin == "tasks@2026-05-22"
    assert select("MAXIMUM_*").origin is None
    assert all("extension" not in categories_of(rule) for rule in Rule)
    assert "extension" in categories_of(Rule.METHOD_ADDED, "tasks@2026-08-21")


def test_the_rules_page_documents_every_category_and_tag() -> None:
    page = (Path(__file__).resolve().parents[3] / "docs" / "diff-rules.md").read_text()
    for name in CATEGORIES:
        assert f"| `{name}` |" in page, name
    for enum in (Direction, Area, Kind, Action):
        for value in enum:
            assert f"`{value.value}`" in page, value
