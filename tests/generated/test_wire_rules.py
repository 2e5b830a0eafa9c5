"""The generated models never send what the schema forbids, and refuse what it refuses.

Each rule is checked in every revision where it applies: ``None`` in an optional field the schema
does not let be ``null`` is not written (a ``null`` it allows is); scalars are strict (no
``"true"`` for a boolean, no ``true`` for an id or a progress token); JSON Schema's ``integer`` is
any number without a fraction, of any size, and stays exact; unions are decided by their
discriminators; constants are required when parsing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from generated_helpers import (
    REVISIONS,
    adapter_of,
    call_tool_request,
    canonical,
    class_of,
    definitions,
    round_trip,
    schema_errors,
    types_of,
)
from mcpbind.codegen.emit.absent import admits_null
from mcpbind.generated import v2026_07_28
from mcpbind.runtime.core.bindings import adapter
from mcpbind.runtime.core.jsonrpc import decode, encode
from pydantic import BaseModel, TypeAdapter, ValidationError

DUMP: dict[str, Any] = {"mode": "json", "by_alias": True, "exclude_unset": True}
STATELESS = "2026-07-28"
BIG = [2**63, 2**64, 2**70, -(2**64) - 1, 10**30]


def dump(value: BaseModel) -> Any:
    return value.model_dump(**DUMP)


# --- None and null ---------------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_explicit_none_is_left_out(revision: str) -> None:
    types = types_of(revision)
    tool = types.Tool(name="t", inputSchema={"type": "object"}, description=None)
    assert dump(tool) == {"name": "t", "inputSchema": {"type": "object"}}
    # Not only with exclude_unset: a plain dump writes no null for an absent optional field.
    assert "description" not in tool.model_dump(mode="json", by_alias=True)
    assert json.loads(tool.model_dump_json(by_alias=True)) == {
        "name": "t",
        "inputSchema": {"type": "object"},
    }


def _nullable_optional(revision: str) -> list[tuple[str, str]]:
    defs = {name: d.schema for name, d in definitions(revision).items()}
    return [
        (name, prop)
        for name, schema in defs.items()
        for prop, node in schema.get("properties", {}).items()
        if prop not in schema.get("required", []) and admits_null(node, defs)
    ]


@pytest.mark.parametrize("revision", REVISIONS)
def test_null_the_schema_allows_is_kept(revision: str) -> None:
    """``Error.data`` (and 2026-07-28's ``structuredContent``) may be null: an explicit None is data."""
    found = _nullable_optional(revision)
    assert any(prop == "data" for _, prop in found)
    for name, prop in found:
        cls = class_of(revision, name)
        field = next(f for f, info in cls.model_fields.items() if (info.alias or f) == prop)
        assert cls.model_fields[field].exclude_if is None, (name, prop)
    error = adapter_of(
        revision,
        "JSONRPCError" if "JSONRPCError" in definitions(revision) else "JSONRPCErrorResponse",
    )
    wire = {"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "m", "data": None}}
    assert canonical(dump(error.validate_python(wire))) == canonical(wire)


def test_nullable_structured_content_keeps_null() -> None:
    result = {"resultType": "complete", "content": [], "structuredContent": None}
    assert round_trip(STATELESS, "CallToolResult", result) == result


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_null_for_an_absent_field_is_read_as_absent(revision: str) -> None:
    """Peers that write ``null`` for an absent field are understood, and it is not sent back."""
    tool = {"name": "t", "inputSchema": {"type": "object"}, "description": None}
    assert round_trip(revision, "Tool", tool) == {"name": "t", "inputSchema": {"type": "object"}}


# --- strict scalars --------------------------------------------------------------------------------


def _result(revision: str, **fields: Any) -> dict[str, Any]:
    if "resultType" in definitions(revision)["CallToolResult"].schema.get("properties", {}):
        fields["resultType"] = "complete"
    return fields


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("value", ["true", 1, 0, "yes"])
def test_no_coercion_to_bool(revision: str, value: Any) -> None:
    with pytest.raises(ValidationError):
        adapter_of(revision, "CallToolResult").validate_python(
            _result(revision, content=[], isError=value)
        )


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("name", ["RequestId", "ProgressToken"])
@pytest.mark.parametrize("value", [True, False, 1.5, "1".encode(), None, [1]])
def test_ids_and_tokens_are_exactly_string_or_integer(revision: str, name: str, value: Any) -> None:
    with pytest.raises(ValidationError):
        adapter_of(revision, name).validate_python(value)
    request = call_tool_request(revision)
    if "id" in request:
        with pytest.raises(ValidationError):
            adapter_of(revision, "CallToolRequest").validate_python({**request, "id": value})


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("value", ["abc", 7, -3, *BIG])
def test_ids_round_trip_exactly(revision: str, value: Any) -> None:
    parsed = adapter_of(revision, "RequestId").validate_python(value)
    assert parsed == value and type(parsed) is type(value)
    request = call_tool_request(revision)
    if "id" in request:
        request["id"] = value
        assert round_trip(revision, "CallToolRequest", request) == request


@pytest.mark.parametrize("revision", REVISIONS)
def test_integer_is_any_number_without_a_fraction(revision: str) -> None:
    """JSON Schema (draft-07 and 2020-12): an integer is a number with a zero fractional part, so
    ``1e20`` is one; it becomes the ``int`` it equals, and big integers never become floats."""
    ids = adapter_of(revision, "RequestId")
    assert ids.validate_json("1e20") == 10**20 and type(ids.validate_json("1e20")) is int
    assert ids.validate_python(3.0) == 3
    assert ids.validate_json(str(2**80)) == 2**80
    for bad in ("1.5", "1e400", "true", "[1]"):
        with pytest.raises(ValidationError):
            ids.validate_json(bad)
    error = adapter_of(
        revision, "Error" if "Error" in definitions(revision) else "JSONRPCErrorError"
    )
    assert error.validate_python({"code": 1e20, "message": "m"}).code == 10**20
    assert schema_errors(revision, "RequestId", 10**20) == []


@pytest.mark.parametrize("revision", REVISIONS)
def test_number_keeps_integers_and_refuses_what_json_lacks(revision: str) -> None:
    params = adapter_of(revision, "ProgressNotificationParams")
    for progress in (50, 2.5, 2**70):
        value = params.validate_python({"progressToken": "t", "progress": progress})
        assert value.progress == progress and type(value.progress) is type(progress)
    for bad in (True, "50", float("inf"), float("nan")):
        with pytest.raises(ValidationError):
            params.validate_python({"progressToken": "t", "progress": bad})


def test_big_integers_survive_the_wire() -> None:
    """The runtime's codec: orjson reads integers beyond 64 bits as floats and cannot write them."""
    for value in BIG:
        message = {"jsonrpc": "2.0", "id": value, "result": {}}
        frame = encode(message)
        assert str(value).encode() in frame
        assert decode(frame) == message and type(decode(frame)["id"]) is int
        assert decode(frame.decode()) == message
    assert decode(b'{"a": 1e20, "b": "12345678901234567890123"}') == {
        "a": 1e20,
        "b": "12345678901234567890123",
    }
    assert type(decode(b"[NaN]")).__name__ == "Malformed"
    assert type(decode(b"[NaN, 12345678901234567890123]")).__name__ == "Malformed"


# --- constants and unions --------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_constants_are_required_when_parsing_and_default_when_built(revision: str) -> None:
    types = types_of(revision)
    with pytest.raises(ValidationError):
        types.TextContent.model_validate({"text": "x"})
    assert dump(types.TextContent(text="x")) == {"type": "text", "text": "x"}
    with pytest.raises(ValidationError):
        adapter_of(revision, "Tool").validate_python({"name": "t", "inputSchema": {}})


@pytest.mark.parametrize("revision", REVISIONS)
def test_server_result_adds_nothing_to_a_tool_input_schema(revision: str) -> None:
    """Not a valid ListToolsResult (``inputSchema`` lacks ``type``), but a valid plain Result:
    the union must keep it as it is, not complete it into a ListToolsResult."""
    result = _result(revision, tools=[{"name": "x", "inputSchema": {}}])
    if revision == STATELESS:
        result.update(ttlMs=0, cacheScope="private")
    assert round_trip(revision, "ServerResult", result) == result


def test_tool_call_results_are_decided_by_result_type() -> None:
    envelope = adapter_of(STATELESS, "CallToolResultResponse")
    table = v2026_07_28.methods.TOOLS_CALL.result_type
    for validate in (
        lambda r: envelope.validate_python({"jsonrpc": "2.0", "id": 1, "result": r}).result,
        adapter(table).validate_python,
        TypeAdapter(table).validate_python,
    ):
        with pytest.raises(ValidationError):
            validate({"resultType": "complete"})
        with pytest.raises(ValidationError):
            validate({"resultType": "something_else", "content": []})
        assert (
            type(validate({"resultType": "complete", "content": []})).__name__ == "CallToolResult"
        )
        asked = validate({"resultType": "input_required", "requestState": "s"})
        assert type(asked).__name__ == "InputRequiredResult"
    errors = envelope.validate_python
    with pytest.raises(ValidationError) as caught:
        errors({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}})
    assert [e["loc"] for e in caught.value.errors()] == [("result", "complete", "content")]


def test_requests_and_content_are_discriminated() -> None:
    types = types_of("2025-11-25")
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(types.ContentBlock).validate_python({"type": "image", "data": "x"})
    assert {e["loc"][0] for e in caught.value.errors()} == {"image"}
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(types.ClientRequest).validate_python({"method": "tools/call", "jsonrpc": "2.0"})
    assert {e["loc"][0] for e in caught.value.errors()} == {"tools/call"}


# --- fix-ups ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25", "2026-07-28"])
def test_elicit_result_content_accepts_fractions(revision: str) -> None:
    result = {"action": "accept", "content": {"t": 2.5, "n": 3, "s": "x", "b": True}}
    assert round_trip(revision, "ElicitResult", result) == result
    assert schema_errors(revision, "ElicitResult", result) == []


# --- the 2026-07-28 stubs --------------------------------------------------------------------------


def test_stateless_server_stub_offers_only_what_a_server_sends() -> None:
    client = v2026_07_28.client
    asks = {"create_message", "elicit", "list_roots"}
    assert not asks & set(vars(client.ServerStub))
    assert asks <= set(vars(client.InputRequestStub))
    assert issubclass(client.InputRequestStub, client.ServerStub)
    sends = {n for n in vars(client.ServerStub) if not n.startswith("_")}
    assert sends and all(n.startswith("send_") for n in sends)


@pytest.mark.parametrize("revision", REVISIONS[:-1])
def test_handshake_server_stubs_still_send_requests(revision: str) -> None:
    client = types_of(revision).__name__.rsplit(".", 1)[0] + ".client"
    module = __import__(client, fromlist=["ServerStub"])
    assert "create_message" in vars(module.ServerStub)
    assert not hasattr(module, "InputRequestStub")
