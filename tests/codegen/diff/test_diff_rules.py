"""Each rule, triggered alone by a one-line change to a tiny schema, with its severity.

``things/get`` goes client -> server (its params are read by the server, its result by the
client); ``ping`` and ``notifications/progress`` go server -> client. So the same kind of change
is expected to hit clients in one place and servers in another.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from diff_mutations import (
    AUDIO,
    EXTRA,
    add_member,
    both,
    closed,
    del_prop,
    drop_member,
    props,
    require,
    set_prop,
    unrequire,
)
from diff_schema import Defs, Mutation, message, ref
from mcpbind.codegen.diff import RULE_DOCS, Change, Rule, Severity
from mcpbind.codegen.diff.rules import SURFACE_RULES
from mcpbind.codegen.diff.taxonomy import SPECS

C2S, S2C, BOTH = "client_to_server", "server_to_client", "both"
B, P, C = Severity.BREAKING, Severity.POTENTIALLY_BREAKING, Severity.COMPATIBLE


@dataclass(frozen=True)
class Case:
    id: str
    rule: Rule
    severity: Severity
    bindings: bool
    path: str
    direction: str | None
    affects: tuple[str, ...]
    new: Mutation
    old: Mutation | None = None
    incidental: frozenset[Rule] = field(default_factory=frozenset)


def rename_text_content(defs: Defs) -> None:
    defs["PlainTextContent"] = defs.pop("TextContent")
    defs["Content"]["anyOf"][0] = ref("PlainTextContent")


def result_envelope(defs: Defs) -> None:
    defs["OtherResult"] = {"type": "object", "properties": {"other": {"type": "string"}}}
    defs["ThingResultResponse"] = {
        "type": "object",
        "properties": {"result": {"anyOf": [ref("ThingResult"), ref("OtherResult")]}},
    }


def same_as_content(defs: Defs) -> None:
    defs["ContentBlock"] = {"anyOf": [ref("TextContent"), ref("ImageContent")]}
    props(defs, "ThingResult")["content"]["items"] = ref("ContentBlock")


ADDED = frozenset({Rule.DEFINITION_ADDED})
# A message union's member change is reported beside the method rule (compatible on the wire).
MEMBER_ADDED = frozenset({Rule.UNION_MEMBER_ADDED})
MEMBER_REMOVED = frozenset({Rule.UNION_MEMBER_REMOVED})

CASES = [
    Case(
        "method-added-gated",
        Rule.METHOD_ADDED,
        C,
        False,
        "things/list",
        C2S,
        (),
        add_member("ClientRequest", "ListThingsRequest", message("things/list")),
        incidental=ADDED | MEMBER_ADDED,
    ),
    Case(
        "method-added-ungated",
        Rule.METHOD_ADDED,
        P,
        False,
        "other/do",
        C2S,
        ("server",),
        add_member("ClientRequest", "OtherRequest", message("other/do")),
        incidental=ADDED | MEMBER_ADDED,
    ),
    Case(
        "method-removed",
        Rule.METHOD_REMOVED,
        B,
        True,
        "things/get",
        C2S,
        ("client",),
        drop_member("ClientRequest", "ThingRequest"),
        incidental=MEMBER_REMOVED,
    ),
    Case(
        "method-direction-added",
        Rule.METHOD_DIRECTION_ADDED,
        P,
        False,
        "ping",
        C2S,
        ("server",),
        lambda d: d["ClientRequest"]["anyOf"].append(ref("PingRequest")),
        incidental=MEMBER_ADDED,
    ),
    Case(
        "method-direction-removed",
        Rule.METHOD_DIRECTION_REMOVED,
        B,
        True,
        "ping",
        C2S,
        ("client",),
        lambda d: None,
        old=lambda d: d["ClientRequest"]["anyOf"].append(ref("PingRequest")),
        incidental=MEMBER_REMOVED,
    ),
    Case(
        "method-result-changed",
        Rule.METHOD_RESULT_CHANGED,
        P,
        True,
        "things/get",
        S2C,
        ("client",),
        result_envelope,
        incidental=ADDED,
    ),
    Case(
        "notification-added",
        Rule.NOTIFICATION_ADDED,
        C,
        False,
        "notifications/things/changed",
        S2C,
        (),
        add_member("ServerNotification", "ThingsChanged", message("notifications/things/changed")),
        incidental=ADDED | MEMBER_ADDED,
    ),
    Case(
        "notification-removed",
        Rule.NOTIFICATION_REMOVED,
        P,
        True,
        "notifications/progress",
        S2C,
        ("client",),
        drop_member("ServerNotification", "ProgressNotification"),
        incidental=MEMBER_REMOVED,
    ),
    Case(
        "notification-direction-added",
        Rule.NOTIFICATION_DIRECTION_ADDED,
        C,
        False,
        "notifications/progress",
        C2S,
        (),
        lambda d: d["ClientNotification"]["anyOf"].append(ref("ProgressNotification")),
        incidental=MEMBER_ADDED,
    ),
    Case(
        "notification-direction-removed",
        Rule.NOTIFICATION_DIRECTION_REMOVED,
        P,
        True,
        "notifications/progress",
        C2S,
        ("server",),
        lambda d: None,
        old=lambda d: d["ClientNotification"]["anyOf"].append(ref("ProgressNotification")),
        incidental=MEMBER_REMOVED,
    ),
    Case(
        "capability-added",
        Rule.CAPABILITY_ADDED,
        C,
        False,
        "ClientCapabilities.sampling",
        C2S,
        (),
        set_prop("ClientCapabilities", "sampling", {"type": "object"}),
    ),
    Case(
        "capability-removed",
        Rule.CAPABILITY_REMOVED,
        P,
        True,
        "ServerCapabilities.things",
        S2C,
        ("client",),
        del_prop("ServerCapabilities", "things"),
        incidental=frozenset({Rule.METHOD_CAPABILITY_CHANGED}),
    ),
    Case(
        "method-capability-changed",
        Rule.METHOD_CAPABILITY_CHANGED,
        P,
        False,
        "things/get",
        C2S,
        ("client", "server"),
        lambda d: d["ServerCapabilities"]["properties"].update(
            {"thing": d["ServerCapabilities"]["properties"].pop("things")}
        ),
        incidental=frozenset({Rule.CAPABILITY_ADDED, Rule.CAPABILITY_REMOVED}),
    ),
    Case(
        "server-request-removed",
        Rule.SERVER_REQUEST_REMOVED,
        B,
        True,
        "ping",
        S2C,
        ("server",),
        lambda d: d.update({"ServerRequest": {"anyOf": []}}),
        incidental=MEMBER_REMOVED,
    ),
    Case(
        "method-became-input-request",
        Rule.METHOD_BECAME_INPUT_REQUEST,
        B,
        True,
        "ping",
        S2C,
        ("client", "server"),
        lambda d: d.update(
            {"ServerRequest": {"anyOf": []}, "InputRequest": {"anyOf": [ref("PingRequest")]}}
        ),
        incidental=frozenset({Rule.DEFINITION_ADDED}) | MEMBER_REMOVED,
    ),
    Case(
        "method-became-request",
        Rule.METHOD_BECAME_REQUEST,
        B,
        True,
        "ping",
        S2C,
        ("client", "server"),
        lambda d: None,
        old=lambda d: d.update(
            {"ServerRequest": {"anyOf": []}, "InputRequest": {"anyOf": [ref("PingRequest")]}}
        ),
        incidental=frozenset({Rule.DEFINITION_REMOVED}) | MEMBER_ADDED,
    ),
    Case(
        "definition-added",
        Rule.DEFINITION_ADDED,
        C,
        False,
        "Extra",
        None,
        (),
        lambda d: d.update(Extra=EXTRA),
    ),
    Case(
        "definition-removed",
        Rule.DEFINITION_REMOVED,
        C,
        True,
        "Extra",
        None,
        (),
        lambda d: None,
        old=lambda d: d.update(Extra=EXTRA),
    ),
    Case(
        "definition-renamed",
        Rule.DEFINITION_RENAMED,
        C,
        True,
        "PlainTextContent",
        S2C,
        (),
        rename_text_content,
    ),
    Case(
        "optional-property-added",
        Rule.PROPERTY_ADDED,
        C,
        False,
        "ThingRequestParams.limit",
        C2S,
        (),
        set_prop("ThingRequestParams", "limit", {"type": "integer"}),
    ),
    Case(
        "required-property-added-to-params",
        Rule.PROPERTY_ADDED,
        B,
        True,
        "ThingRequestParams.limit",
        C2S,
        ("client",),
        both(
            set_prop("ThingRequestParams", "limit", {"type": "integer"}),
            require("ThingRequestParams", "limit"),
        ),
    ),
    Case(
        "optional-property-added-to-closed-object",
        Rule.PROPERTY_ADDED,
        P,
        False,
        "ThingResult.extra",
        S2C,
        ("client",),
        both(closed("ThingResult"), set_prop("ThingResult", "extra", {"type": "string"})),
        old=closed("ThingResult"),
    ),
    Case(
        "required-property-removed-from-result",
        Rule.PROPERTY_REMOVED,
        B,
        True,
        "ThingResult.value",
        S2C,
        ("client",),
        del_prop("ThingResult", "value"),
    ),
    Case(
        "optional-property-removed-from-result",
        Rule.PROPERTY_REMOVED,
        P,
        True,
        "ThingResult.note",
        S2C,
        ("client",),
        del_prop("ThingResult", "note"),
    ),
    Case(
        "property-now-required",
        Rule.PROPERTY_REQUIRED_ADDED,
        B,
        True,
        "ThingRequestParams.mode",
        C2S,
        ("client",),
        require("ThingRequestParams", "mode"),
    ),
    Case(
        "property-now-optional",
        Rule.PROPERTY_REQUIRED_REMOVED,
        P,
        True,
        "ThingResult.value",
        S2C,
        ("client",),
        unrequire("ThingResult", "value"),
    ),
    Case(
        "type-widened-in-params",
        Rule.TYPE_WIDENED,
        P,
        True,
        "ThingRequestParams.name",
        C2S,
        ("server",),
        set_prop("ThingRequestParams", "name", {"type": ["string", "integer"]}),
    ),
    Case(
        "type-narrowed-in-notification",
        Rule.TYPE_NARROWED,
        B,
        True,
        "ProgressNotificationParams.progress",
        S2C,
        ("server",),
        set_prop("ProgressNotificationParams", "progress", {"type": "integer"}),
    ),
    Case(
        "type-changed",
        Rule.TYPE_CHANGED,
        B,
        True,
        "ThingResult.value",
        S2C,
        ("client", "server"),
        set_prop("ThingResult", "value", {"type": "boolean"}),
    ),
    Case(
        "reference-changed-same-shape",
        Rule.REFERENCE_CHANGED,
        C,
        True,
        "ThingResult.content[]",
        S2C,
        (),
        same_as_content,
        incidental=ADDED,
    ),
    Case(
        "enum-value-added-to-result",
        Rule.ENUM_VALUE_ADDED,
        P,
        False,
        "ThingResult.kind",
        S2C,
        ("client",),
        set_prop("ThingResult", "kind", {"type": "string", "enum": ["x", "y", "z"]}),
    ),
    Case(
        "enum-value-added-to-params",
        Rule.ENUM_VALUE_ADDED,
        P,
        False,
        "ThingRequestParams.mode",
        C2S,
        ("server",),
        set_prop("ThingRequestParams", "mode", {"type": "string", "enum": ["fast", "slow", "x"]}),
    ),
    Case(
        "enum-value-removed-from-params",
        Rule.ENUM_VALUE_REMOVED,
        B,
        True,
        "ThingRequestParams.mode",
        C2S,
        ("client",),
        set_prop("ThingRequestParams", "mode", {"type": "string", "enum": ["fast"]}),
    ),
    Case(
        "const-changed",
        Rule.CONST_CHANGED,
        B,
        True,
        "TextContent.type",
        S2C,
        ("client", "server"),
        set_prop("TextContent", "type", {"const": "plain", "type": "string"}),
    ),
    Case(
        "union-member-added-to-result",
        Rule.UNION_MEMBER_ADDED,
        P,
        False,
        "Content",
        S2C,
        ("client",),
        add_member("Content", "AudioContent", AUDIO),
        incidental=ADDED,
    ),
    Case(
        "union-member-removed",
        Rule.UNION_MEMBER_REMOVED,
        B,
        True,
        "Content",
        S2C,
        ("server",),
        drop_member("Content", "ImageContent"),
    ),
    Case(
        "additional-properties-closed",
        Rule.ADDITIONAL_PROPERTIES_CLOSED,
        B,
        True,
        "ThingRequestParams",
        C2S,
        ("client",),
        closed("ThingRequestParams"),
    ),
    Case(
        "additional-properties-opened",
        Rule.ADDITIONAL_PROPERTIES_OPENED,
        P,
        False,
        "ThingRequestParams",
        C2S,
        ("server",),
        lambda d: None,
        old=closed("ThingRequestParams"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_fires_alone_with_its_severity(
    case: Case, diff_of: Callable[..., list[Change]]
) -> None:
    changes = diff_of(case.old, case.new)
    main = [c for c in changes if c.rule is case.rule]
    assert len(main) == 1, changes
    assert {c.rule for c in changes} - case.incidental - {case.rule} == set(), changes
    change = main[0]
    assert change.severity is case.severity, change
    assert change.bindings is case.bindings, change
    assert change.path == case.path, change
    assert change.direction == case.direction, change
    assert change.affects == case.affects, change


def test_every_rule_is_documented_and_covered() -> None:
    assert set(RULE_DOCS) == set(Rule)
    # Read from the documents, not the IR: covered in tests/codegen/test_diff_meaning.py.
    documents = {Rule.DEPRECATED, Rule.UNDEPRECATED, Rule.DIALECT_CHANGED}
    # A server's surface: test_diff_surface.py; descriptions: test_diff_change_details.py.
    covered = {c.rule for c in CASES} | {Rule.DESCRIPTION_CHANGED} | documents | SURFACE_RULES
    covered |= set(SPECS)  # the keyword families: test_diff_keywords.py
    assert covered == set(Rule)
