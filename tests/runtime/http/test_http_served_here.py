"""A pooled stateless-era request is served in its POST's own task (``Session.serve_here``).

The handler runs where the POST is read, not in the session's reading task: one that never
waits is answered in that step; one that waits stays in the POST's task (``Borrowed``) while
a second task writes the answer, and it is cancelled with the POST or with its session.
Driven in-process (ASGI calls in this test's own tasks, no sockets).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from typing import Any

import anyio
import pytest
from httpkit import MODERN, MODERN_META
from mcpbind.runtime import RequestContext, Server
from mcpbind.runtime.http import StreamableHTTPServer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
    (b"mcp-protocol-version", MODERN.encode()),
    (b"mcp-method", b"tools/call"),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the path exists on asyncio's native path only


class Probe:
    """A server whose ``tools/call`` notes the task it runs in, before and after waiting."""

    def __init__(self) -> None:
        self.tasks: list[tuple[str, asyncio.Task[Any] | None]] = []
        self.cancelled: list[str] = []
        self.started = anyio.Event()
        self.server = Server("probe")
        from mcpbind.generated.v2026_07_28 import methods as modern, types as modern_types

        @self.server.handler(modern.TOOLS_CALL)
        async def call_tool(params: Any, context: RequestContext) -> Any:
            name = params.name
            self.tasks.append((name, asyncio.current_task()))
            try:
                if name in ("chat", "hang"):
                    note = modern_types.LoggingMessageNotificationParams(level="info", data="hi")
                    await context.send_notification(modern.NOTIFICATIONS_MESSAGE, note)
                if name in ("nap", "chat"):
                    await anyio.sleep(0.01)
                    self.tasks.append((name, asyncio.current_task()))
                if name == "hang":
                    self.started.set()
                    await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                self.cancelled.append(name)
                raise
            return {"content": [{"type": "text", "text": name}], "resultType": "complete"}


async def post(
    app: StreamableHTTPServer, request_id: int, name: str, gone: anyio.Event | None = None
) -> tuple[int, bytes]:
    """POST a ``tools/call`` of ``name`` in this task: (status, body). With ``gone``, the client
    disconnects once the response has begun and ``gone`` is set."""
    params = {"name": name, "arguments": {}, "_meta": MODERN_META}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    )
    sent: list[MutableMapping[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body.encode(), "more_body": False}
        if gone is None:
            await anyio.sleep_forever()
        else:
            await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    headers = [*HEADERS, (b"mcp-name", name.encode())]
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers,
             "query_string": b"", "client": ("127.0.0.1", 1)}  # fmt: skip
    await app(scope, receive, send)
    data = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], data


async def cancelled(probe: Probe) -> None:
    with anyio.fail_after(10):
        while probe.cancelled != ["hang"]:
            await anyio.sleep(0.01)


async def test_a_handler_that_never_waits_runs_in_the_posts_task() -> None:
    probe = Probe()
    app = StreamableHTTPServer(probe.server.serve)
    async with app.run():
        for request_id in (1, 2, 3):  # the first one on a new session of the pool too
            status, body = await post(app, request_id, "echo")
            assert status == 200 and json.loads(body)["result"]["content"][0]["text"] == "echo"
            assert probe.tasks[-1] == ("echo", asyncio.current_task())
        assert app.pool is not None and len(app.pool.idle) == 1  # answered at once: given back


async def test_a_handler_that_waits_stays_in_the_posts_task() -> None:
    probe = Probe()
    app = StreamableHTTPServer(probe.server.serve)
    async with app.run():
        await post(app, 1, "echo")
        status, body = await post(app, 2, "nap")  # JSON: answered once the nap is over
        assert status == 200 and json.loads(body)["result"]["content"][0]["text"] == "nap"
        here = asyncio.current_task()
        assert probe.tasks[-2:] == [("nap", here), ("nap", here)]
        status, body = await post(app, 3, "chat")  # a notification first: an SSE answer
        assert status == 200 and b'"notifications/message"' in body and b'"text":"chat"' in body
        assert probe.tasks[-2:] == [("chat", here), ("chat", here)]
        status, body = await post(app, 4, "echo")  # the server serves on
        assert status == 200 and b'"text":"echo"' in body


async def test_cancelling_the_post_cancels_its_handler() -> None:
    probe = Probe()
    app = StreamableHTTPServer(probe.server.serve)
    async with app.run():
        await post(app, 1, "echo")
        assert app.pool is not None
        session = app.pool.idle[-1]
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(post, app, 2, "hang")
                await probe.started.wait()
                tg.cancel_scope.cancel()
        await cancelled(probe)
        assert session.closed  # never given back
        status, body = await post(app, 3, "echo")
        assert status == 200 and b'"text":"echo"' in body


async def test_a_client_gone_cancels_the_handler_and_the_post_ends_quietly() -> None:
    """The session cancels the handler it lent to the POST's task (its client left the SSE
    stream): the handler unwinds, and the POST's own task is not left cancelled."""
    probe = Probe()
    app = StreamableHTTPServer(probe.server.serve, sse_keepalive=0.05)
    async with app.run():
        await post(app, 1, "echo")
        gone = anyio.Event()

        async def leave() -> None:
            await probe.started.wait()
            gone.set()

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(leave)
                status, body = await post(app, 2, "hang", gone)  # returns: not cancelled
                assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]
        assert status == 200 and b'"notifications/message"' in body
        await cancelled(probe)
        status, body = await post(app, 3, "echo")
        assert status == 200 and b'"text":"echo"' in body
