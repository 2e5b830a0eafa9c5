"""A handshake-era session's lone request is served in its POST's own task while the session's
reader idles (``HttpSession.serves_here``, ``Session.serve_here``), as a pooled stateless-era
one is: the same answers, cancellation by ``notifications/cancelled`` and by the session's
end, and a client leaving still does not stop the request. Driven in-process (ASGI calls in
this test's own tasks, no sockets).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from typing import Any

import anyio
import pytest
from httpkit import ASGI_POST_HEADERS
from mcpbind.runtime import RequestContext, Server
from mcpbind.runtime.http import StreamableHTTPServer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

VERSION = "2025-11-25"
BASE = ASGI_POST_HEADERS


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the path exists on asyncio's native path only


class Probe:
    """A server whose ``tools/call`` notes the task it runs in, before and after waiting."""

    def __init__(self) -> None:
        self.tasks: list[tuple[str, asyncio.Task[Any] | None]] = []
        self.cancelled: list[str] = []
        self.finished: list[str] = []
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.server = Server("probe")
        from mcpbind.generated.v2025_11_25 import methods, types

        @self.server.handler(methods.TOOLS_CALL)
        async def call_tool(params: Any, context: RequestContext) -> Any:
            name = params.name
            self.tasks.append((name, asyncio.current_task()))
            try:
                if name in ("chat", "hang", "held"):
                    note = types.LoggingMessageNotificationParams(level="info", data="hi")
                    await context.send_notification(methods.NOTIFICATIONS_MESSAGE, note)
                if name in ("nap", "chat"):
                    await anyio.sleep(0.01)
                    self.tasks.append((name, asyncio.current_task()))
                if name == "hang":
                    self.started.set()
                    await anyio.sleep_forever()
                if name == "held":
                    self.started.set()
                    await self.release.wait()
            except anyio.get_cancelled_exc_class():
                self.cancelled.append(name)
                raise
            self.finished.append(name)
            return {"content": [{"type": "text", "text": name}]}


class Client:
    """POSTs to one session of ``app``, each in the calling task."""

    def __init__(self, app: StreamableHTTPServer) -> None:
        self.app = app
        self.headers = BASE

    async def post(
        self, payload: dict[str, Any], gone: anyio.Event | None = None, method: str = "POST"
    ) -> tuple[int, dict[bytes, bytes], bytes]:
        """(status, headers, body). With ``gone``, the client disconnects once the response
        has begun and ``gone`` is set."""
        body = json.dumps(payload).encode()
        sent: list[MutableMapping[str, Any]] = []
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            if gone is None:
                await anyio.sleep_forever()
            else:
                await gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": method, "path": "/mcp", "headers": self.headers,
                 "query_string": b"", "client": ("127.0.0.1", 1)}  # fmt: skip
        await self.app(scope, receive, send)
        data = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        return sent[0]["status"], dict(sent[0]["headers"]), data

    async def open(self) -> None:
        status, headers, _ = await self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            }
        )
        assert status == 200
        self.headers = [
            *BASE,
            (b"mcp-protocol-version", VERSION.encode()),
            (b"mcp-session-id", headers[b"mcp-session-id"]),
        ]
        status, _, _ = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert status == 202

    async def call(
        self, request_id: int, name: str, gone: anyio.Event | None = None
    ) -> tuple[int, bytes]:
        status, _, body = await self.post(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": name, "arguments": {}},
            },
            gone,
        )
        return status, body


async def test_a_handler_that_never_waits_runs_in_the_posts_task() -> None:
    probe = Probe()
    app = StreamableHTTPServer(probe.server.serve)
    async with app.run():
        client = Client(app)
        await client.open()
        here = asyncio.current_task()
        for request_id in (1, 2, 3):
            status, body = await client.call(request_id, "echo")
            assert status == 200 and json.loads(body)["result"]["content"][0]["text"] == "echo"
        # The first came while ``notifications/initialized`` was still queued (its POST was
        # answered once it was): queued after it, so read after it, in the reader's task.
        assert [task is here for _, task in probe.tasks] == [False, True, True]


async def test_a_handler_that_waits_stays_in_the_posts_task() -> None:
    probe = Probe()
    app = StreamableHTTPServer(probe.server.serve)
    async with app.run():
        client = Client(app)
        await client.open()
        await anyio.sleep(0)  # the reader takes ``notifications/initialized``
        status, body = await client.call(1, "nap")  # JSON: answered once the nap is over
        assert status == 200 and json.loads(body)["result"]["content"][0]["text"] == "nap"
        here = asyncio.current_task()
        assert probe.tasks[-2:] == [("nap", here), ("nap", here)]
        status, body = await client.call(2, "chat")  # a notification first: an SSE answer
        assert status == 200 and b'"notifications/message"' in body and b'"text":"chat"' in body
        assert probe.tasks[-2:] == [("chat", here), ("chat", here)]
        status, body = await client.call(3, "echo")  # the session serves on
        assert status == 200 and b'"text":"echo"' in body


async def test_a_cancellation_cancels_a_handler_served_here() -> None:
    probe = Probe()
    app = StreamableHTTPServer(probe.server.serve)
    async with app.run():
        client = Client(app)
        await client.open()
        await anyio.sleep(0)  # the reader takes ``notifications/initialized``
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                answers: list[tuple[int, bytes]] = []

                async def call() -> None:
                    answers.append(await client.call(1, "hang"))

                tg.start_soon(call)
                await probe.started.wait()
                status, _, _ = await client.post(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/cancelled",
                        "params": {"requestId": 1},
                    }
                )
                assert status == 202
        assert probe.cancelled == ["hang"]
        [(status, body)] = answers
        assert status == 200 and b'"notifications/message"' in body and b'"result"' not in body
        status, body = await client.call(2, "echo")
        assert status == 200 and b'"text":"echo"' in body


async def test_a_client_gone_does_not_stop_the_request() -> None:
    """The SSE response is detached; the handler, in the POST's task, runs on to its answer,
    which the session's event store keeps for a client resuming the stream."""
    probe = Probe()
    app = StreamableHTTPServer(probe.server.serve, sse_keepalive=0.05)
    async with app.run():
        client = Client(app)
        await client.open()
        await anyio.sleep(0)  # the reader takes ``notifications/initialized``
        session = next(iter(app.sessions.values()))
        gone = anyio.Event()

        async def leave_then_release() -> None:
            await probe.started.wait()
            gone.set()
            await anyio.sleep(0.3)  # past the writer's ``WATCH_AFTER``: it saw the client go
            assert probe.cancelled == [] and probe.finished == []
            probe.release.set()

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(leave_then_release)
                status, body = await client.call(1, "held", gone)
        assert status == 200 and b'"notifications/message"' in body
        assert probe.finished == ["held"] and probe.cancelled == []
        assert not session.by_request and not session.streams  # settled by its answer


async def test_the_sessions_end_cancels_a_handler_served_here() -> None:
    probe = Probe()
    app = StreamableHTTPServer(probe.server.serve)
    async with app.run():
        client = Client(app)
        await client.open()
        await anyio.sleep(0)  # the reader takes ``notifications/initialized``
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call, 1, "hang")
                await probe.started.wait()
                status, _, _ = await client.post({}, method="DELETE")
                assert status == 200
        assert probe.cancelled == ["hang"]
        assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_cancelling_the_post_settles_its_stream() -> None:
    """A POST cancelled by its ASGI server cancels a waiting handler it lent its task to; its
    stream is settled, so nothing waits on it and the session serves on."""
    probe = Probe()
    app = StreamableHTTPServer(probe.server.serve)
    async with app.run():
        client = Client(app)
        await client.open()
        await anyio.sleep(0)  # the reader takes ``notifications/initialized``
        session = next(iter(app.sessions.values()))
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call, 1, "hang")
                await probe.started.wait()
                tg.cancel_scope.cancel()
        assert probe.cancelled == ["hang"]
        assert not session.by_request and not session.streams
        status, body = await client.call(2, "echo")
        assert status == 200 and b'"text":"echo"' in body
