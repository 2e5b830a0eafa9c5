"""The request metadata headers of 2026-07-28 Streamable HTTP: value encoding, the standard
headers of a message, and the ``x-mcp-header`` rules for tools (``streamable-http.md``)."""

from __future__ import annotations

import base64
import logging
from typing import Any

import pytest
from mcpbind.runtime.core.request_headers import (
    ToolHeaders,
    encode_value,
    standard_headers,
    tool_header_error,
)

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        # The spec's own table ("Encoding examples").
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        # Internal spaces are plain; a tab anywhere is a control character.
        ("us west 1", "us west 1"),
        ("a\tb", "=?base64?YQli?="),
        ("", ""),
    ],
)
def test_values_are_encoded_as_the_spec_says(value: str, encoded: str) -> None:
    assert encode_value(value) == encoded
    if encoded.startswith("=?base64?"):
        assert base64.b64decode(encoded[9:-2]).decode() == value


def test_standard_headers_follow_the_spec_table() -> None:
    def request(method: str, **params: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}

    assert standard_headers(request("tools/call", name="get_weather")) == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "get_weather",
    }
    uri = "file:///projects/my app/ü.json"
    assert standard_headers(request("resources/read", uri=uri))["Mcp-Name"] == encode_value(uri)
    assert standard_headers(request("prompts/get", name="p"))["Mcp-Name"] == "p"
    assert standard_headers(request("tools/list", name="not-a-name-source")) == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/list",
    }
    # Handshake-era messages (no _meta version) and responses get none.
    assert standard_headers({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) == {}
    assert standard_headers({"jsonrpc": "2.0", "id": 1, "result": {}}) == {}


def tool(name: str, properties: dict[str, Any], **schema: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": properties, **schema}}


def header(kind: Any, name: Any = "Region", **extra: Any) -> dict[str, Any]:
    return {"type": kind, "x-mcp-header": name, **extra}


@pytest.mark.parametrize(
    ("properties", "schema", "reason"),
    [
        ({"v": header("string", "")}, {}, "empty"),
        ({"v": header("string", 7)}, {}, "empty or not a string"),
        ({"v": header("string", "My Region")}, {}, "token"),
        ({"v": header("string", "Region:Primary")}, {}, "token"),
        ({"v": header("string", "Région")}, {}, "token"),
        ({"v": header("string", "Region\t1")}, {}, "token"),
        ({"v": header("string", "Region\r\n")}, {}, "token"),
        ({"v": header("object")}, {}, "not a string, integer or boolean"),
        ({"v": header("array", items={"type": "string"})}, {}, "not a string"),
        ({"v": header("null")}, {}, "not a string"),
        ({"v": header("number")}, {}, "not a string"),
        ({"v": {"x-mcp-header": "Region"}}, {}, "not a string"),
        ({"a": header("string"), "b": header("string")}, {}, "repeats"),
        ({"a": header("string", "MyField"), "b": header("string", "myfield")}, {}, "repeats"),
        ({"v": {"type": "array", "items": header("string")}}, {}, "not reachable"),
        ({"v": {"anyOf": [header("string")]}}, {}, "not reachable"),
        ({"v": {"$ref": "#/$defs/r"}}, {"$defs": {"r": header("string")}}, "not reachable"),
        ({}, {"x-mcp-header": "Root"}, "not reachable"),
    ],
)
def test_invalid_annotations_are_named(
    properties: dict[str, Any], schema: dict[str, Any], reason: str
) -> None:
    error = tool_header_error(tool("t", properties, **schema))
    assert error is not None and reason in error


def test_valid_annotations_pass() -> None:
    nested = {"type": "object", "properties": {"zone": header("integer", "Zone")}}
    fine = tool(
        "t",
        {
            "region": header("string"),
            "place": nested,
            "flag": header(["boolean", "null"], "Flag"),
            # A property literally named x-mcp-header, and the keyword inside a value, are data.
            "x-mcp-header": {"type": "string", "default": {"x-mcp-header": "Nope"}},
        },
    )
    assert tool_header_error(fine) is None
    assert tool_header_error({"name": "bare"}) is None


def test_tools_list_keeps_valid_tools_and_the_headers_of_a_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = ToolHeaders()
    nested = {"type": "object", "properties": {"zone": header("integer", "Zone")}}
    good = tool(
        "good",
        {
            "region": header("string"),
            "place": nested,
            "flag": header("boolean", "Flag"),
            "text": header("string", "Text"),
            "plain": {"type": "string"},
        },
    )
    bad = tool("bad", {"v": header("number")})
    result = {"tools": [good, bad], "resultType": "complete"}
    with caplog.at_level(logging.WARNING, "mcpbind.runtime.http"):
        kept = registry.learn(result)
    assert [t["name"] for t in kept["tools"]] == ["good"]
    assert result["tools"] == [good, bad], "the server's result is not changed in place"
    assert "'bad'" in caplog.text and "not a string, integer or boolean" in caplog.text

    def call(name: str, arguments: Any) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments, "_meta": META}
        return {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}

    arguments = {
        "region": "us-west1",
        "place": {"zone": 42},
        "flag": False,
        "text": " padded ",
        "plain": "x",
    }
    assert registry.headers_for(call("good", arguments)) == {
        "Mcp-Param-Region": "us-west1",
        "Mcp-Param-Zone": "42",
        "Mcp-Param-Flag": "false",
        "Mcp-Param-Text": "=?base64?IHBhZGRlZCA=?=",
    }
    # Null or absent values: no header; unknown tools and other methods: none at all.
    assert registry.headers_for(call("good", {"region": None, "flag": True})) == {
        "Mcp-Param-Flag": "true"
    }
    assert registry.headers_for(call("bad", {"v": 1.5})) == {}
    assert registry.headers_for({"method": "tools/list", "params": {"name": "good"}}) == {}
    # A later listing that makes the tool invalid forgets its annotations.
    registry.learn({"tools": [tool("good", {"v": header("number")})]})
    assert registry.headers_for(call("good", arguments)) == {}
