"""The shared model base: what ``exclude_unset`` dumps, and hashable method specs."""

from __future__ import annotations

from mcpbind.generated import v2025_11_25 as rev


def test_constants_count_as_set_so_a_built_message_is_complete() -> None:
    content = rev.types.TextContent(text="hi")
    assert content.model_dump(mode="json", exclude_unset=True) == {"type": "text", "text": "hi"}
    request = rev.types.PingRequest(id=1)
    assert request.model_dump(mode="json", exclude_unset=True) == {
        "id": 1,
        "jsonrpc": "2.0",
        "method": "ping",
    }


def test_explicit_null_survives_and_unset_optionals_stay_out() -> None:
    params = rev.types.CallToolRequestParams(name="t", arguments={"a": None, "b": 1.5})
    assert params.model_dump(mode="json", exclude_unset=True) == {
        "name": "t",
        "arguments": {"a": None, "b": 1.5},
    }


def test_parsed_message_round_trips_without_added_keys() -> None:
    wire = {"type": "text", "text": "x", "_meta": {"k": {}}, "extra": [1]}
    parsed = rev.types.TextContent.model_validate(wire)
    assert parsed.model_dump(mode="json", exclude_unset=True) == wire


def test_specs_are_hashable_and_know_their_revision() -> None:
    specs = {rev.methods.TOOLS_CALL, rev.methods.PING, rev.methods.NOTIFICATIONS_PROGRESS}
    assert len(specs) == 3
    assert rev.methods.TOOLS_CALL.revision == "2025-11-25"
    assert rev.methods.NOTIFICATIONS_PROGRESS.revision == "2025-11-25"
