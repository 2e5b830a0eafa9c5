"""How a POST is answered (JSON or SSE) and how stateless sessions start, over a real uvicorn."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from httpkit import ACCEPT_BOTH, answers, build_server, raw_initialize, session_headers
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import ASSUME_INITIALIZED, RequestContext, Server, memory_pair
from mcpbind.runtime.http import StreamableHTTPServer, serving

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def call(request_id: int, name: str, progress: bool = False, **arguments: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if progress:
        params["_meta"] = {"progressToken": f"p{request_id}"}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def events(body: str) -> list[tuple[str | None, str]]:
    """(id, data) of every SSE event, priming events included."""
    out = []
    for block in body.split("\n\n"):
        lines = block.split("\n")
        data = [line[6:] for line in lines if line.startswith("data: ")]
        ids = [line[4:] for line in lines if line.startswith("id: ")]
        if data:
            out.append((ids[0] if ids else None, "\n".join(data)))
    return out


async def post(http: httpx.AsyncClient, url: str, sid: str, message: Any) -> httpx.Response:
    return await http.post(url, json=message, headers=session_headers(sid))


async def test_an_immediate_answer_is_json_and_progress_first_makes_sse() -> None:
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base, httpx.AsyncClient(timeout=10) as http:
        url = f"{base}/mcp"
        sid = await raw_initialize(http, url)
        echoed = await post(http, url, sid, call(1, "echo", text="now"))
        assert echoed.headers["content-type"] == "application/json"
        assert echoed.json()["result"]["content"][0]["text"] == "now"
        progressed = await post(http, url, sid, call(2, "progress", progress=True, steps=2))
        assert progressed.headers["content-type"] == "text/event-stream"
        stream = events(progressed.text)
        assert stream[0][0] is not None and stream[0][1] == ""  # primed, so resumable
        messages = answers(progressed)
        assert [m.get("method") for m in messages] == [
            "notifications/progress",
            "notifications/progress",
            None,
        ]
        assert messages[-1]["result"]["content"][0]["text"] == "2 steps"
        # Without a progress token nothing precedes the answer, but it takes longer than
        # ``sse_after``: SSE again, primed before the answer.
        slow = await post(http, url, sid, call(3, "sleep", seconds=0.3))
        assert slow.headers["content-type"] == "text/event-stream"
        assert events(slow.text)[0][1] == ""
        assert answers(slow)[-1]["result"]["content"][0]["text"] == "slept"


async def test_json_and_sse_options_still_force_one_way() -> None:
    always_sse = StreamableHTTPServer(build_server().serve, json_response=False)
    always_json = StreamableHTTPServer(build_server().serve, json_response=True)
    async with (
        serving(always_sse) as sse_base,
        serving(always_json) as json_base,
        httpx.AsyncClient(timeout=10) as http,
    ):
        sid = await raw_initialize(http, f"{sse_base}/mcp")
        echoed = await post(http, f"{sse_base}/mcp", sid, call(1, "echo", text="s"))
        assert echoed.headers["content-type"] == "text/event-stream"
        assert answers(echoed)[-1]["result"]["content"][0]["text"] == "s"
        sid = await raw_initialize(http, f"{json_base}/mcp")
        progressed = await post(
            http, f"{json_base}/mcp", sid, call(2, "progress", progress=True, steps=2)
        )
        assert progressed.headers["content-type"] == "application/json"
        assert progressed.json()["result"]["content"][0]["text"] == "2 steps"
        # Closing the SSE stream of a JSON answer does nothing: the answer still comes.
        dropped = await post(
            http, f"{json_base}/mcp", sid, call(3, "progress", progress=True, steps=2, drop=1)
        )
        assert dropped.json()["result"]["content"][0]["text"] == "2 steps"


async def test_a_client_that_accepts_only_sse_gets_sse() -> None:
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base, httpx.AsyncClient(timeout=10) as http:
        url = f"{base}/mcp"
        sid = await raw_initialize(http, url)
        headers = {**session_headers(sid), "accept": "text/event-stream"}
        echoed = await http.post(url, json=call(1, "echo", text="e"), headers=headers)
        assert echoed.headers["content-type"] == "text/event-stream"
        assert answers(echoed)[-1]["result"]["content"][0]["text"] == "e"


async def test_many_requests_in_flight_on_one_session() -> None:
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base, httpx.AsyncClient(timeout=10) as http:
        url = f"{base}/mcp"
        sid = await raw_initialize(http, url)
        got: dict[int, str] = {}

        async def one(n: int) -> None:
            response = await post(http, url, sid, call(n, "echo", text=str(n)))
            got[n] = answers(response)[-1]["result"]["content"][0]["text"]

        async with anyio.create_task_group() as tg:
            for n in range(1, 41):
                tg.start_soon(one, n)
        assert got == {n: str(n) for n in range(1, 41)}
        assert not next(iter(app.sessions.values())).by_request


def peer_server() -> Server:
    """A tool that reports what the session knows of its client."""
    server = Server("peer-report")

    @server.handler(methods.TOOLS_CALL)
    async def report(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        peer = context.session.peer
        text = f"{peer.revision} {peer.phase} {peer.capabilities} {peer.info}"
        return types.CallToolResult(content=[types.TextContent(text=text)])

    return server


async def test_stateless_sessions_start_initialised_at_the_header_version() -> None:
    app = StreamableHTTPServer(peer_server().serve, stateless=True)
    async with serving(app) as base, httpx.AsyncClient(timeout=10) as http:
        url = f"{base}/mcp"
        for version in ("2025-06-18", "2025-11-25"):
            headers = {**ACCEPT_BOTH, "mcp-protocol-version": version}
            response = await http.post(url, json=call(1, "report"), headers=headers)
            text = answers(response)[-1]["result"]["content"][0]["text"]
            # No synthetic initialize: no made-up client info, empty capabilities.
            assert text == f"{version} operating {{}} None"
        bare = await http.post(url, json=call(2, "report"), headers=ACCEPT_BOTH)
        assert answers(bare)[-1]["result"]["content"][0]["text"].startswith("2025-03-26 ")


async def test_assume_initialized_on_a_connection() -> None:
    """``Server.serve`` honours the transport's ``ASSUME_INITIALIZED``, per lifecycle."""
    async with memory_pair() as (near, far):
        far.extra[ASSUME_INITIALIZED] = "2025-06-18"
        session = peer_server().new_session(far)
        assert (session.peer.revision, session.peer.phase) == ("2025-06-18", "operating")
        assert session.bindings.revision == "2025-06-18"
        assert session.peer.era == "handshake"  # the dual-era lifecycle hands it on
        older = Server("old", revisions=["2025-03-26", "2025-06-18"]).new_session(
            far_with(near, "2025-11-25")
        )
        assert older.peer.revision == "2025-06-18"  # not served: the newest, as negotiated
        stateless_only = Server("new", revisions=["2026-07-28"]).new_session(far)
        assert stateless_only.peer.phase == "new"  # its requests carry _meta instead


def far_with(connection: Any, revision: str) -> Any:
    connection.extra[ASSUME_INITIALIZED] = revision
    return connection


async def test_route_lock_hands_over_in_order_and_survives_cancelled_waiters() -> None:
    from mcpbind.runtime.transports.http._signals import Lock as _Lock

    lock = _Lock()
    order: list[int] = []

    async def take(n: int) -> None:
        async with lock:
            order.append(n)
            await anyio.sleep(0.01)

    async with anyio.create_task_group() as tg:
        await lock.__aenter__()
        tg.start_soon(take, 1)
        await anyio.sleep(0.01)
        tg.start_soon(take, 2)
        cancelled = anyio.CancelScope()

        async def cancellable() -> None:
            with cancelled:
                await take(3)

        tg.start_soon(cancellable)
        tg.start_soon(take, 4)
        await anyio.sleep(0.01)
        cancelled.cancel()
        await lock.__aexit__(None, None, None)
    assert order == [1, 2, 4]
    async with lock:  # free again
        pass
