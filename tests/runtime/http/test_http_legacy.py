"""The 2024-11-05 HTTP+SSE transport, and the client falling back to it from Streamable HTTP."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from httpkit import build_server
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, ConnectionClosedError, McpError, RequestContext
from mcpbind.runtime.http import (
    LegacySSEServer,
    StreamableHTTPServer,
    combined_app,
    serving,
    sse_client,
    streamable_http_client,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def with_sampling(client: Client) -> Client:
    @client.handler(methods.SAMPLING_CREATEMESSAGE)
    async def sample(
        params: types.CreateMessageRequestParams, context: RequestContext
    ) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", model="m", content=types.TextContent(text="legacy")
        )

    return client


async def test_legacy_round_trips_and_session_ends_with_the_stream() -> None:
    app = LegacySSEServer(build_server().serve)
    async with serving(app) as base:
        client = with_sampling(
            Client(
                sse_client(f"{base}/sse"),
                capabilities={"sampling": {}},
                protocol_version="2024-11-05",
            )
        )
        async with client:
            assert client.revision == "2024-11-05"
            assert len(app.sessions) == 1
            echoed = await client.stub.call_tool(
                types.CallToolRequestParams(name="echo", arguments={"text": "old"})
            )
            assert echoed.content[0].text == "old"
            asked = await client.stub.call_tool(types.CallToolRequestParams(name="ask_llm"))
            assert asked.content[0].text == "llm: legacy"
        with anyio.fail_after(5):
            while app.sessions:
                await anyio.sleep(0.02)


async def test_legacy_rejects_unknown_sessions_and_bad_bodies() -> None:
    app = LegacySSEServer(build_server().serve, max_body_bytes=1000)
    async with serving(app) as base, httpx.AsyncClient() as http:
        malformed = await http.post(
            f"{base}/messages/?session_id=nope", json={"jsonrpc": "2.0", "method": "x"}
        )
        assert malformed.status_code == 400
        assert malformed.json()["error"]["code"] == -32000
        unknown = await http.post(
            f"{base}/messages/?session_id={'0' * 32}", json={"jsonrpc": "2.0", "method": "x"}
        )
        assert unknown.status_code == 404
        assert unknown.json()["error"]["message"] == "Could not find session"
        async with http.stream("GET", f"{base}/sse") as stream:
            lines = stream.aiter_lines()
            assert await lines.__anext__() == "event: endpoint"
            endpoint = (await lines.__anext__()).removeprefix("data: ")
            assert endpoint.startswith("/messages/?session_id=")
            bad = await http.post(
                f"{base}{endpoint}", content=b"{nope", headers={"content-type": "application/json"}
            )
            assert bad.status_code == 400
            big = await http.post(
                f"{base}{endpoint}",
                content=b"[" + b"1," * 1000 + b"1]",
                headers={"content-type": "application/json"},
            )
            assert big.status_code == 413
            plain = await http.post(
                f"{base}{endpoint}",
                content=b'{"jsonrpc":"2.0","method":"x"}',
                headers={"content-type": "text/plain"},
            )
            assert plain.status_code == 415
            assert plain.json()["error"]["code"] == -32000
        evil = await http.get(f"{base}/sse", headers={"host": "evil.example"})
        assert evil.status_code == 403


async def test_client_falls_back_to_legacy_sse() -> None:
    """POST to a legacy-only server gets 405; the client then speaks HTTP+SSE at the same URL."""
    app = LegacySSEServer(build_server().serve)
    async with serving(app) as base:
        client = Client(streamable_http_client(f"{base}/sse", fallback_to_sse=True))
        async with client:
            echoed = await client.stub.call_tool(
                types.CallToolRequestParams(name="echo", arguments={"text": "fallback"})
            )
            assert echoed.content[0].text == "fallback"
            assert len(app.sessions) == 1
        with anyio.fail_after(5):
            while app.sessions:
                await anyio.sleep(0.02)


async def test_fallback_is_not_taken_for_a_streamable_server() -> None:
    streamable = StreamableHTTPServer(build_server().serve)
    legacy = LegacySSEServer(build_server().serve)
    async with serving(combined_app(streamable, legacy)) as base:
        async with Client(streamable_http_client(f"{base}/mcp", fallback_to_sse=True)) as client:
            await client.stub.list_tools()
            assert len(streamable.sessions) == 1 and legacy.sessions == {}
        async with Client(sse_client(f"{base}/sse")) as old:
            await old.stub.list_tools()
            assert len(legacy.sessions) == 1


async def test_fallback_failure_says_what_was_tried() -> None:
    async def nothing_here(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b"no"})

    async with serving(nothing_here, lifespan="off") as base:
        with pytest.raises(McpError) as failure:
            async with Client(streamable_http_client(f"{base}/mcp")):
                pass
    assert "HTTP 404" in failure.value.message and "HTTP+SSE" in failure.value.message


async def test_legacy_session_ends_when_the_server_drops_the_stream() -> None:
    app = LegacySSEServer(build_server().serve)
    async with serving(app) as base, Client(streamable_http_client(f"{base}/sse")) as client:
        await client.stub.list_tools()
        (session,) = app.sessions.values()
        session.outbox.close()
        with anyio.fail_after(5), pytest.raises((ConnectionClosedError, McpError)):
            while True:
                await client.stub.list_tools()
                await anyio.sleep(0.05)
