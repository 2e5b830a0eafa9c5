"""Our Streamable HTTP client against our Streamable HTTP server, over a real uvicorn."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from httpkit import (
    ACCEPT_BOTH,
    INITIALIZE,
    build_server,
    raw_initialize,
    session_headers,
    sse_messages,
)
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, ConnectionClosedError, McpError, RequestContext
from mcpbind.runtime.http import StreamableHTTPServer, serving, streamable_http_client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def make_client(url: str, **options: Any) -> tuple[Client, list[Any]]:
    """A client that answers sampling and records the notifications it gets."""
    client = Client(streamable_http_client(url, **options), capabilities={"sampling": {}})
    seen: list[Any] = []

    @client.handler(methods.SAMPLING_CREATEMESSAGE)
    async def sample(
        params: types.CreateMessageRequestParams, context: RequestContext
    ) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", model="m", content=types.TextContent(text="42")
        )

    @client.notification_handler(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)
    async def changed(params: Any, session: Any) -> None:
        seen.append("tools changed")

    return client, seen


async def exercise(client: Client, seen: list[Any], *, stateful: bool) -> None:
    """Every routing path: plain, progress before the answer, nested request, GET stream.

    A stateless server can make no request of the client (its answer would reach another
    session), nor use a GET stream.
    """
    stub = client.stub
    tools = await stub.list_tools()
    assert [t.name for t in tools.tools] == ["echo", "progress", "ask_llm"]
    echoed = await stub.call_tool(
        types.CallToolRequestParams(name="echo", arguments={"text": "hi"})
    )
    assert echoed.content[0].text == "hi"
    updates: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append(progress)

    done = await stub.call_tool(
        types.CallToolRequestParams(name="progress", arguments={"steps": 3}),
        {"progress": on_progress},
    )
    assert done.content[0].text == "3 steps"
    assert updates == [1, 2, 3]
    if not stateful:
        with pytest.raises(McpError):
            await stub.call_tool(types.CallToolRequestParams(name="ask_llm"))
        return
    answer = await stub.call_tool(types.CallToolRequestParams(name="ask_llm"))
    assert answer.content[0].text == "llm: 42"
    if stateful:
        with anyio.fail_after(5):
            while not seen:
                await stub.call_tool(types.CallToolRequestParams(name="broadcast"))
                await anyio.sleep(0.05)
        assert seen[0] == "tools changed"


async def test_stateful_round_trips() -> None:
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base:
        client, seen = make_client(f"{base}/mcp")
        async with client:
            assert client.revision == "2025-11-25"
            assert len(app.sessions) == 1
            await exercise(client, seen, stateful=True)
        with anyio.fail_after(5):
            while app.sessions:
                await anyio.sleep(0.01)


async def test_json_response_mode() -> None:
    app = StreamableHTTPServer(build_server().serve, json_response=True)
    async with serving(app) as base, httpx.AsyncClient() as http:
        session_id = await raw_initialize(http, f"{base}/mcp")
        response = await http.post(
            f"{base}/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "j"}},
            },
            headers=session_headers(session_id),
        )
        assert response.headers["content-type"] == "application/json"
        assert response.json()["result"]["content"][0]["text"] == "j"
        client, _ = make_client(f"{base}/mcp")
        async with client:
            result = await client.stub.call_tool(
                types.CallToolRequestParams(name="echo", arguments={"text": "x"})
            )
            assert result.content[0].text == "x"


async def test_stateless_mode() -> None:
    app = StreamableHTTPServer(build_server().serve, stateless=True)
    async with serving(app) as base:
        client, seen = make_client(f"{base}/mcp")
        async with client:
            await exercise(client, seen, stateful=False)
            assert app.sessions == {}
        async with httpx.AsyncClient() as http:
            get = await http.get(f"{base}/mcp", headers={"accept": "text/event-stream"})
            assert get.status_code == 405
            one_shot = await http.post(
                f"{base}/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={**ACCEPT_BOTH, "mcp-protocol-version": "2025-06-18"},
            )
            assert one_shot.status_code == 200
            assert "mcp-session-id" not in one_shot.headers
            assert one_shot.headers["content-type"] == "application/json"
            assert len(one_shot.json()["result"]["tools"]) == 3


async def test_stateless_app_needs_no_lifespan() -> None:
    """A stateless app works behind an ASGI server that never runs the lifespan."""
    app = StreamableHTTPServer(build_server().serve, stateless=True, json_response=True)
    async with serving(app, lifespan="off") as base, httpx.AsyncClient() as http:
        response = await http.post(
            f"{base}/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "s"}},
            },
            headers=ACCEPT_BOTH,
        )
        assert response.json()["result"]["content"][0]["text"] == "s"


async def test_dropped_stream_is_resumed_without_loss() -> None:
    """The server closes the POST stream mid-call; the client resumes with Last-Event-ID."""
    app = StreamableHTTPServer(build_server().serve, retry_ms=50)
    async with serving(app) as base:
        client, _ = make_client(f"{base}/mcp")
        async with client:
            updates: list[float] = []

            async def on_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                updates.append(progress)

            result = await client.stub.call_tool(
                types.CallToolRequestParams(
                    name="progress", arguments={"steps": 6, "drop": 2, "delay": 0.05}
                ),
                {"progress": on_progress},
            )
            assert result.content[0].text == "6 steps"
            assert updates == [1, 2, 3, 4, 5, 6]


async def test_client_disconnect_then_raw_resume() -> None:
    """A client that drops its POST stream gets the rest, response included, by GET."""
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base, httpx.AsyncClient(timeout=10) as http:
        url = f"{base}/mcp"
        session_id = await raw_initialize(http, url)
        call = {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {
                "name": "progress",
                "arguments": {"steps": 4, "delay": 0.1},
                "_meta": {"progressToken": "t"},
            },
        }
        last_id = None
        async with http.stream(
            "POST", url, json=call, headers=session_headers(session_id)
        ) as response:
            async for line in response.aiter_lines():
                if line.startswith("id: "):
                    last_id = line[4:]
                if line.startswith("data: {"):
                    break
        assert last_id is not None
        resumed = await http.get(
            url,
            headers={
                **session_headers(session_id),
                "accept": "text/event-stream",
                "last-event-id": last_id,
            },
        )
        messages = sse_messages(resumed.text)
        assert [m["params"]["progress"] for m in messages if m.get("method")] == [2, 3, 4]
        assert messages[-1]["id"] == 9 and messages[-1]["result"]["content"][0]["text"] == "4 steps"


async def test_delete_ends_the_session() -> None:
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base, httpx.AsyncClient() as http:
        url = f"{base}/mcp"
        session_id = await raw_initialize(http, url)
        assert (await http.delete(url, headers=session_headers(session_id))).status_code == 200
        again = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers=session_headers(session_id),
        )
        assert again.status_code == 404
        assert (await http.delete(url, headers=session_headers(session_id))).status_code == 404
        with anyio.fail_after(5):
            while app.sessions:
                await anyio.sleep(0.01)


async def test_idle_session_is_reaped() -> None:
    app = StreamableHTTPServer(build_server().serve, session_idle_timeout=0.3)
    async with serving(app) as base, httpx.AsyncClient() as http:
        url = f"{base}/mcp"
        session_id = await raw_initialize(http, url)
        assert session_id in app.sessions
        with anyio.fail_after(5):
            while app.sessions:
                await anyio.sleep(0.05)
        late = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers=session_headers(session_id),
        )
        assert late.status_code == 404


async def test_client_sees_a_session_the_server_ended() -> None:
    """A 404 fails the request and ends the connection (the client must start over)."""
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base, httpx.AsyncClient() as http:
        client, _ = make_client(f"{base}/mcp", max_reconnects=0)
        async with client:
            await client.stub.list_tools()
            (session_id,) = app.sessions
            assert (
                await http.delete(f"{base}/mcp", headers=session_headers(session_id))
            ).status_code == 200
            with pytest.raises((McpError, ConnectionClosedError)):
                await client.stub.list_tools()


async def test_busy_session_is_not_reaped() -> None:
    app = StreamableHTTPServer(build_server().serve, session_idle_timeout=0.2)
    async with serving(app) as base:
        client, _ = make_client(f"{base}/mcp")
        async with client:
            result = await client.stub.call_tool(
                types.CallToolRequestParams(name="sleep", arguments={"seconds": 0.8})
            )
            assert result.content[0].text == "slept"


async def test_cancelled_request_ends_its_stream() -> None:
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base:
        client, _ = make_client(f"{base}/mcp")
        async with client:
            with anyio.move_on_after(0.3):
                await client.stub.call_tool(
                    types.CallToolRequestParams(name="sleep", arguments={"seconds": 30})
                )
            session = next(iter(app.sessions.values()))
            with anyio.fail_after(5):
                while session.by_request:
                    await anyio.sleep(0.02)
            echoed = await client.stub.call_tool(
                types.CallToolRequestParams(name="echo", arguments={"text": "ok"})
            )
            assert echoed.content[0].text == "ok"


async def test_initialize_answer_carries_a_visible_ascii_session_id() -> None:
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base, httpx.AsyncClient() as http:
        ids = set()
        for _ in range(5):
            response = await http.post(f"{base}/mcp", json=INITIALIZE, headers=ACCEPT_BOTH)
            session_id = response.headers["mcp-session-id"]
            assert all(0x21 <= ord(c) <= 0x7E for c in session_id) and len(session_id) >= 32
            ids.add(session_id)
        assert len(ids) == 5


async def test_client_headers_and_delete_on_close() -> None:
    """After initialize every request carries the session id and negotiated version; closing
    the client DELETEs the session."""
    app = StreamableHTTPServer(build_server().serve)
    seen: list[tuple[str, dict[str, str]]] = []

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            seen.append((scope["method"], headers))
        await app(scope, receive, send)

    async with serving(recording) as base:
        async with Client(
            streamable_http_client(f"{base}/mcp"), protocol_version="2025-06-18"
        ) as client:
            await client.stub.list_tools()
        (session_id,) = {h["mcp-session-id"] for _, h in seen[1:]}
    first_method, first = seen[0]
    assert first_method == "POST" and "mcp-session-id" not in first
    assert "application/json" in first["accept"] and "text/event-stream" in first["accept"]
    assert all(h.get("mcp-protocol-version") == "2025-06-18" for _, h in seen[1:])
    assert {m for m, _ in seen[1:]} >= {"POST", "DELETE"}
    assert session_id not in app.sessions


async def test_client_survives_a_server_answering_nonsense() -> None:
    """Bad answers fail their own request only; the connection keeps working."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        message = json.loads(body) if body else {}
        method, request_id = message.get("method"), message.get("id")
        status, content_type, payload = 202, "application/json", b""
        if method == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "odd", "version": "0"},
            }
            status, payload = (
                200,
                json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode(),
            )
        elif method == "tools/list":
            status, content_type, payload = 200, "text/plain", b"not json-rpc"
        elif method == "tools/call":
            status, content_type, payload = 200, "text/event-stream", b"data: {broken\n\n"
        elif method == "ping":
            status, payload = (
                200,
                json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {}}).encode(),
            )
        elif scope["method"] == "GET":
            status = 405
        headers = [(b"content-type", content_type.encode()), (b"mcp-session-id", b"s-1")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    async with serving(app, lifespan="off") as base:
        client = Client(streamable_http_client(f"{base}/mcp", max_reconnects=0))
        async with client:
            with pytest.raises(McpError):
                await client.stub.list_tools()
            with pytest.raises(McpError):
                await client.stub.call_tool(types.CallToolRequestParams(name="x"))
            await client.ping(timeout=5)


async def test_get_stream_resumes_and_backlog_is_not_duplicated() -> None:
    """Unrelated messages sent while no GET stream is open wait; a resumed GET replays them
    once, and a later plain GET does not get them again."""
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base, httpx.AsyncClient(timeout=5) as http:
        url = f"{base}/mcp"
        session_id = await raw_initialize(http, url)
        get_headers = {**session_headers(session_id), "accept": "text/event-stream"}
        async with http.stream("GET", url, headers=get_headers) as stream:
            async for line in stream.aiter_lines():
                if line.startswith("id: "):
                    primed = line[4:]
                    break
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "broadcast"},
        }
        json_only = {**session_headers(session_id), "accept": "application/json"}
        assert (await http.post(url, json=call, headers=json_only)).status_code == 200

        async def first_message(headers: dict[str, str]) -> Any:
            with anyio.move_on_after(0.5):
                async with http.stream("GET", url, headers=headers) as stream:
                    async for line in stream.aiter_lines():
                        if line.startswith("data: {"):
                            return json.loads(line[6:])
            return None

        replayed = await first_message({**get_headers, "last-event-id": primed})
        assert replayed == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        assert await first_message(get_headers) is None


async def test_messages_sent_before_any_get_stream_wait_for_it() -> None:
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base, httpx.AsyncClient(timeout=5) as http:
        url = f"{base}/mcp"
        session_id = await raw_initialize(http, url)
        call = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "broadcast"}}
        json_only = {**session_headers(session_id), "accept": "application/json"}
        assert (await http.post(url, json=call, headers=json_only)).status_code == 200
        get_headers = {**session_headers(session_id), "accept": "text/event-stream"}
        received = None
        with anyio.fail_after(5):
            async with http.stream("GET", url, headers=get_headers) as stream:
                async for line in stream.aiter_lines():
                    if line.startswith("data: {"):
                        received = json.loads(line[6:])
                        break
        assert received == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
