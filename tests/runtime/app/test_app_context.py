"""The ``Context`` of the app layer: progress, logging, and elicitation, sampling and roots
answered by a mcpbind ``Client``'s handlers in both protocol eras."""

from __future__ import annotations

from typing import Any

import pytest
from app_helpers import STATELESS, wire
from app_server import app
from mcpbind.generated import v2025_11_25, v2026_07_28
from mcpbind.runtime import Client, McpError, Session
from runtime_helpers import answering_client

pytestmark = pytest.mark.anyio


def types_of(version: str) -> Any:
    return (v2026_07_28 if version == STATELESS else v2025_11_25).types


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", STATELESS])
async def test_elicit_sample_and_roots_in_both_eras(version: str) -> None:
    client, asked = answering_client(app.memory_transport(), version)
    types = types_of(version)
    async with client:
        texts = []
        for tool in ("greet", "ask_llm", "roots"):
            result = await client.stub.call_tool(
                types.CallToolRequestParams(name=tool, arguments={"question": "capital?"})
            )
            assert not result.isError, result
            texts.append(result.content[0].text)
        structured = result.structuredContent
    assert texts == ["hello, Ada", "the model said: Paris", "file:///project"]
    assert structured == {"result": ["file:///project"]}
    assert asked == ["elicitation", "sampling", "roots"]


async def test_a_declined_elicitation_has_no_data() -> None:
    client = Client(app.memory_transport(), protocol_version="2025-11-25")
    types = v2025_11_25.types

    @client.handler(v2025_11_25.methods.ELICITATION_CREATE)
    async def decline(params: Any, context: Any) -> Any:
        assert params.requestedSchema.model_dump(exclude_unset=True) == {
            "type": "object",
            "properties": {"name": {"title": "Name", "type": "string"}},
            "required": ["name"],
        }
        return types.ElicitResult(action="decline")

    async with client:
        result = await client.stub.call_tool(types.CallToolRequestParams(name="greet"))
    assert result.content[0].text == "no name (decline)"


async def test_asking_what_the_client_cannot_answer() -> None:
    # Handshake era: a tool error the model can read.
    async with Client(app.memory_transport(), protocol_version="2025-11-25") as client:
        types = v2025_11_25.types
        result = await client.stub.call_tool(
            types.CallToolRequestParams(name="ask_llm", arguments={"question": "?"})
        )
    assert result.isError is True
    assert "sampling" in result.content[0].text
    # An older revision without elicitation at all.
    async with wire(app, "2025-03-26") as peer:
        old = await peer.call("greet")
    assert old["isError"] is True
    assert "not in protocol revision 2025-03-26" in old["content"][0]["text"]
    # Stateless era: the spec's missing-capability error.
    async with Client(app.memory_transport(), protocol_version=STATELESS) as client:
        types = v2026_07_28.types
        with pytest.raises(McpError) as raised:
            await client.stub.call_tool(
                types.CallToolRequestParams(name="ask_llm", arguments={"question": "?"})
            )
    assert raised.value.code == -32021


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25", STATELESS])
async def test_progress_is_reported_when_asked(version: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    types = types_of(version)
    async with Client(app.memory_transport(), protocol_version=version) as client:
        params = types.CallToolRequestParams(name="slow", arguments={"steps": 2})
        quiet = await client.stub.call_tool(params)
        loud = await client.stub.call_tool(params, {"progress": on_progress})
    assert quiet.content[0].text == loud.content[0].text == "done after 2"
    assert seen == [(1, 2, "step 1"), (2, 2, "step 2")]


async def test_handshake_logging_follows_set_level() -> None:
    messages: list[tuple[str, Any]] = []
    client = Client(app.memory_transport(), protocol_version="2025-11-25")
    types = v2025_11_25.types

    @client.notification_handler(v2025_11_25.methods.NOTIFICATIONS_MESSAGE)
    async def on_message(params: Any, session: Session) -> None:
        messages.append((params.level, params.data))

    async with client:
        assert "logging" in client.server_capabilities
        params = types.CallToolRequestParams(name="slow", arguments={"steps": 1})
        await client.stub.call_tool(params)
        await client.stub.set_level(types.SetLevelRequestParams(level="warning"))
        await client.stub.call_tool(params)
        await client.stub.set_level(types.SetLevelRequestParams(level="info"))
        await client.stub.call_tool(params)
        await client.ping()
    assert messages == [("info", "counted to 1"), ("info", "counted to 1")]


async def test_stateless_logging_only_when_the_request_asks() -> None:
    async def messages_of(peer: Any, **meta: Any) -> list[Any]:
        await peer.peer.send(
            {
                "jsonrpc": "2.0",
                "id": meta.pop("id"),
                "method": "tools/call",
                "params": {
                    "name": "slow",
                    "arguments": {"steps": 1},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": STATELESS,
                        "io.modelcontextprotocol/clientCapabilities": {},
                        **meta,
                    },
                },
            }
        )
        seen = []
        while True:
            message = await peer.peer.receive()
            if "id" in message and "method" not in message:
                assert message["result"]["content"][0]["text"] == "done after 1"
                return seen
            seen.append(message)

    async with wire(app, STATELESS) as peer:
        silent = await messages_of(peer, id=1)
        asked = await messages_of(peer, id=2, **{"io.modelcontextprotocol/logLevel": "debug"})
        above = await messages_of(peer, id=3, **{"io.modelcontextprotocol/logLevel": "error"})
    assert silent == [] and above == []
    assert asked == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": "counted to 1"},
        }
    ]
