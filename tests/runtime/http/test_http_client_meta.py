"""The per-request ``_meta`` of our stateless-era client follows its capabilities.

The capabilities are worked out once per revision and kept (``Endpoint.capabilities_for``);
these tests change them every way a program can between two requests (in place, nested,
replaced whole, a handler registered) and read the ``_meta`` the transport really POSTed.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from mcpbind.generated import v2026_07_28
from mcpbind.generated.support import Direction
from mcpbind.runtime import Client, RequestContext, Server
from mcpbind.runtime.core.bindings import Bindings
from mcpbind.runtime.http import StreamableHTTPServer, serving, streamable_http_client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

types = v2026_07_28.types
methods = v2026_07_28.methods
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


def echo_server() -> StreamableHTTPServer:
    server = Server("meta")

    @server.handler(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, context: RequestContext) -> Any:
        return types.CallToolResult(content=[types.TextContent(text="ok")])

    return StreamableHTTPServer(server.serve)


async def test_meta_follows_every_change_to_the_capabilities() -> None:
    posted: list[Any] = []

    async def note(request: httpx.Request) -> None:
        if request.method == "POST":
            posted.append(json.loads(request.content))

    http = httpx.AsyncClient(event_hooks={"request": [note]}, timeout=10.0)
    params = types.CallToolRequestParams(name="echo", arguments={})

    async def sent_capabilities() -> Any:
        await client.stub.call_tool(params)
        return posted[-1]["params"]["_meta"][CAPABILITIES]

    async with serving(echo_server()) as base, http:
        transport = streamable_http_client(f"{base}/mcp", http_client=http)
        client = Client(transport, protocol_version="2026-07-28")
        async with client:
            assert await sent_capabilities() == {}
            assert await sent_capabilities() == {}  # kept: nothing changed
            client.extra_capabilities["experimental"] = {"a": {}}
            assert await sent_capabilities() == {"experimental": {"a": {}}}
            client.extra_capabilities["experimental"]["a"]["deep"] = True
            assert await sent_capabilities() == {"experimental": {"a": {"deep": True}}}
            client.extra_capabilities = {"experimental": {"b": {}}}
            assert await sent_capabilities() == {"experimental": {"b": {}}}

            @client.handler(methods.ROOTS_LIST)
            async def roots(params: Any, context: RequestContext) -> Any:
                return types.ListRootsResult(roots=[])

            got = await sent_capabilities()
            assert got["experimental"] == {"b": {}} and "roots" in got
            del client.extra_capabilities["experimental"]
            assert "experimental" not in await sent_capabilities()


def test_capabilities_are_kept_per_revision_until_they_change() -> None:
    server = Server("caps", capabilities={"logging": {}})
    bindings = Bindings.load("2025-11-25", Direction.SERVER_TO_CLIENT)
    first = server.capabilities_for(bindings)
    assert server.capabilities_for(bindings) is first
    version = server.capabilities_version
    server.extra_capabilities.setdefault("experimental", {})["x"] = {}
    assert server.capabilities_version > version
    assert server.capabilities_for(bindings) == {"logging": {}, "experimental": {"x": {}}}
    # What it returns is plain data, whatever was written into the watched dict.
    assert type(server.capabilities_for(bindings)["experimental"]) is dict
    server.extra_capabilities.pop("experimental")
    server.extra_capabilities.update(prompts={"listChanged": True})
    assert server.capabilities_for(bindings) == {"logging": {}, "prompts": {"listChanged": True}}
    server.extra_capabilities.clear()
    assert server.capabilities_for(bindings) == {}
