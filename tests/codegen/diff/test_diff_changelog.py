"""The schema-visible items of each revision's changelog, as ``mcpbind diff`` reports them.

One test per consecutive pair of pinned revisions; each expectation cites the changelog item it
comes from (``schema/<rev>/changelog.md``).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from mcpbind.codegen.diff import Change, Rule, Severity, diff_revisions
from mcpbind.codegen.ir import RevisionIR, build_ir
from mcpbind.codegen.load import load_file

B, P, C = Severity.BREAKING, Severity.POTENTIALLY_BREAKING, Severity.COMPATIBLE


@pytest.fixture(scope="module")
def steps(irs: dict[str, RevisionIR]) -> dict[str, list[Change]]:
    """Changes of each revision against its predecessor, keyed by the newer revision."""
    revs = list(irs)
    return {new: diff_revisions(irs[old], irs[new]) for old, new in itertools.pairwise(revs)}


def one(changes: list[Change], rule: Rule, path: str, severity: Severity) -> Change:
    found = [c for c in changes if c.rule is rule and c.path == path]
    assert len(found) == 1, (rule, path, [c for c in changes if c.path == path])
    assert found[0].severity is severity, found[0]
    return found[0]


def test_2025_03_26(steps: dict[str, list[Change]]) -> None:
    changes = steps["2025-03-26"]
    # JSON-RPC batching added: a receiver may now get an array.
    batch = [c for c in changes if c.rule is Rule.UNION_MEMBER_ADDED and c.path == "JSONRPCMessage"]
    assert len(batch) == 2 and all(c.severity is P and c.direction == "both" for c in batch)
    one(changes, Rule.DEFINITION_ADDED, "JSONRPCBatchRequest", C)
    # Tool annotations.
    one(changes, Rule.PROPERTY_ADDED, "Tool.annotations", C)
    one(changes, Rule.DEFINITION_ADDED, "ToolAnnotations", C)
    # `message` on ProgressNotification.
    # (params is an inline object in both revisions: reported at its owner, not at the name
    # ProgressNotificationParams the generator invented for it)
    one(changes, Rule.PROPERTY_ADDED, "ProgressNotification.params.message", C)
    # Audio content joins text and image: clients switching on content types may not handle it.
    one(changes, Rule.DEFINITION_ADDED, "AudioContent", C)
    audio = one(changes, Rule.UNION_MEMBER_ADDED, "CallToolResult.content[]", P)
    assert audio.new == "AudioContent" and audio.affects == ("client",)
    sampled = one(changes, Rule.UNION_MEMBER_ADDED, "CreateMessageResult.content", P)
    assert sampled.affects == ("server",)
    # `completions` capability.
    one(changes, Rule.CAPABILITY_ADDED, "ServerCapabilities.completions", C)
    # Per-type annotation objects folded into one `Annotations`: same shape, new class.
    note = one(changes, Rule.REFERENCE_CHANGED, "TextContent.annotations", C)
    assert note.bindings and note.new == "Annotations"
    assert not [c for c in changes if c.severity is B]


def test_2025_06_18(steps: dict[str, list[Change]]) -> None:
    changes = steps["2025-06-18"]
    # 1. Batching removed: senders of batches are rejected; the batch classes are gone.
    batch = [
        c for c in changes if c.rule is Rule.UNION_MEMBER_REMOVED and c.path == "JSONRPCMessage"
    ]
    assert len(batch) == 2 and all(c.severity is B and c.bindings for c in batch)
    assert all(str(c.old).startswith("array[") for c in batch)
    for name in ("JSONRPCBatchRequest", "JSONRPCBatchResponse"):
        assert one(changes, Rule.DEFINITION_REMOVED, name, C).bindings
    # 2. Structured tool output.
    one(changes, Rule.PROPERTY_ADDED, "Tool.outputSchema", C)
    one(changes, Rule.PROPERTY_ADDED, "CallToolResult.structuredContent", C)
    # 6. Elicitation: a new server -> client method, gated by a new client capability.
    elicit = one(changes, Rule.METHOD_ADDED, "elicitation/create", C)
    assert elicit.direction == "server_to_client"
    one(changes, Rule.CAPABILITY_ADDED, "ClientCapabilities.elicitation", C)
    # 7. Resource links in tool results: content is now ContentBlock, which adds ResourceLink.
    link = one(changes, Rule.TYPE_WIDENED, "CallToolResult.content[]", P)
    assert "ResourceLink" in link.message and link.affects == ("client",)
    one(changes, Rule.DEFINITION_ADDED, "ResourceLink", C)
    # Other schema changes: `_meta` on more types, `context` on completions, `title` for display.
    one(changes, Rule.PROPERTY_ADDED, "Tool._meta", C)
    one(changes, Rule.PROPERTY_ADDED, "CompleteRequest.params.context", C)
    for name in (
        "Tool",
        "Resource",
        "ResourceTemplate",
        "Prompt",
        "PromptArgument",
        "Implementation",
    ):
        one(changes, Rule.PROPERTY_ADDED, f"{name}.title", C)
    # ResourceReference -> ResourceTemplateReference, same shape.
    renamed = one(changes, Rule.DEFINITION_RENAMED, "ResourceTemplateReference", C)
    assert (renamed.old, renamed.new, renamed.bindings) == (
        "ResourceReference",
        "ResourceTemplateReference",
        True,
    )


def test_2025_11_25(steps: dict[str, list[Change]]) -> None:
    changes = steps["2025-11-25"]
    # 9. Tasks: methods both ways, each gated by a capability; a status notification.
    for method in ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel"):
        added = [c for c in changes if c.rule is Rule.METHOD_ADDED and c.path == method]
        assert {c.direction for c in added} == {"client_to_server", "server_to_client"}
        assert all(c.severity is C for c in added)
    one(changes, Rule.CAPABILITY_ADDED, "ClientCapabilities.tasks", C)
    one(changes, Rule.CAPABILITY_ADDED, "ServerCapabilities.tasks", C)
    assert [c for c in changes if c.path == "notifications/tasks/status"]
    # 2. Icons.
    for name in ("Tool", "Resource", "ResourceTemplate", "Prompt", "Implementation"):
        one(changes, Rule.PROPERTY_ADDED, f"{name}.icons", C)
    one(changes, Rule.DEFINITION_ADDED, "Icon", C)
    # JSONRPCError -> JSONRPCErrorResponse (its `id` became optional for unparseable requests).
    renamed = one(changes, Rule.DEFINITION_RENAMED, "JSONRPCErrorResponse", C)
    assert renamed.old == "JSONRPCError" and renamed.bindings
    one(changes, Rule.PROPERTY_REQUIRED_REMOVED, "JSONRPCErrorResponse.id", P)
    # 6. URL mode elicitation: params are now a union with a URL member.
    url = one(changes, Rule.TYPE_WIDENED, "ElicitRequestParams", P)
    assert "ElicitRequestURLParams" in url.message and url.affects == ("client",)
    one(changes, Rule.CAPABILITY_ADDED, "ClientCapabilities.elicitation.url", C)
    one(changes, Rule.NOTIFICATION_ADDED, "notifications/elicitation/complete", C)
    # 7. Tool calling in sampling.
    one(changes, Rule.PROPERTY_ADDED, "CreateMessageRequestParams.tools", C)
    one(changes, Rule.PROPERTY_ADDED, "CreateMessageRequestParams.toolChoice", C)
    one(changes, Rule.CAPABILITY_ADDED, "ClientCapabilities.sampling.tools", C)
    # 5. Standards-based enum schemas; minor 9: defaults for primitive schemas.
    one(changes, Rule.TYPE_WIDENED, "EnumSchema", P)
    one(changes, Rule.PROPERTY_ADDED, "StringSchema.default", C)
    # Minor 2: `description` on Implementation.
    one(changes, Rule.PROPERTY_ADDED, "Implementation.description", C)
    # Requests now list the JSON-RPC envelope: a bindings change, not a wire change.
    envelope = one(changes, Rule.PROPERTY_ADDED, "CallToolRequest.id", C)
    assert envelope.bindings and "envelope" in envelope.message
    # Decoupled request payloads (SEP-1319): list requests take the shared PaginatedRequestParams.
    shared = one(changes, Rule.REFERENCE_CHANGED, "ListToolsRequest.params", C)
    assert shared.new == "PaginatedRequestParams"


def test_2026_07_28(steps: dict[str, list[Change]]) -> None:
    changes = steps["2026-07-28"]
    # 2. Stateless: the initialize handshake is gone.
    one(changes, Rule.METHOD_REMOVED, "initialize", B)
    one(changes, Rule.NOTIFICATION_REMOVED, "notifications/initialized", P)
    # 3. server/discover: every server must implement it, and no capability gates it.
    discover = one(changes, Rule.METHOD_ADDED, "server/discover", P)
    assert discover.affects == ("server",)
    # 4. subscriptions/listen replaces resources/subscribe and resources/unsubscribe.
    one(changes, Rule.METHOD_ADDED, "subscriptions/listen", P)
    one(changes, Rule.METHOD_REMOVED, "resources/subscribe", B)
    one(changes, Rule.METHOD_REMOVED, "resources/unsubscribe", B)
    # 5. ping, logging/setLevel and roots/list_changed removed (ping from servers: only servers
    # sending it break).
    one(changes, Rule.METHOD_REMOVED, "ping", B)
    assert one(changes, Rule.SERVER_REQUEST_REMOVED, "ping", B).affects == ("server",)
    one(changes, Rule.METHOD_REMOVED, "logging/setLevel", B)
    one(changes, Rule.NOTIFICATION_REMOVED, "notifications/roots/list_changed", P)
    # 6. Tasks leave the core protocol.
    one(changes, Rule.CAPABILITY_REMOVED, "ServerCapabilities.tasks", P)
    assert [c for c in changes if c.rule is Rule.METHOD_REMOVED and c.path == "tasks/list"]
    # 7. Multi round-trip requests: tools/call may answer with an InputRequiredResult.
    mrtr = one(changes, Rule.METHOD_RESULT_CHANGED, "tools/call", P)
    assert mrtr.new == ["CallToolResult", "InputRequiredResult"] and mrtr.affects == ("client",)
    # 8. Results carry a required resultType: servers written for 2025-11-25 do not send it.
    result_type = one(changes, Rule.PROPERTY_ADDED, "CallToolResult.resultType", B)
    assert result_type.affects == ("server",)
    # Every request carries protocol version and client capabilities in a required `_meta`.
    one(changes, Rule.PROPERTY_REQUIRED_ADDED, "CallToolRequestParams._meta", B)
    # Minor 1: `extensions` capability on both sides.
    one(changes, Rule.CAPABILITY_ADDED, "ClientCapabilities.extensions", C)
    one(changes, Rule.CAPABILITY_ADDED, "ServerCapabilities.extensions", C)
    # Minor 5: cacheable list results.
    one(changes, Rule.PROPERTY_ADDED, "ListToolsResult.ttlMs", B)
    one(changes, Rule.PROPERTY_ADDED, "ListToolsResult.cacheScope", B)
    # Minor 10: structuredContent may be any JSON value.
    one(changes, Rule.TYPE_WIDENED, "CallToolResult.structuredContent", P)
    # Minor 11: the elicitation completion notification and elicitationId are gone.
    one(changes, Rule.NOTIFICATION_REMOVED, "notifications/elicitation/complete", P)
    one(changes, Rule.PROPERTY_REMOVED, "ElicitRequestURLParams.elicitationId", B)
    # Minor 12: HeaderMismatchError added to the schema.
    one(changes, Rule.DEFINITION_ADDED, "HeaderMismatchError", C)


def test_same_revision_at_two_spec_commits(irs: dict[str, RevisionIR], release_day: Path) -> None:
    """2025-03-26 as released vs as pinned: templates/list was added to the unions later."""
    day = build_ir(load_file(release_day / "2025-03-26" / "schema.json", "2025-03-26"))
    changes = diff_revisions(day, irs["2025-03-26"])
    one(changes, Rule.METHOD_ADDED, "resources/templates/list", C)
    one(changes, Rule.PROPERTY_ADDED, "Resource.size", C)
