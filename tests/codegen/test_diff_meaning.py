"""``mcpbind diff`` reports changes of meaning: input requests, removed server requests, gates,
``@deprecated`` from ``schema.ts``, the dialect, and (``--raw``) upstream edits a fix-up hides.

Held-out checks: every changelog step is diffed with the documents read (dialect, schema.ts), and
the release-day schemas against today's show their real changes.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from mcpbind.codegen.diff import Change, Rule, Severity
from mcpbind.codegen.diff.command import build_report
from mcpbind.codegen.diff.documents import deprecations

B, P, C = Severity.BREAKING, Severity.POTENTIALLY_BREAKING, Severity.COMPATIBLE
STEPS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
EMBEDDED = ("elicitation/create", "roots/list", "sampling/createMessage")


def find(changes: list[Change], rule: Rule, path: str | None = None) -> list[Change]:
    return [c for c in changes if c.rule is rule and (path is None or c.path == path)]


@pytest.fixture(scope="module")
def stateless_step() -> list[Change]:
    return build_report("2025-11-25", "2026-07-28", raw=False, include_descriptions=False).changes


def test_server_requests_that_became_input_requests(stateless_step: list[Change]) -> None:
    became = find(stateless_step, Rule.METHOD_BECAME_INPUT_REQUEST)
    assert sorted(c.path for c in became) == sorted(EMBEDDED)
    for change in became:
        assert change.severity is B and change.affects == ("client", "server")
        assert (change.old, change.new) == ("request", "input request")
    # Not a compatible rename of the union they were read from.
    assert not find(stateless_step, Rule.DEFINITION_RENAMED, "InputRequest")


def test_and_back(tmp_path: Path) -> None:
    back = build_report("2026-07-28", "2025-11-25", raw=False, include_descriptions=False)
    became = find(back.changes, Rule.METHOD_BECAME_REQUEST)
    assert sorted(c.path for c in became) == sorted(EMBEDDED)
    assert {c.path for c in find(back.changes, Rule.UNDEPRECATED)} >= {"CreateMessageRequest"}


def test_removed_server_to_client_requests(stateless_step: list[Change]) -> None:
    removed = find(stateless_step, Rule.SERVER_REQUEST_REMOVED)
    assert sorted(c.path for c in removed) == [
        "ping",
        "tasks/cancel",
        "tasks/get",
        "tasks/list",
        "tasks/result",
    ]
    assert all(c.affects == ("server",) and c.severity is B for c in removed)
    # the client -> server half of ping is a plain removal
    assert [c.direction for c in find(stateless_step, Rule.METHOD_REMOVED, "ping")] == [
        "client_to_server"
    ]


def test_deprecations_are_read_from_schema_ts(stateless_step: list[Change]) -> None:
    marked = {c.path for c in find(stateless_step, Rule.DEPRECATED)}
    assert len(marked) == 21
    assert {
        "CreateMessageRequest",
        "ListRootsRequest",
        "ClientCapabilities.sampling",
        "ClientCapabilities.roots",
        "ServerCapabilities.logging",
        "LoggingMessageNotification",
        "CreateMessageRequestParams.includeContext",
    } <= marked
    assert all(c.severity is C and not c.bindings for c in find(stateless_step, Rule.DEPRECATED))


def test_deprecation_parser_on_members_and_declarations() -> None:
    source = """
/**
 * Old.
 * @deprecated use New
 */
export interface Old {
  /** @deprecated */
  a?: string;
  b: number;
  nested: {
    /** @deprecated not a member of Old */
    c?: string;
  };
}
/** fine */
export type New = Old | string;
"""
    assert deprecations(source) == {"Old", "Old.a"}


def test_a_change_of_the_gating_capability() -> None:
    changes = build_report("2024-11-05", "2025-03-26", False, False).changes
    [gate] = find(changes, Rule.METHOD_CAPABILITY_CHANGED)
    assert gate.path == "completion/complete" and (gate.old, gate.new) == (None, "completions")
    assert gate.severity is P


@pytest.mark.parametrize(("old", "new"), list(itertools.pairwise(STEPS)))
def test_every_step_reads_its_documents(old: str, new: str) -> None:
    """The changelog's schema items of each step are in test_diff_changelog; here what only the
    documents say: the 2020-12 dialect switch (2025-11-25) and 2026-07-28's deprecations."""
    report = build_report(old, new, raw=False, include_descriptions=False)
    dialect = find(report.changes, Rule.DIALECT_CHANGED)
    if new == "2025-11-25":
        [switch] = dialect
        assert switch.old == "http://json-schema.org/draft-07/schema#"
        assert switch.new == "https://json-schema.org/draft/2020-12/schema"
        assert "2020-12" in switch.message
    else:
        assert dialect == []
    assert bool(find(report.changes, Rule.DEPRECATED)) is (new == "2026-07-28")
    assert report.notes == []  # schema.ts found for both sides, pinned by ts_sha256
    assert set(report.fixups) == {old, new}


def test_fixups_are_listed_and_raw_shows_what_they_hide(release_day: Path) -> None:
    day = release_day / "2025-06-18" / "schema.json"
    patched = build_report(str(day), "2025-06-18", raw=False, include_descriptions=False)
    assert patched.changes == []  # the fix-up makes the two look alike...
    label = f"2025-06-18 ({day})"
    assert "number-schema-bounds-number" in patched.fixups[label]
    assert "number-schema-bounds-number" not in patched.fixups["2025-06-18"]
    raw = build_report(str(day), "2025-06-18", raw=True, include_descriptions=False)
    assert raw.fixups == {label: [], "2025-06-18": []}
    widened = find(raw.changes, Rule.TYPE_WIDENED)
    assert sorted(c.path for c in widened) == ["NumberSchema.maximum", "NumberSchema.minimum"]
    assert all((c.old, c.new) == ("integer", "number") for c in widened)


@pytest.mark.parametrize(
    ("revision", "expected"),
    [
        ("2024-11-05", set()),
        ("2025-03-26", {(Rule.METHOD_ADDED, "resources/templates/list")}),
        (
            "2025-06-18",
            {
                (Rule.TYPE_WIDENED, "NumberSchema.minimum"),
                (Rule.TYPE_WIDENED, "NumberSchema.maximum"),
            },
        ),
        (
            "2025-11-25",
            {(Rule.TYPE_WIDENED, "NumberSchema.default"), (Rule.NULLABLE_ADDED, "Task.ttl")},
        ),
        ("2026-07-28", {(Rule.DEFINITION_RENAMED, "SubscriptionsListenResultMetaObject")}),
    ],
)
def test_release_day_schemas_against_todays_raw(
    release_day: Path, revision: str, expected: set[tuple[Rule, str]]
) -> None:
    day = release_day / revision / "schema.json"
    report = build_report(str(day), revision, raw=True, include_descriptions=False)
    found = {(c.rule, c.path) for c in report.changes}
    assert expected <= found
    assert bool(found) is bool(expected)
