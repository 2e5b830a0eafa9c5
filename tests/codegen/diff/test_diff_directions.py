"""Who a change reaches: a definition both sides read, one no message carries, a message union
the schema collapsed into its only member, and a message union gaining a member (on the tiny
schema of ``diff_schema``, and on the pinned revisions).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from diff_mutations import AUDIO, EXTRA, add_member, both, set_prop
from diff_schema import Defs, message, ref
from mcpbind.codegen.diff import Change, Rule, Severity, diff_revisions

C = Severity.COMPATIBLE
P = Severity.POTENTIALLY_BREAKING
#: The direction of a definition both sides read.
BOTH = "both"


def test_a_definition_read_by_both_sides_is_judged_for_both(
    diff_of: Callable[..., list[Change]],
) -> None:
    shared = set_prop("ThingRequestParams", "hint", ref("Content"))
    [change] = [
        c
        for c in diff_of(shared, both(shared, add_member("Content", "AudioContent", AUDIO)))
        if c.rule is Rule.UNION_MEMBER_ADDED
    ]
    assert change.direction == BOTH
    assert change.affects == ("client", "server")
    assert "clients and servers reading it" in change.message


def test_a_definition_no_message_carries_breaks_nobody_on_the_wire(
    diff_of: Callable[..., list[Change]],
) -> None:
    def extra(defs: Defs) -> None:
        defs["Extra"] = copy.deepcopy(EXTRA)

    [change] = diff_of(extra, both(extra, set_prop("Extra", "x", {"type": "boolean"})))
    assert change.rule is Rule.TYPE_CHANGED and change.path == "Extra.x"
    assert change.severity is C and change.bindings and change.direction is None
    assert "no message carries it" in change.message


def test_a_union_the_schema_collapsed_into_its_only_member_keeps_its_direction(
    diff_of: Callable[..., list[Change]],
) -> None:
    """2026-07-28 emits ``ClientNotification = CancelledNotification`` as the member inlined."""

    def collapse(defs: Defs) -> None:
        defs["ClientNotification"] = copy.deepcopy(defs["InitializedNotification"])

    assert diff_of(None, collapse) == []


def test_a_message_union_gaining_a_member_is_reported_beside_the_method(
    diff_of: Callable[..., list[Change]],
) -> None:
    """2025-06-18's ServerRequest gained ElicitRequest: a reader of the bindings looks for the
    union change, the wire is judged once, by the method rule."""
    elicit = add_member("ServerRequest", "ElicitRequest", message("elicitation/create"))
    changes = diff_of(None, elicit)
    [method] = [c for c in changes if c.rule is Rule.METHOD_ADDED]
    [union] = [c for c in changes if c.rule is Rule.UNION_MEMBER_ADDED]
    assert method.path == "elicitation/create" and method.severity is P
    assert union.path == "ServerRequest" and union.new == "ElicitRequest"
    assert union.severity is C and union.affects == () and not union.bindings
    assert "'elicitation/create'" in union.message
    [gone] = [c for c in diff_of(elicit, None) if c.rule is Rule.UNION_MEMBER_REMOVED]
    assert gone.path == "ServerRequest" and gone.bindings and gone.severity is C


def test_the_pinned_server_request_union_gains_elicit_request(irs: dict[str, Any]) -> None:
    changes = diff_revisions(irs["2025-03-26"], irs["2025-06-18"])
    assert [(c.rule, c.new) for c in changes if c.path == "ServerRequest"] == [
        (Rule.UNION_MEMBER_ADDED, "ElicitRequest")
    ]
    assert any(c.rule is Rule.METHOD_ADDED and c.path == "elicitation/create" for c in changes)
