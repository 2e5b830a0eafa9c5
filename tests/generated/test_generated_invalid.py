"""Invalid messages are rejected, with errors that point at the fault.

Each test first checks that the unmutated message is valid, so a rejection is due to the mutation.
"""

from __future__ import annotations

from typing import Any

import pytest
from generated_helpers import (
    REVISIONS,
    adapter_of,
    call_tool_params,
    call_tool_request,
    definitions,
    has_property,
)
from mcpbind.codegen.ir.refs import const_of, union_members
from pydantic import ValidationError

JSONRPC_REQUEST_REVISIONS = [r for r in REVISIONS if has_property(r, "CallToolRequest", "jsonrpc")]


def errors_of(revision: str, name: str, instance: Any) -> list[dict[str, Any]]:
    """The validation errors of ``instance``; fails the test if it is accepted."""
    with pytest.raises(ValidationError) as caught:
        adapter_of(revision, name).validate_python(instance)
    return [dict(e) for e in caught.value.errors()]


def accepts(revision: str, name: str, instance: Any) -> None:
    adapter_of(revision, name).validate_python(instance)


@pytest.mark.parametrize("revision", REVISIONS)
def test_jsonrpc_request_wrong_version(revision: str) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accepts(revision, "JSONRPCRequest", message)
    errors = errors_of(revision, "JSONRPCRequest", {**message, "jsonrpc": "1.0"})
    assert [(e["type"], e["loc"]) for e in errors] == [("literal_error", ("jsonrpc",))]


@pytest.mark.parametrize("revision", JSONRPC_REQUEST_REVISIONS)
@pytest.mark.parametrize("name", ["CallToolRequest", "ClientRequest"])
def test_request_wrong_version(revision: str, name: str) -> None:
    """From 2025-11-25 on, each request carries ``jsonrpc`` itself; the union reports it once."""
    request = call_tool_request(revision)
    accepts(revision, name, request)
    errors = errors_of(revision, name, {**request, "jsonrpc": "1.0"})
    assert len(errors) == 1, errors
    assert errors[0]["type"] == "literal_error"
    assert errors[0]["loc"][-1] == "jsonrpc"


@pytest.mark.parametrize("revision", REVISIONS)
def test_request_method_of_another_request(revision: str) -> None:
    request = call_tool_request(revision)
    accepts(revision, "CallToolRequest", request)
    errors = errors_of(revision, "CallToolRequest", {**request, "method": "tools/list"})
    assert [(e["type"], e["loc"]) for e in errors] == [("literal_error", ("method",))]


@pytest.mark.parametrize("revision", REVISIONS)
def test_client_request_with_a_server_method_gives_one_error(revision: str) -> None:
    """``sampling/createMessage`` is a server-to-client request: not a ClientRequest member."""
    request = call_tool_request(revision)
    accepts(revision, "ClientRequest", request)
    errors = errors_of(revision, "ClientRequest", {**request, "method": "sampling/createMessage"})
    assert len(errors) == 1, errors
    assert errors[0]["type"] == "union_tag_invalid"
    assert errors[0]["ctx"]["discriminator"] == "'method'"
    assert errors[0]["ctx"]["tag"] == "sampling/createMessage"


@pytest.mark.parametrize("revision", REVISIONS)
def test_call_tool_params_without_name(revision: str) -> None:
    params = call_tool_params(revision)
    accepts(revision, "CallToolRequestParams", params)
    del params["name"]
    errors = errors_of(revision, "CallToolRequestParams", params)
    assert [(e["type"], e["loc"]) for e in errors] == [("missing", ("name",))]


@pytest.mark.parametrize("revision", REVISIONS)
def test_tool_without_input_schema(revision: str) -> None:
    accepts(revision, "Tool", {"name": "t", "inputSchema": {"type": "object"}})
    errors = errors_of(revision, "Tool", {"name": "t"})
    assert [(e["type"], e["loc"]) for e in errors] == [("missing", ("inputSchema",))]


@pytest.mark.parametrize("revision", REVISIONS)
def test_progress_of_wrong_type(revision: str) -> None:
    params = {"progressToken": "t", "progress": 0.5}
    accepts(revision, "ProgressNotificationParams", params)
    errors = errors_of(revision, "ProgressNotificationParams", {**params, "progress": "x"})
    assert errors
    assert all(e["loc"][0] == "progress" for e in errors), errors


@pytest.mark.parametrize("revision", REVISIONS)
def test_content_of_unknown_type_gives_one_error(revision: str) -> None:
    """The content union is discriminated by ``type``: one error, not one per content kind."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": "hi"}]}
    if "resultType" in definitions(revision)["CallToolResult"].schema.get("required", []):
        result["resultType"] = "complete"
    accepts(revision, "CallToolResult", result)
    errors = errors_of(revision, "CallToolResult", {**result, "content": [{"type": "video"}]})
    assert len(errors) == 1, errors
    assert errors[0]["type"] == "union_tag_invalid"
    assert errors[0]["loc"] == ("content", 0)
    assert errors[0]["ctx"]["discriminator"] == "'type'"


@pytest.mark.parametrize("revision", [r for r in REVISIONS if "ContentBlock" in definitions(r)])
def test_content_block_errors_name_the_member(revision: str) -> None:
    accepts(revision, "ContentBlock", {"type": "text", "text": "hi"})
    errors = errors_of(revision, "ContentBlock", {"type": "text"})
    assert [(e["type"], e["loc"]) for e in errors] == [("missing", ("text", "text"))]
    errors = errors_of(revision, "ContentBlock", {"type": "video"})
    assert [e["type"] for e in errors] == ["union_tag_invalid"]


def _discriminable_unions() -> list[tuple[str, str, str]]:
    """(revision, union, property) for every union whose members all require a distinct constant
    ``method`` or ``type``: the generator promises a discriminator for exactly these."""
    found = []
    for revision in REVISIONS:
        defs = definitions(revision)
        for name, definition in defs.items():
            members = union_members(definition.schema)
            if len(members) < 2:
                continue
            for prop in ("method", "type"):
                tags = [const_of(defs[m].schema, prop) for m in members]
                required = all(prop in defs[m].schema.get("required", []) for m in members)
                if (
                    required
                    and all(isinstance(t, str) for t in tags)
                    and len(set(tags)) == len(tags)
                ):
                    found.append((revision, name, prop))
                    break
    return found


UNIONS = _discriminable_unions()


def test_discriminable_unions_are_found() -> None:
    names = {name for _, name, _ in UNIONS}
    assert {"ClientRequest", "ServerRequest", "ClientNotification", "ContentBlock"} <= names


@pytest.mark.parametrize(
    ("revision", "name", "prop"), UNIONS, ids=[f"{r}-{n}" for r, n, _ in UNIONS]
)
def test_union_with_unknown_tag_gives_one_error(revision: str, name: str, prop: str) -> None:
    errors = errors_of(revision, name, {prop: "no/such-tag"})
    assert len(errors) == 1, errors
    assert errors[0]["type"] == "union_tag_invalid"
    assert errors[0]["ctx"]["discriminator"] == repr(prop)
