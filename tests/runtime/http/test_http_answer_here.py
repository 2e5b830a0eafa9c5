"""A request served in its POST's task whose handler ends in its first step hands its answer
back to the POST (``Session.serve_here``), which writes it itself when nothing of the request
went out before it (``HttpSession.answered_here``); else the answer is sent as any is, after
what went before it. Each test checks an answer that takes one way or the other: JSON straight
back, SSE after a notification (ordered, with event ids, resumable), JSON with the notification
dropped (``json_response=True``), and the stateless era's statuses and pooled sessions. Driven
in-process (ASGI calls in the test's own task, no sockets)."""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any

import anyio
import pytest
from httpkit import ASGI_POST_HEADERS, MODERN, MODERN_META
from mcpbind.runtime import McpError, RequestContext, Server
from mcpbind.runtime.core.errors import INVALID_PARAMS
from mcpbind.runtime.http import StreamableHTTPServer
from mcpbind.runtime.transports.http._http_session import HttpSession

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

VERSION = "2025-11-25"
BASE = ASGI_POST_HEADERS


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # requests are served in the POST's task on asyncio's native path only


def build(era: str) -> Server:
    """``echo`` answers at once; ``chat`` logs a line first; ``bad`` refuses its params."""
    server = Server("here")
    if era == MODERN:
        from mcpbind.generated.v2026_07_28 import methods, types
    else:
        from mcpbind.generated.v2025_11_25 import methods, types  # type: ignore[no-redef]

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(params: Any, context: RequestContext) -> Any:
        if params.name == "chat":
            note = types.LoggingMessageNotificationParams(level="info", data="first")
            await context.send_notification(methods.NOTIFICATIONS_MESSAGE, note)
        if params.name == "bad":
            raise McpError(INVALID_PARAMS, "bad arguments")
        return {"content": [{"type": "text", "text": params.name}]}

    return server


class Sent:
    """What one ASGI call sent: its status, headers and body."""

    def __init__(self, messages: list[MutableMapping[str, Any]]) -> None:
        self.status: int = messages[0]["status"]
        self.headers: dict[bytes, bytes] = dict(messages[0]["headers"])
        self.body = b"".join(m.get("body", b"") for m in messages[1:])

    def json(self) -> Any:
        assert self.headers[b"content-type"] == b"application/json"
        return json.loads(self.body)

    def events(self) -> list[tuple[str | None, Any]]:
        """The SSE events with data: (id, message)."""
        assert self.headers[b"content-type"].startswith(b"text/event-stream")
        found: list[tuple[str | None, Any]] = []
        for block in self.body.decode().split("\n\n"):
            fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
            if fields.get("data"):
                found.append((fields.get("id"), json.loads(fields["data"])))
        return found


async def call(
    app: StreamableHTTPServer,
    payload: Any,
    headers: list[tuple[bytes, bytes]],
    method: str = "POST",
) -> Sent:
    body = json.dumps(payload).encode()
    sent: list[MutableMapping[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep(0.2)
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": "/mcp", "headers": headers,
             "query_string": b"", "client": ("127.0.0.1", 1)}  # fmt: skip
    with anyio.fail_after(10):
        await app(scope, receive, send)
    return Sent(sent)


async def open_session(app: StreamableHTTPServer) -> list[tuple[bytes, bytes]]:
    client = {"name": "t", "version": "0"}
    params = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": client}
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    opened = await call(app, init, BASE)
    headers = [
        *BASE,
        (b"mcp-protocol-version", VERSION.encode()),
        (b"mcp-session-id", opened.headers[b"mcp-session-id"]),
    ]
    assert (
        await call(app, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    ).status == 202
    await anyio.sleep(0.01)  # the reader takes it, and idles: later requests are served here
    return headers


def tool(request_id: int, name: str, meta: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if meta:
        params["_meta"] = MODERN_META
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


class Routed:
    """Counts the responses that went through the session's sink (``send_nowait``/``send``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ids: list[Any] = []
        send_nowait, send = HttpSession.send_nowait, HttpSession.send

        def counting_nowait(session: HttpSession, envelope: Any) -> None:
            send_nowait(session, envelope)  # noted once taken (``WouldBlock``: ``send`` next)
            self._note(envelope)

        async def counting(session: HttpSession, envelope: Any) -> None:
            await send(session, envelope)
            self._note(envelope)

        monkeypatch.setattr(HttpSession, "send_nowait", counting_nowait)
        monkeypatch.setattr(HttpSession, "send", counting)

    def _note(self, envelope: Any) -> None:
        if type(envelope.message) is dict and "method" not in envelope.message:
            self.ids.append(envelope.message.get("id"))


async def test_an_answer_ready_at_once_goes_straight_back_to_its_post(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = StreamableHTTPServer(build(VERSION).serve)
    async with app.run():
        headers = await open_session(app)
        routed = Routed(monkeypatch)
        for request_id in (1, 2, 3):
            answer = await call(app, tool(request_id, "echo"), headers)
            assert answer.status == 200 and answer.json()["id"] == request_id
            assert answer.json()["result"]["content"][0]["text"] == "echo"
        assert routed.ids == []  # handed back, never through the sink
        session = next(iter(app.sessions.values()))
        assert not session.by_request and not session.streams


async def test_a_notification_first_keeps_its_place_in_the_sse_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = StreamableHTTPServer(build(VERSION).serve)
    async with app.run():
        headers = await open_session(app)
        routed = Routed(monkeypatch)
        answer = await call(app, tool(1, "chat"), headers)
        assert answer.status == 200
        events = answer.events()
        assert [message.get("method") for _, message in events] == ["notifications/message", None]
        assert events[1][1]["id"] == 1 and events[1][1]["result"]["content"][0]["text"] == "chat"
        assert all(event_id for event_id, _ in events)  # resumable: every event has its id
        assert routed.ids == [1]  # the answer went through the sink, after the notification
        session = next(iter(app.sessions.values()))
        assert session.store is not None
        replay = await session.store.replay_events_after(str(events[0][0]))
        assert replay is not None and [m["id"] for _, m in replay[1]] == [1]
        # The session serves on, and answers at once again straight back.
        assert (await call(app, tool(2, "echo"), headers)).json()["id"] == 2


async def test_json_only_drops_the_notification_and_answers_straight_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = StreamableHTTPServer(build(VERSION).serve, json_response=True)
    async with app.run():
        headers = await open_session(app)
        routed = Routed(monkeypatch)
        answer = await call(app, tool(1, "chat"), headers)
        assert answer.status == 200 and answer.json()["result"]["content"][0]["text"] == "chat"
        assert routed.ids == []


async def test_sse_only_answers_at_once_as_an_event() -> None:
    app = StreamableHTTPServer(build(VERSION).serve, json_response=False)
    async with app.run():
        headers = await open_session(app)
        events = (await call(app, tool(1, "echo"), headers)).events()
        assert [(bool(event_id), message["id"]) for event_id, message in events] == [(True, 1)]


async def test_stateless_answers_keep_their_statuses_and_their_pooled_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = StreamableHTTPServer(build(MODERN).serve)
    headers = [
        *BASE,
        (b"mcp-protocol-version", MODERN.encode()),
        (b"mcp-method", b"tools/call"),
    ]
    async with app.run():
        answer = await call(app, tool(1, "echo", meta=True), [*headers, (b"mcp-name", b"echo")])
        assert answer.status == 200 and answer.json()["result"]["content"][0]["text"] == "echo"
        pool = app.pool
        assert pool is not None and len(pool.idle) == 1
        first = pool.idle[0]
        routed = Routed(monkeypatch)
        refused = await call(app, tool(2, "bad", meta=True), [*headers, (b"mcp-name", b"bad")])
        assert refused.status == 400 and refused.json()["error"]["code"] == INVALID_PARAMS
        again = await call(app, tool(3, "echo", meta=True), [*headers, (b"mcp-name", b"echo")])
        assert again.status == 200 and again.json()["id"] == 3
        assert routed.ids == []
        assert pool.idle == [first]  # one session served all three, back in the pool each time
        chat = await call(app, tool(4, "chat", meta=True), [*headers, (b"mcp-name", b"chat")])
        events = chat.events()
        assert [message.get("method") for _, message in events] == ["notifications/message", None]
        assert all(event_id is None for event_id, _ in events)  # not resumable in this era
        assert routed.ids == [4]
