"""What the stateless era's per-request shortcuts reuse, and that every check still runs.

The endpoint keeps what it read from a set of request headers (``_intake.header_view``), the
route plan of a (revision, method) and the client's ``_meta`` values it validated: each test
makes a request that shares everything cached with an earlier one but the detail that must
make it fail, and checks that it does. Driven in-process (ASGI calls, no sockets).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from httpkit import ASGI_POST_HEADERS, MODERN, MODERN_META, build_dual_server
from mcpbind.runtime import RequestContext, Server
from mcpbind.runtime.core import jsonrpc as rpc
from mcpbind.runtime.core.admission import Admission
from mcpbind.runtime.http import StreamableHTTPServer
from mcpbind.runtime.transports.http import _intake
from mcpbind.runtime.transports.http.binding import HeaderFacts, check_facts, check_request

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

BASE = [
    *ASGI_POST_HEADERS,
    (b"mcp-protocol-version", MODERN.encode()),
    (b"mcp-method", b"tools/call"),
]


class Asgi:
    """POSTs to an app in this task: (status, parsed JSON body)."""

    def __init__(self, app: StreamableHTTPServer) -> None:
        self.app = app

    async def post(self, body: Any, headers: list[tuple[bytes, bytes]]) -> tuple[int, Any]:
        sent: list[dict[str, Any]] = []
        payload = json.dumps(body).encode()
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if delivered:
                await anyio.sleep_forever()
            delivered = True
            return {"type": "http.request", "body": payload, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers,
                 "query_string": b"", "client": ("127.0.0.1", 1)}  # fmt: skip
        await self.app(scope, receive, send)
        data = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        return sent[0]["status"], json.loads(data) if data else None


@asynccontextmanager
async def asgi(app: StreamableHTTPServer) -> AsyncIterator[Asgi]:
    async with app.run():
        yield Asgi(app)


def call(request_id: int, name: str = "echo", meta: Any = None, **arguments: Any) -> Any:
    params = {"name": name, "arguments": arguments, "_meta": MODERN_META if meta is None else meta}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def named(name: bytes) -> list[tuple[bytes, bytes]]:
    return [*BASE, (b"mcp-name", name)]


async def test_a_header_set_seen_before_is_still_checked_against_each_body() -> None:
    app = StreamableHTTPServer(build_dual_server().serve)
    async with asgi(app) as client:
        for request_id in (1, 2):  # the second one is served from the cached view
            status, answer = await client.post(call(request_id, text="a"), named(b"echo"))
            assert status == 200 and answer["result"]["content"][0]["text"] == "a"
        assert tuple(named(b"echo")) in _intake._views
        # The same (cached) headers with a body naming another tool: a mismatch.
        status, answer = await client.post(call(3, name="where", region="x"), named(b"echo"))
        assert status == 400 and answer["error"]["code"] == -32020 and answer["id"] == 3
        # A malformed header is refused every time, cached or not.
        bad = [*named(b"echo"), (b"mcp-param-region", b"caf\xe9")]
        for request_id in (4, 5):
            status, answer = await client.post(call(request_id, text="a"), bad)
            assert status == 400 and "malformed" in answer["error"]["message"]
        # A Host outside the allow-list is refused though the rest matches a cached set.
        foreign = [(b"host", b"evil.example:80"), *named(b"echo")[1:]]
        for _ in range(2):
            status, answer = await client.post(call(6, text="a"), foreign)
            assert status == 403


async def test_header_views_are_bounded_and_keyed_on_every_byte() -> None:
    _intake._views.clear()
    first = _intake.header_view({"headers": named(b"echo")})
    assert _intake.header_view({"headers": list(named(b"echo"))}) is first
    other = _intake.header_view({"headers": named(b"Echo")})
    assert other is not first and other.mcp()[0]["mcp-name"] == ["Echo"]
    for n in range(_intake.MAX_VIEWS + 10):
        _intake.header_view({"headers": named(b"t%d" % n)})
    assert len(_intake._views) <= _intake.MAX_VIEWS
    # Lists as header pairs (unhashable) are read, just not cached.
    view = _intake.header_view({"headers": [[k, v] for k, v in named(b"echo")]})
    assert view.headers["mcp-protocol-version"] == MODERN and view.malformed is None


def peer_server() -> Server:
    """A 2026-07-28 ``tools/call`` that answers with what it sees of its client."""
    from mcpbind.generated.v2026_07_28 import methods as modern

    server = Server("peer")

    @server.handler(modern.TOOLS_CALL)
    async def call_tool(params: Any, context: RequestContext) -> Any:
        peer = context.session.peer
        info = peer.info.name if peer.info is not None else None
        said = json.dumps([info, sorted(peer.capabilities), peer.revision])
        return {"content": [{"type": "text", "text": said}], "resultType": "complete"}

    return server


def meta(info: Any = None, **capabilities: Any) -> dict[str, Any]:
    found = {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": capabilities}
    if info is not None:
        found["io.modelcontextprotocol/clientInfo"] = info
    return found


async def test_each_request_sees_its_own_client_meta() -> None:
    """Client info is validated once per distinct value, never reused for another value."""
    app = StreamableHTTPServer(peer_server().serve)
    alice = {"name": "alice", "version": "1"}
    bob = {"name": "bob", "version": "1"}
    carol = {"name": "carol", "version": "1", "icons": [{"src": "https://x/i.png"}]}
    cases: list[tuple[dict[str, Any], Any]] = [
        (meta(alice), ["alice", [], MODERN]),
        (meta(alice, roots={}), ["alice", ["roots"], MODERN]),
        (meta(bob), ["bob", [], MODERN]),
        (meta(alice), ["alice", [], MODERN]),
        (meta({"name": "alice", "version": 1}), None),  # invalid: the params are refused
        (meta(), [None, [], MODERN]),
        (meta(carol), ["carol", [], MODERN]),
        (meta(bob, elicitation={}), ["bob", ["elicitation"], MODERN]),
    ]
    async with asgi(app) as client:
        for request_id, (sent, seen) in enumerate(cases, 1):
            status, answer = await client.post(call(request_id, meta=sent), named(b"echo"))
            if seen is None:
                assert status == 400 and answer["error"]["code"] == -32602
                continue
            assert status == 200, answer
            assert json.loads(answer["result"]["content"][0]["text"]) == seen
        # Still a -32602 for a _meta without capabilities, after all those were cached.
        bare = {"io.modelcontextprotocol/protocolVersion": MODERN}
        status, answer = await client.post(call(99, meta=bare), named(b"echo"))
        assert status == 400 and answer["error"]["code"] == -32602


def chatty_server() -> Server:
    """``echo`` answers at once; ``chat`` sends a log message first (an SSE answer)."""
    from mcpbind.generated.v2026_07_28 import methods as modern, types as modern_types

    server = Server("chatty")

    @server.handler(modern.TOOLS_CALL)
    async def call_tool(params: Any, context: RequestContext) -> Any:
        if params.name == "chat":
            note = modern_types.LoggingMessageNotificationParams(level="info", data="hi")
            await context.send_notification(modern.NOTIFICATIONS_MESSAGE, note)
        return {"content": [{"type": "text", "text": params.name}], "resultType": "complete"}

    return server


async def post_sse(client: Asgi, body: Any, headers: list[tuple[bytes, bytes]]) -> bytes:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if not sent:
            return {"type": "http.request", "body": json.dumps(body).encode()}
        await anyio.sleep_forever()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers,
             "query_string": b"", "client": ("127.0.0.1", 1)}  # fmt: skip
    await client.app(scope, receive, send)
    return b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


async def test_sessions_of_stateless_requests_are_reused_only_when_left_clean() -> None:
    app = StreamableHTTPServer(chatty_server().serve)
    assert app.pool is None  # no pool without run(): a session per request
    async with asgi(app) as client:
        pool = app.pool
        assert pool is not None and pool.idle == []
        for _ in range(3):  # the same id from "different clients", one after the other
            status, answer = await client.post(call(1), named(b"echo"))
            assert status == 200 and answer["result"]["content"][0]["text"] == "echo"
        assert len(pool.idle) == 1
        kept = pool.idle[0]
        # An SSE answer (a notification came first) ends its session: never back in the pool.
        body = await post_sse(client, call(2, name="chat"), named(b"chat"))
        assert b'"notifications/message"' in body and b'"id":2' in body
        assert pool.idle == [] and kept.closed
        status, answer = await client.post(call(3), named(b"echo"))
        assert status == 200 and len(pool.idle) == 1 and pool.idle[0] is not kept
        last = pool.idle[0]
        # A refused request never reaches a session; the pooled one stays as it was.
        status, answer = await client.post(call(4), named(b"other"))
        assert status == 400 and pool.idle == [last]
    assert app.pool is None and last.closed  # shut down with the server
    assert pool.closed and pool.idle == []


async def test_the_pool_keeps_at_most_its_size_and_nothing_once_closed() -> None:
    app = StreamableHTTPServer(chatty_server().serve)
    async with asgi(app) as client:
        pool = app.pool
        assert pool is not None
        pool.size = 1
        first, second = pool.take(app, None), pool.take(app, None)
        assert first is not second  # none idle: each a new session, running
        assert pool.give_back(first) and not pool.give_back(second)
        second.terminate("not kept")
        assert pool.take(app, None) is first and pool.idle == []
        assert pool.give_back(first)
        status, _ = await client.post(call(1), named(b"echo"))
        assert status == 200 and pool.idle == [first]  # the idle one served it and came back
    assert pool.closed and first.closed and not pool.give_back(first)


def test_only_answers_that_end_their_request_free_the_session() -> None:
    """A task's result leaves its handler running: that session is never reused."""
    from mcpbind.runtime.transports.http._exchange import _finished

    def result(**members: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 1, "result": members}

    assert _finished(result(content=[]))  # no resultType: complete
    assert _finished(result(resultType="complete"))
    assert _finished(result(resultType="input_required", inputRequests={}))
    assert _finished({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "x"}})
    assert not _finished(result(resultType="task", taskId="t", status="working"))
    assert not _finished(None)  # answered by SSE, or nothing to answer
    assert not _finished([result()])


async def test_header_facts_are_kept_per_view_and_check_like_check_request() -> None:
    _intake._views.clear()
    view = _intake.header_view({"headers": named(b"echo")})
    assert view.facts() is view.facts()  # worked out once per header set
    assert (view.facts().method, view.facts().name) == ("tools/call", "echo")
    mcp = view.mcp()[0]
    request = call(1, text="a")
    wrong_name = call(1, name="other", text="a")
    no_meta = {**request, "params": {"name": "echo"}}
    other_method = {**request, "method": "prompts/get"}
    repeated = {**mcp, "mcp-name": ["echo", "echo"]}
    missing = {key: value for key, value in mcp.items() if key != "mcp-name"}
    for headers, message, version in [
        (mcp, request, MODERN),
        (mcp, wrong_name, MODERN),
        (mcp, no_meta, MODERN),
        (mcp, other_method, MODERN),
        (mcp, request, None),
        (mcp, request, "2099-01-01"),
        (repeated, request, MODERN),
        (missing, request, MODERN),
    ]:
        expected = check_request(headers, message, version)
        assert check_facts(HeaderFacts(headers), message, version) == expected
    assert check_facts(view.facts(), request, MODERN) is None
    refused = check_facts(view.facts(), wrong_name, MODERN)
    assert refused is not None and "Mcp-Name" in refused.message


async def test_a_lone_request_is_classified_once_and_held_at_its_body_length(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``parse_post`` classifies what it admits; its session takes the lone request as such
    (``Envelope.request``) and holds it at the body's length, with no second look."""
    classified: list[Any] = []
    sizes: list[int] = []
    classify, admit = rpc.classify, Admission.admit

    def counting(message: Any) -> Any:
        classified.append(message.get("id") if type(message) is dict else None)
        return classify(message)

    def recording(self: Admission, entry: Any, prepaid: bool = False) -> bool | None:
        sizes.append(entry.size)
        return admit(self, entry, prepaid)

    monkeypatch.setattr(rpc, "classify", counting)
    monkeypatch.setattr(Admission, "admit", recording)
    app = StreamableHTTPServer(build_dual_server().serve)
    async with asgi(app) as client:
        await client.post(call(1, text="a"), named(b"echo"))  # fetches the tool headers too
        classified.clear()
        sizes.clear()
        status, answer = await client.post(call(2, text="b"), named(b"echo"))
        assert status == 200 and answer["result"]["content"][0]["text"] == "b"
        assert classified == []  # a valid lone request: checked inline, never again
        assert sizes == [len(json.dumps(call(2, text="b")).encode())]
        # What the transport finds invalid is still refused there, never handed on.
        sizes.clear()
        status, answer = await client.post({"jsonrpc": "2.0", "id": 3, "method": 5}, BASE)
        assert status == 400 and answer["error"]["code"] == -32600 and sizes == []
