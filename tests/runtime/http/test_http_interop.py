"""Interop with the official Python SDK over Streamable HTTP (and its legacy SSE), both ways."""

from __future__ import annotations

from typing import Any

import pytest
from httpkit import build_server
from mcp import ClientSession
from mcp.client.sse import sse_client as sdk_sse_client
from mcp.client.streamable_http import streamable_http_client as sdk_http_client
from mcp.server.mcpserver import Context, MCPServer
from mcpbind.generated.v2025_11_25 import types
from mcpbind.runtime import Client
from mcpbind.runtime.http import (
    LegacySSEServer,
    StreamableHTTPServer,
    serving,
    sse_client,
    streamable_http_client,
)

pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.timeout(60)]


def sdk_server() -> Any:
    server = MCPServer("official")

    @server.tool()
    async def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool()
    async def count(steps: int, ctx: Context) -> str:
        """Report progress, then answer."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps)
        return f"counted {steps}"

    return server


@pytest.mark.parametrize("stateless", [False, True])
async def test_official_client_against_our_server(stateless: bool) -> None:
    app = StreamableHTTPServer(build_server().serve, stateless=stateless)
    async with (
        serving(app) as base,
        sdk_http_client(f"{base}/mcp") as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        init = await session.initialize()
        assert init.server_info.name == "http-test"
        tools = await session.list_tools()
        assert [t.name for t in tools.tools] == ["echo", "progress", "ask_llm"]
        result = await session.call_tool("echo", {"text": "from sdk"})
        assert result.content[0].text == "from sdk"
        progressed = await session.call_tool("progress", {"steps": 2})
        assert progressed.content[0].text == "2 steps"


async def test_our_client_against_official_server() -> None:
    async with (
        serving(sdk_server().streamable_http_app()) as base,
        Client(streamable_http_client(f"{base}/mcp")) as client,
    ):
        assert client.revision == "2025-11-25"
        echoed = await client.stub.call_tool(
            types.CallToolRequestParams(name="echo", arguments={"text": "to sdk"})
        )
        assert echoed.content[0].text == "to sdk"
        updates: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            updates.append(progress)

        counted = await client.stub.call_tool(
            types.CallToolRequestParams(name="count", arguments={"steps": 3}),
            {"progress": on_progress},
        )
        assert counted.content[0].text == "counted 3"
        assert updates == [1, 2, 3]


async def test_our_client_against_official_stateless_json_server() -> None:
    app = sdk_server().streamable_http_app(stateless_http=True, json_response=True)
    async with serving(app) as base, Client(streamable_http_client(f"{base}/mcp")) as client:
        echoed = await client.stub.call_tool(
            types.CallToolRequestParams(name="echo", arguments={"text": "json"})
        )
        assert echoed.content[0].text == "json"


async def test_legacy_sse_both_ways() -> None:
    async with (
        serving(sdk_server().sse_app()) as base,
        Client(sse_client(f"{base}/sse"), protocol_version="2024-11-05") as client,
    ):
        echoed = await client.stub.call_tool(
            types.CallToolRequestParams(name="echo", arguments={"text": "old sdk"})
        )
        assert echoed.content[0].text == "old sdk"
    async with (
        serving(LegacySSEServer(build_server().serve)) as base,
        sdk_sse_client(f"{base}/sse") as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        result = await session.call_tool("echo", {"text": "legacy"})
        assert result.content[0].text == "legacy"
