"""The client's own POST pool (``runtime/http/_fastpost.py``) against a real uvicorn: reused
connections, connections the server closed while idle, answers read in every shape, and
requests abandoned mid-answer, whose connections must never carry another request."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from httpkit import build_server
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client
from mcpbind.runtime.core.transport import Envelope
from mcpbind.runtime.http import StreamableHTTPServer, serving, streamable_http_client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def echo(text: str) -> types.CallToolRequestParams:
    return types.CallToolRequestParams(name="echo", arguments={"text": text})


@pytest.mark.parametrize("json_response", [True, False])
async def test_many_calls_on_few_connections(json_response: bool) -> None:
    """Sequential and concurrent calls each get their own answer, JSON or SSE."""
    app = StreamableHTTPServer(build_server().serve, json_response=json_response)
    async with serving(app) as base, Client(streamable_http_client(f"{base}/mcp")) as client:
        for i in range(20):
            result = await client.stub.call_tool(echo(f"s{i}"))
            assert result.content[0].text == f"s{i}"  # type: ignore[union-attr]
        got: dict[int, Any] = {}

        async def one(i: int) -> None:
            got[i] = (await client.stub.call_tool(echo(f"c{i}"))).content[0].text  # type: ignore[union-attr]

        async with anyio.create_task_group() as tg:
            for i in range(40):
                tg.start_soon(one, i)
        assert got == {i: f"c{i}" for i in range(40)}


async def test_connection_the_server_closed_while_idle_is_replaced() -> None:
    """uvicorn closes a keep-alive connection idle for ``timeout_keep_alive``: the next call
    takes a fresh one instead of failing."""
    app = StreamableHTTPServer(build_server().serve, json_response=True)
    async with (
        serving(app, timeout_keep_alive=1) as base,
        Client(streamable_http_client(f"{base}/mcp")) as client,
    ):
        assert (await client.stub.call_tool(echo("a"))).content[0].text == "a"  # type: ignore[union-attr]
        await anyio.sleep(1.6)
        assert (await client.stub.call_tool(echo("b"))).content[0].text == "b"  # type: ignore[union-attr]


async def test_a_cancelled_call_leaves_the_connections_usable() -> None:
    """A call given up while its SSE answer streams (progress for 5 s) closes its
    connection; later calls are answered correctly, each its own answer."""
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base, Client(streamable_http_client(f"{base}/mcp")) as client:
        with anyio.move_on_after(0.3):
            slow = {"steps": 50, "delay": 0.1}
            await client.stub.call_tool(
                types.CallToolRequestParams(name="progress", arguments=slow)
            )
        for i in range(10):
            assert (await client.stub.call_tool(echo(f"after{i}"))).content[0].text == f"after{i}"  # type: ignore[union-attr]


async def test_a_request_never_overtakes_what_was_sent_before_it() -> None:
    """A request is POSTed straight from the sender only when nothing is queued before it:
    one sent while a notification's POST is still under way reaches the server after it."""
    arrived: list[str] = []
    inner = StreamableHTTPServer(build_server().serve, json_response=True)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            body = b""
            while True:
                event = await receive()
                body += event.get("body", b"")
                if not event.get("more_body"):
                    break
            method = json.loads(body).get("method")
            if method in ("notifications/roots/list_changed", "tools/call"):
                arrived.append(method)
            if method == "notifications/roots/list_changed":
                await anyio.sleep(0.3)  # the notification's POST is slow to be taken in
                arrived.append("taken in")
            replay = [{"type": "http.request", "body": body, "more_body": False}]

            async def again() -> Any:
                return replay.pop() if replay else await receive()

            await inner(scope, again, send)
            return
        await inner(scope, receive, send)

    async with serving(app) as base, Client(streamable_http_client(f"{base}/mcp")) as client:
        # Queued at once (the session does not wait for the POST), then POSTed in order.
        await client.session.send_notification(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED, None)
        await anyio.sleep(0.05)  # its POST is under way
        result = await client.stub.call_tool(echo("after"))
        assert result.content[0].text == "after"  # type: ignore[union-attr]
        assert arrived == ["notifications/roots/list_changed", "taken in", "tools/call"]


async def test_nothing_is_posted_once_the_transport_is_closed() -> None:
    """A message sent after the transport's context ended fails at once; none is POSTed."""
    posted: list[str] = []
    inner = StreamableHTTPServer(build_server().serve, json_response=True)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            posted.append(scope["method"])
        await inner(scope, receive, send)

    async with serving(app) as base:
        async with streamable_http_client(f"{base}/mcp") as connection:
            pass
        request = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": echo("x").model_dump(),
        }
        with pytest.raises(anyio.ClosedResourceError):
            connection.outgoing.send_nowait(Envelope(request))
        await anyio.sleep(0.2)
    assert posted == []


async def test_request_heads_are_kept_per_exact_header_set() -> None:
    """The encoded head of a header set is reused only for those exact headers; one with a
    line break is refused every time (never kept); the kept heads are bounded."""
    import httpx
    from mcpbind.runtime.transports.http import _fastpost

    poster = _fastpost.FastPoster("http://127.0.0.1:9/mcp", None, 1.0, 1.0)
    one = {"accept": "application/json", "mcp-name": "echo"}
    head = poster._head(one)
    assert head == b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:9\r\naccept: application/json\r\n" + (
        b"mcp-name: echo\r\n"
    )
    assert poster._head(dict(one)) is head
    assert poster._head({**one, "mcp-name": "Echo"}).endswith(b"mcp-name: Echo\r\n")
    for _ in range(2):
        with pytest.raises(httpx.LocalProtocolError):
            poster._head({**one, "mcp-name": "echo\r\nx-injected: 1"})
    for n in range(_fastpost.MAX_HEADS + 5):
        poster._head({"n": str(n)})
    assert len(poster._heads) <= _fastpost.MAX_HEADS


async def test_a_redirected_post_is_followed() -> None:
    """A POST answered 307 is followed to the new URL (through httpx) and the call gets its
    answer."""
    posts: list[str] = []
    inner = StreamableHTTPServer(build_server().serve, json_response=True)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            posts.append(scope["path"])
            if scope["path"] == "/old":
                while (await receive()).get("more_body"):
                    pass
                headers = [(b"location", b"/mcp"), (b"content-length", b"0")]
                await send({"type": "http.response.start", "status": 307, "headers": headers})
                await send({"type": "http.response.body", "body": b""})
                return
        await inner(scope, receive, send)

    async with serving(app) as base, Client(streamable_http_client(f"{base}/old")) as client:
        assert (await client.stub.call_tool(echo("moved"))).content[0].text == "moved"  # type: ignore[union-attr]
    assert posts.count("/mcp") >= 3  # initialize, initialized, the call: each reached /mcp
    assert posts.count("/old") >= posts.count("/mcp")


async def test_a_refused_connection_fails_the_request_with_httpx_error() -> None:
    """Nothing listening: the first request fails, naming httpx's error."""
    from mcpbind.runtime.core.errors import McpError

    with pytest.raises(McpError, match=r"HTTP request failed: ConnectError\(.could not connect"):
        async with Client(streamable_http_client("http://127.0.0.1:9/mcp", timeout=2.0)):
            pass
