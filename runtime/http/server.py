"""The Streamable HTTP server transport (2025-03-26 onwards): one ASGI endpoint, many sessions.

Each MCP session gets a ``Connection`` (two memory streams) and its own task running the
given ``serve`` callable (usually ``Server.serve``), so the runtime never sees HTTP. The
transport's job is routing: every request a client POSTs opens a *stream* (an SSE response or
a pending JSON one), and everything the session sends with ``related_id`` set to that request
goes to that stream; unrelated messages go to the session's standalone ``GET`` stream. A
stream ends when the responses to all of its requests have been sent.

Streams are resumable: each event is recorded in the session's ``EventStore`` before it is
written, and ``GET`` with ``Last-Event-ID`` replays the rest of *that* stream, then continues
live. A client disconnecting never cancels the request (transports.md): the events keep going
to the store until the response, so nothing is lost.

Stateful sessions outlive single HTTP requests, so they run in a task group opened by
``run()``; used directly as an ASGI app the server opens it from the ``lifespan`` protocol
(uvicorn, hypercorn... run it). ``stateless=True`` needs no lifespan: each POST gets a fresh
session that lives exactly as long as that request, which is what horizontally scaled
deployments behind any ASGI server want.
"""

from __future__ import annotations

import logging
import math
import secrets
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from .. import _jsonrpc as rpc
from ..errors import INVALID_REQUEST, PARSE_ERROR
from ..transport import STREAM_BUFFER, Connection, Envelope
from ._common import (
    DEFAULT_PROTOCOL_VERSION,
    JSON,
    LAST_EVENT_ID,
    PRIMING_SINCE,
    PROTOCOL_VERSION,
    SESSION_ID,
    SSE,
    SUPPORTED_VERSIONS,
    accepts,
    encode_event,
)
from .event_store import EventStore, InMemoryEventStore
from .security import LOOPBACK_HOSTS, HostGuard

__all__ = ["HttpRequestContext", "SessionRunner", "StreamableHTTPServer"]

logger = logging.getLogger("mcpbind.runtime.http")

#: Runs one MCP session over a connection until its ``incoming`` ends (``Server.serve``).
SessionRunner = Callable[[Connection], Awaitable[None]]
RequestId = int | str

#: The JSON-RPC code for a transport-level refusal that has no better code (the SDKs agree).
CONNECTION_ERROR = -32000
#: Events buffered per attached stream consumer before the session waits for the client.
CONSUMER_BUFFER = 64
#: Unrelated messages kept while no ``GET`` stream is open, delivered when one opens.
BACKLOG = 64


async def _nothing_to_close() -> None:
    return None


@dataclass(frozen=True, slots=True)
class HttpRequestContext:
    """The ``Envelope.context`` of a message that arrived over HTTP: handlers reach the HTTP
    request (headers, client address, auth set by middleware) as ``context.transport_context``.

    ``close_sse_stream()`` ends the SSE response of this POST *without* ending its stream
    (SEP-1699 polling): the client reconnects with ``Last-Event-ID`` after the ``retry`` delay
    and gets the rest, so a server can avoid holding long-lived connections.
    """

    request: Request
    session_id: str | None
    close_sse_stream: Callable[[], Awaitable[None]] = _nothing_to_close


def _error_body(code: int, message: str, request_id: RequestId | None = None) -> bytes:
    return rpc.encode(rpc.error_response(request_id, code, message))


def _error(
    status: int, code: int, message: str, request_id: RequestId | None = None, **headers: str
) -> Response:
    """An HTTP error whose body is a JSON-RPC error (without id unless one is known)."""
    return Response(
        _error_body(code, message, request_id), status, headers=headers or None, media_type=JSON
    )


class _TooLarge(Exception):
    pass


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _TooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise _TooLarge
    return bytes(body)


class _Stream:
    """One logical SSE stream: a POST's answers, or the session's standalone GET stream.

    ``consumer`` is the channel of the HTTP response currently writing it, if one is
    attached; ``pending`` holds the request ids whose responses are still due.
    """

    __slots__ = ("_receiver", "consumer", "done", "id", "pending")

    def __init__(self, stream_id: str, pending: Iterable[RequestId] = ()) -> None:
        self.id = stream_id
        self.pending: set[RequestId] = set(pending)
        self.consumer: MemoryObjectSendStream[tuple[str | None, Any]] | None = None
        self._receiver: MemoryObjectReceiveStream[tuple[str | None, Any]] | None = None
        self.done = False

    def attach(self) -> MemoryObjectReceiveStream[tuple[str | None, Any]]:
        """A new channel for the response writing this stream; replaces an older one."""
        send, receive = anyio.create_memory_object_stream[tuple[str | None, Any]](CONSUMER_BUFFER)
        if self.consumer is not None:
            self.consumer.close()
        self.consumer, self._receiver = send, receive
        if self.done:
            send.close()
        return receive

    def detach(self, receive: MemoryObjectReceiveStream[tuple[str | None, Any]]) -> None:
        """The response writing ``receive`` is gone (finished or disconnected)."""
        receive.close()
        if self._receiver is receive and self.consumer is not None:
            self.consumer.close()
            self.consumer = None

    def disconnect(self) -> None:
        """Close the attached response but keep the stream: later events wait for a resume."""
        if self.consumer is not None:
            self.consumer.close()
            self.consumer = None

    def finish(self) -> None:
        """All responses are out: end the stream and the response writing it."""
        self.done = True
        if self.consumer is not None:
            self.consumer.close()
            self.consumer = None


class _HttpSession:
    """One MCP session's transport side: its connection, streams and routing pump."""

    def __init__(self, owner: StreamableHTTPServer, session_id: str | None) -> None:
        self.owner = owner
        self.id = session_id
        self.store: EventStore | None = (
            owner.event_store_factory() if owner.event_store_factory else None
        )
        self._in_send, in_receive = anyio.create_memory_object_stream[Envelope](STREAM_BUFFER)
        out_send, self._out_receive = anyio.create_memory_object_stream[Envelope](STREAM_BUFFER)
        self.connection = Connection(in_receive, out_send, self._close_reason)
        self.streams: dict[str, _Stream] = {}
        self.by_request: dict[RequestId, _Stream] = {}
        self.standalone = _Stream(f"{secrets.token_hex(6)}-get")
        self.backlog: deque[tuple[str | None, Any]] = deque(maxlen=BACKLOG)
        self.scope = anyio.CancelScope()
        self.route_lock = anyio.Lock()
        self.protocol_version: str | None = None
        self.closed = False
        self.busy = 0
        self.last_active = anyio.current_time()
        self.ended = anyio.Event()
        self._reason: str | None = None

    def _close_reason(self) -> str | None:
        return self._reason

    # -- running ------------------------------------------------------------------------

    async def run(self) -> None:
        """Run the user's session and the pump until the session ends or is terminated."""
        try:
            with self.scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._pump)
                    try:
                        await self.owner.serve(self.connection)
                    except Exception:
                        logger.exception("MCP session %s failed", self.id)
                    tg.cancel_scope.cancel()
        finally:
            self._teardown()

    def terminate(self, reason: str) -> None:
        """End the session: no more input, streams closed, its task cancelled after a grace."""
        if self.closed:
            return
        self.closed = True
        self._reason = reason
        self._in_send.close()
        self.scope.deadline = min(
            self.scope.deadline, anyio.current_time() + self.owner.shutdown_grace
        )
        for stream in [*self.streams.values(), self.standalone]:
            stream.finish()

    def _teardown(self) -> None:
        self.closed = True
        self._in_send.close()
        self._out_receive.close()
        for stream in [*self.streams.values(), self.standalone]:
            stream.finish()
        self.streams.clear()
        self.by_request.clear()
        self.owner._forget(self)
        self.ended.set()

    async def _pump(self) -> None:
        """Route everything the session sends to the stream it belongs to."""
        async with self._out_receive:
            async for envelope in self._out_receive:
                async with self.route_lock:
                    await self._route(envelope)

    async def _route(self, envelope: Envelope) -> None:
        message = envelope.message
        related = envelope.related_id
        stream = self.by_request.get(related) if related is not None else self.standalone
        if stream is None:
            logger.debug("dropped a message for request %r, whose stream has ended", related)
            return
        is_response = type(message) is dict and "method" not in message
        if is_response and message.get("id") == related and self.protocol_version is None:
            result = message.get("result")
            if (
                type(result) is dict
                and type(result.get("protocolVersion")) is str
                and result.get("serverInfo")
            ):
                self.protocol_version = result["protocolVersion"]
        event_id = (
            await self.store.store_event(stream.id, message) if self.store is not None else None
        )
        if stream.consumer is not None:
            try:
                await stream.consumer.send((event_id, message))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                stream.consumer = None
        elif stream is self.standalone:
            self.backlog.append((event_id, message))
        if is_response and related in stream.pending:
            stream.pending.discard(related)
            del self.by_request[related]
            if not stream.pending:
                stream.finish()
                self.streams.pop(stream.id, None)

    async def deliver(self, messages: Sequence[Any], context: HttpRequestContext) -> None:
        """Hand client messages to the session; a cancellation also settles its stream."""
        for message in messages:
            if type(message) is dict and message.get("method") == "notifications/cancelled":
                params = message.get("params")
                rid = params.get("requestId") if type(params) is dict else None
                await self._abandon(rid)
            await self._in_send.send(Envelope(message, context))

    async def _abandon(self, request_id: Any) -> None:
        """A cancelled request gets no response, so its stream must not wait for one."""
        if not rpc.is_request_id(request_id):
            return
        async with self.route_lock:
            stream = self.by_request.pop(request_id, None)
            if stream is not None:
                stream.pending.discard(request_id)
                if not stream.pending:
                    stream.finish()
                    self.streams.pop(stream.id, None)

    def open_stream(self, request_ids: Sequence[RequestId]) -> _Stream:
        """A new stream for a POST, answering for its request ids."""
        stream = _Stream(f"{secrets.token_hex(6)}-{len(self.streams)}", request_ids)
        self.streams[stream.id] = stream
        for rid in request_ids:
            self.by_request[rid] = stream
        return stream

    def priming(self, version: str | None) -> bool:
        """Whether streams start with a priming event: only for clients that expect one."""
        return self.store is not None and (version or self.protocol_version or "") >= PRIMING_SINCE

    def touch(self) -> None:
        """Note activity, which postpones reaping."""
        self.last_active = anyio.current_time()


class StreamableHTTPServer:
    """The Streamable HTTP endpoint as an ASGI application.

    ``serve`` runs one MCP session on a ``Connection`` (pass ``Server.serve``). The endpoint
    answers at ``path`` (``None``: any path, for mounting under a prefix). ``json_response``
    answers POSTed requests with one JSON body instead of an SSE stream (messages a handler
    sends before its response are then dropped). ``allowed_hosts``/``allowed_origins`` are the
    DNS-rebinding allow-lists (see ``HostGuard``). ``event_store_factory`` makes one store per
    session (``None`` turns resumability off). ``session_idle_timeout`` reaps a session with no
    request in flight and no open stream for that long. ``max_sessions`` bounds live sessions
    (503 beyond). ``retry_ms`` is the ``retry`` advice of priming events. ``sse_keepalive``
    is the silence after which an SSE stream gets a comment line (``None``: never).
    """

    def __init__(
        self,
        serve: SessionRunner,
        *,
        path: str | None = "/mcp",
        stateless: bool = False,
        json_response: bool = False,
        allowed_hosts: Iterable[str] = LOOPBACK_HOSTS,
        allowed_origins: Iterable[str] | None = None,
        event_store_factory: Callable[[], EventStore] | None = InMemoryEventStore,
        retry_ms: int = 1000,
        max_body_bytes: int = 4 * 1024 * 1024,
        session_idle_timeout: float | None = 1800.0,
        max_sessions: int = 10_000,
        supported_versions: Sequence[str] = SUPPORTED_VERSIONS,
        shutdown_grace: float = 2.0,
        sse_keepalive: float | None = 15.0,
    ) -> None:
        self.serve = serve
        self.path = path
        self.stateless = stateless
        self.json_response = json_response
        self.guard = HostGuard(allowed_hosts, allowed_origins)
        self.event_store_factory = None if stateless else event_store_factory
        self.retry_ms = retry_ms
        self.max_body_bytes = max_body_bytes
        self.session_idle_timeout = session_idle_timeout
        self.max_sessions = max_sessions
        self.supported_versions = tuple(supported_versions)
        self.shutdown_grace = shutdown_grace
        self.sse_keepalive = sse_keepalive
        self.sessions: dict[str, _HttpSession] = {}
        self._tg: TaskGroup | None = None

    # -- lifetime -----------------------------------------------------------------------

    @asynccontextmanager
    async def run(self) -> AsyncIterator[StreamableHTTPServer]:
        """Host the sessions (and the idle reaper) while open; ends every session on exit.

        The ASGI lifespan calls this; call it yourself when mounting the app in a framework
        whose lifespan does not reach it (``lifespan=lambda app: server.run()``).
        """
        reaper = anyio.CancelScope()
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._reap, reaper)
            try:
                yield self
            finally:
                self._tg = None
                reaper.cancel()
                for session in list(self.sessions.values()):
                    session.terminate("the server is shutting down")
                tg.cancel_scope.deadline = anyio.current_time() + self.shutdown_grace

    async def _reap(self, scope: anyio.CancelScope) -> None:
        """End sessions idle longer than ``session_idle_timeout`` (read afresh on every pass,
        so it can be changed while serving); checks at least once a second."""
        with scope:
            while True:
                timeout = self.session_idle_timeout
                await anyio.sleep(max(0.05, min((timeout or 4.0) / 4, 1.0)))
                if timeout is None:
                    continue
                now = anyio.current_time()
                for session in list(self.sessions.values()):
                    if session.busy == 0 and now - session.last_active > timeout:
                        logger.info(
                            "session %s idle for %.0f s; ended",
                            session.id,
                            now - session.last_active,
                        )
                        session.terminate("the session expired")
                        self._forget(session)

    def _forget(self, session: _HttpSession) -> None:
        if session.id is not None and self.sessions.get(session.id) is session:
            del self.sessions[session.id]

    # -- ASGI ---------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if self.path is not None and scope["path"].rstrip("/") != self.path.rstrip("/"):
            await Response("Not Found", 404)(scope, receive, send)
            return
        request = Request(scope, receive)
        refusal = self._check_origin(request)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        method = request.method
        if method == "POST":
            await self._post(request, scope, receive, send)
        elif method == "GET":
            await (await self._get(request))(scope, receive, send)
        elif method == "DELETE":
            await self._delete(request)(scope, receive, send)
        else:
            await _error(405, CONNECTION_ERROR, "Method not allowed", allow="GET, POST, DELETE")(
                scope, receive, send
            )

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        try:
            async with self.run():
                await send({"type": "lifespan.startup.complete"})
                while (await receive())["type"] != "lifespan.shutdown":
                    pass
        except Exception as exc:
            await send({"type": "lifespan.shutdown.failed", "message": repr(exc)})
            return
        await send({"type": "lifespan.shutdown.complete"})

    def _check_origin(self, request: Request) -> Response | None:
        if not self.guard.host_ok(request.headers.get("host")):
            return _error(403, CONNECTION_ERROR, "Forbidden: Host not allowed")
        if not self.guard.origin_ok(request.headers.get("origin")):
            return _error(403, CONNECTION_ERROR, "Forbidden: Origin not allowed")
        return None

    def _check_version(self, request: Request) -> Response | None:
        version = request.headers.get(PROTOCOL_VERSION)
        if version is not None and version.strip() not in self.supported_versions:
            supported = ", ".join(self.supported_versions)
            return _error(
                400,
                CONNECTION_ERROR,
                f"Unsupported MCP-Protocol-Version {version!r}; supported: {supported}",
            )
        return None

    def _session_for(self, request: Request) -> _HttpSession | Response:
        sid = request.headers.get(SESSION_ID)
        if not sid:
            return _error(400, CONNECTION_ERROR, "Bad Request: missing Mcp-Session-Id header")
        session = self.sessions.get(sid)
        if session is None or session.closed:
            return _error(404, CONNECTION_ERROR, "Session not found")
        return session

    # -- POST ---------------------------------------------------------------------------

    async def _parse_post(self, request: Request) -> tuple[list[Any], bool] | Response:
        """The POSTed messages and whether it was a batch, or the error response."""
        if not (
            accepts(request.headers.get("accept"), JSON)
            or accepts(request.headers.get("accept"), SSE)
        ):
            return _error(
                406,
                CONNECTION_ERROR,
                "Not Acceptable: Accept must include application/json and text/event-stream",
            )
        content_type = request.headers.get("content-type", "")
        if content_type.split(";", 1)[0].strip().lower() != JSON:
            return _error(
                415,
                CONNECTION_ERROR,
                "Unsupported Media Type: Content-Type must be application/json",
            )
        try:
            body = await _read_body(request, self.max_body_bytes)
        except _TooLarge:
            return _error(
                413,
                CONNECTION_ERROR,
                f"Payload Too Large: the limit is {self.max_body_bytes} bytes",
            )
        parsed = rpc.decode(body)
        if isinstance(parsed, rpc.Malformed):
            return _error(400, PARSE_ERROR, f"Parse error: {parsed.reason}")
        batch = type(parsed) is list
        messages: list[Any] = parsed if batch else [parsed]
        if not messages:
            return _error(400, INVALID_REQUEST, "Invalid Request: empty batch")
        for message in messages:
            kind = rpc.classify(message)
            if isinstance(kind, rpc.Invalid):
                return _error(400, kind.code, f"Invalid Request: {kind.reason}", kind.request_id)
        return messages, batch

    async def _post(self, request: Request, scope: Scope, receive: Receive, send: Send) -> None:
        parsed = await self._parse_post(request)
        if isinstance(parsed, Response):
            await parsed(scope, receive, send)
            return
        messages, batch = parsed
        requests = [m for m in messages if "method" in m and "id" in m]
        initialize = any(m["method"] == "initialize" for m in requests)
        if initialize and len(messages) > 1:
            await _error(400, INVALID_REQUEST, "Invalid Request: initialize must not be batched")(
                scope, receive, send
            )
            return
        if not initialize:
            refusal = self._check_version(request)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        if self.stateless:
            await self._post_stateless(request, messages, batch, initialize, scope, receive, send)
            return
        if initialize and not request.headers.get(SESSION_ID):
            found: _HttpSession | Response = self._new_session()
        else:
            found = self._session_for(request)
        if isinstance(found, Response):
            await found(scope, receive, send)
            return
        session = found
        session.busy += 1
        session.touch()
        try:
            response = await self._exchange(session, request, messages, batch)
            await response(scope, receive, send)
        finally:
            session.busy -= 1
            session.touch()

    def _new_session(self) -> _HttpSession | Response:
        if self._tg is None:
            return _error(
                500,
                CONNECTION_ERROR,
                "the server's task group is not running: serve the app with lifespan "
                "enabled, or open StreamableHTTPServer.run()",
            )
        if len(self.sessions) >= self.max_sessions:
            return _error(
                503,
                CONNECTION_ERROR,
                "Service Unavailable: too many sessions",
                **{"retry-after": "5"},
            )
        session = _HttpSession(self, secrets.token_urlsafe(24))
        assert session.id is not None
        self.sessions[session.id] = session
        self._tg.start_soon(session.run)
        return session

    async def _exchange(
        self, session: _HttpSession, request: Request, messages: list[Any], batch: bool
    ) -> Response:
        """Deliver POSTed messages; answer 202, or the stream/JSON carrying the responses."""
        request_ids: list[RequestId] = [m["id"] for m in messages if "method" in m and "id" in m]
        headers = {SESSION_ID: session.id} if session.id is not None else {}
        if not request_ids:
            await session.deliver(messages, HttpRequestContext(request, session.id))
            return Response(status_code=202, headers=headers)
        if len(set(request_ids)) != len(request_ids):
            return _error(400, INVALID_REQUEST, "Invalid Request: a batch repeats a request id")
        async with session.route_lock:
            clash = next((rid for rid in request_ids if rid in session.by_request), None)
            if clash is not None:
                return _error(
                    400,
                    INVALID_REQUEST,
                    "Invalid Request: this request id is already in use",
                    clash,
                )
            stream = session.open_stream(request_ids)
            channel = stream.attach()

        async def close_sse_stream() -> None:
            async with session.route_lock:
                stream.disconnect()

        context = HttpRequestContext(request, session.id, close_sse_stream)
        use_sse = not self.json_response and accepts(request.headers.get("accept"), SSE)
        if not use_sse and not accepts(request.headers.get("accept"), JSON):
            use_sse = True
        version = request.headers.get(PROTOCOL_VERSION)
        if version is None and messages[0].get("method") == "initialize":
            params = messages[0].get("params")
            version = params.get("protocolVersion") if type(params) is dict else None
        priming = await self._priming_event(session, stream, version) if use_sse else None
        try:
            await session.deliver(messages, context)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            channel.close()
            return _error(404, CONNECTION_ERROR, "Session not found")
        if use_sse:
            return StreamingResponse(
                self._sse(session, stream, channel, priming),
                media_type=SSE,
                headers=_sse_headers(headers),
            )
        responses: list[Any] = []
        try:
            async for _event_id, message in channel:
                if "method" not in message:
                    responses.append(message)
        finally:
            stream.detach(channel)
        if not responses:
            return Response(status_code=202, headers=headers)
        body = responses if batch else responses[0]
        return Response(rpc.encode(body), 200, headers=headers, media_type=JSON)

    async def _priming_event(
        self, session: _HttpSession, stream: _Stream, version: str | None
    ) -> bytes | None:
        if not session.priming(version) or session.store is None:
            return None
        event_id = await session.store.store_event(stream.id, None)
        return encode_event(event_id=event_id, retry_ms=self.retry_ms)

    async def _sse(
        self,
        session: _HttpSession,
        stream: _Stream,
        channel: MemoryObjectReceiveStream[tuple[str | None, Any]],
        first: bytes | None,
        replay: Sequence[tuple[str | None, Any]] = (),
    ) -> AsyncIterator[bytes]:
        """Write one SSE response; a client disconnect just detaches it (the request goes on).

        A comment line goes out after ``sse_keepalive`` seconds of silence: proxies keep the
        stream open, and a client that vanished without closing is found out by the failed
        write instead of holding its session busy (unreapable) forever.
        """
        session.busy += 1
        keepalive = self.sse_keepalive if self.sse_keepalive is not None else math.inf
        try:
            if first is not None:
                yield first
            for event_id, message in replay:
                yield encode_event(message, event_id=event_id)
            while True:
                item: tuple[str | None, Any] | None = None
                with anyio.move_on_after(keepalive):
                    try:
                        item = await channel.receive()
                    except anyio.EndOfStream:
                        return
                if item is None:
                    yield b": keepalive\n\n"
                else:
                    yield encode_event(item[1], event_id=item[0])
        finally:
            stream.detach(channel)
            session.busy -= 1
            session.touch()

    async def _post_stateless(
        self,
        request: Request,
        messages: list[Any],
        batch: bool,
        initialize: bool,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        """A session just for this POST: pre-initialised unless the POST is ``initialize``."""
        session = _HttpSession(self, None)
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.run)
            try:
                if not initialize and any("method" in m and "id" in m for m in messages):
                    version = (
                        request.headers.get(PROTOCOL_VERSION) or DEFAULT_PROTOCOL_VERSION
                    ).strip()
                    await _preinitialize(session, version, HttpRequestContext(request, None))
                response = await self._exchange(session, request, messages, batch)
                await response(scope, receive, send)
            finally:
                session.terminate("the request is complete")

    # -- GET and DELETE -----------------------------------------------------------------

    async def _get(self, request: Request) -> Response:
        if self.stateless:
            return _error(
                405,
                CONNECTION_ERROR,
                "Method not allowed: a stateless server has no GET stream",
                allow="POST",
            )
        if not accepts(request.headers.get("accept"), SSE):
            return _error(
                406, CONNECTION_ERROR, "Not Acceptable: Accept must include text/event-stream"
            )
        refusal = self._check_version(request)
        if refusal is not None:
            return refusal
        found = self._session_for(request)
        if isinstance(found, Response):
            return found
        session = found
        session.touch()
        headers = _sse_headers({SESSION_ID: session.id} if session.id else {})
        last_event_id = request.headers.get(LAST_EVENT_ID)
        if last_event_id and session.store is not None:
            async with session.route_lock:
                replayed = await session.store.replay_events_after(last_event_id.strip())
                if replayed is None:
                    return _error(400, CONNECTION_ERROR, "Bad Request: unknown Last-Event-ID")
                stream_id, events = replayed
                stream = session.streams.get(stream_id)
                if stream is None and stream_id == session.standalone.id:
                    stream = session.standalone
                if stream is None:
                    stream = _Stream(stream_id)
                    stream.done = True
                channel = stream.attach()
                if stream is session.standalone:
                    session.backlog.clear()
            return StreamingResponse(
                self._sse(session, stream, channel, None, events), media_type=SSE, headers=headers
            )
        async with session.route_lock:
            standalone = session.standalone
            if standalone.consumer is not None and not standalone.done:
                return _error(
                    409, CONNECTION_ERROR, "Conflict: a GET stream is already open for this session"
                )
            channel = standalone.attach()
            backlog = list(session.backlog)
            session.backlog.clear()
        priming = await self._priming_event(
            session, standalone, request.headers.get(PROTOCOL_VERSION)
        )
        return StreamingResponse(
            self._sse(session, standalone, channel, priming, backlog),
            media_type=SSE,
            headers=headers,
        )

    def _delete(self, request: Request) -> Response:
        if self.stateless:
            return _error(
                405,
                CONNECTION_ERROR,
                "Method not allowed: a stateless server has no sessions",
                allow="POST",
            )
        found = self._session_for(request)
        if isinstance(found, Response):
            return found
        found.terminate("the client ended the session")
        self._forget(found)
        return Response(status_code=200)


def _sse_headers(extra: dict[str, str]) -> dict[str, str]:
    """SSE responses must not be cached or buffered by proxies (nginx honours the last one)."""
    return {"cache-control": "no-cache, no-transform", "x-accel-buffering": "no", **extra}


async def _preinitialize(session: _HttpSession, version: str, context: HttpRequestContext) -> None:
    """Bring a stateless session to operating with a synthetic handshake at ``version``.

    The runtime has no way yet to start a session as already initialised (see
    runtime/HTTP-NOTES.md); replaying the handshake over the connection is the clean
    stand-in: the session's own lifecycle checks it, and the answer stays inside the process.
    """
    request_id = f"mcpbind-stateless-{secrets.token_hex(4)}"
    async with session.route_lock:
        stream = session.open_stream([request_id])
        channel = stream.attach()
    initialize = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "mcpbind-stateless-http", "version": "0"},
        },
    }
    await session.deliver([initialize], context)
    with channel:
        async for _event_id, _message in channel:
            pass
    session.protocol_version = version
    await session.deliver([{"jsonrpc": "2.0", "method": "notifications/initialized"}], context)
