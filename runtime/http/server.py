"""The Streamable HTTP server transport (2025-03-26 onwards): one ASGI endpoint, many sessions.

Each MCP session gets a ``Connection`` and its own task running the given ``serve`` callable
(usually ``Server.serve``), so the runtime never sees HTTP. The transport's job is routing:
every request a client POSTs opens a *stream* (an SSE response or a pending JSON one), and
everything the session sends with ``related_id`` set to that request goes to that stream;
unrelated messages go to the session's standalone ``GET`` stream. A stream ends when the
responses to all of its requests have been sent.

The connection's two ends are this module's own objects, not memory streams: the session's
``outgoing`` sink routes each message as it is sent, straight to the stream waiting for it (no
routing task in between), and ``incoming`` is a queue the POST handler fills. A POST therefore
costs three event-loop hops: to the session's reading task, to the handler's task, and back to
the POST's task. The ASGI side is raw (no request or response objects on the hot path).

By default a POST whose answer is ready before anything else related to it, within
``sse_after`` seconds, gets a plain JSON response; once the handler sends a notification or a
request first (or takes longer, or closes the stream) the answer becomes an SSE stream, primed
for resumption. ``json_response=True`` always answers JSON, ``False`` always SSE.

Streams are resumable: each SSE event is recorded in the session's ``EventStore`` before it is
written, and ``GET`` with ``Last-Event-ID`` replays the rest of *that* stream, then continues
live. A client disconnecting never cancels the request (transports.md): the events keep going
to the store until the response, so nothing is lost.

Stateful sessions outlive single HTTP requests, so they run in a task group opened by
``run()``; used directly as an ASGI app the server opens it from the ``lifespan`` protocol
(uvicorn, hypercorn... run it). ``stateless=True`` needs no lifespan: each POST gets a fresh
session, started as already initialised at the request's ``MCP-Protocol-Version``, that lives
exactly as long as that request, which is what horizontally scaled deployments want.
"""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import sniffio
from anyio.abc import TaskGroup
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from .. import _jsonrpc as rpc
from .._lifecycle import ASSUME_INITIALIZED
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
CONNECTION_ERROR: Final = -32000
#: SSE events queued for an attached response before the sender waits for the client.
CONSUMER_BUFFER: Final = 64
#: Unrelated messages kept while no ``GET`` stream is open, delivered when one opens.
BACKLOG: Final = 64
#: How long a POST's SSE response runs before a task starts watching for the client leaving:
#: most answer sooner, and that watcher (a task per response) was a fifth of the POST's cost.
WATCH_AFTER: Final = 0.25

#: Modes of a POST's stream: answered as JSON, as SSE, or not decided yet (``None``).
_JSON: Final = "json"
_SSE: Final = "sse"


async def _nothing_to_close() -> None:
    return None


class HttpRequestContext:
    """The ``Envelope.context`` of a message that arrived over HTTP: handlers reach the HTTP
    request (headers, client address, auth set by middleware) as ``context.transport_context``.

    ``close_sse_stream()`` ends the SSE response of this POST *without* ending its stream
    (SEP-1699 polling): the client reconnects with ``Last-Event-ID`` after the ``retry`` delay
    and gets the rest, so a server can avoid holding long-lived connections. A POST not yet
    answered becomes an SSE stream for that. ``request`` is built on first use.
    """

    __slots__ = ("_request", "_scope", "close_sse_stream", "session_id")

    def __init__(
        self,
        request: Request | Scope,
        session_id: str | None,
        close_sse_stream: Callable[[], Awaitable[None]] = _nothing_to_close,
    ) -> None:
        self._request = request if isinstance(request, Request) else None
        self._scope: Scope = request.scope if isinstance(request, Request) else request
        self.session_id = session_id
        self.close_sse_stream = close_sse_stream

    @property
    def request(self) -> Request:
        """The HTTP request (its body already read)."""
        if self._request is None:
            self._request = Request(self._scope)
        return self._request


# -- waking one task -----------------------------------------------------------------------------


class _Signal:
    """Wakes the one task waiting on it (a wake with nobody waiting is dropped: waiters check
    their condition first). A bare future on asyncio, where ``anyio.Event`` plus a cancel
    scope per wait measured several microseconds; an ``anyio.Event`` on other backends."""

    __slots__ = ("_native", "_waiter")

    def __init__(self, native: bool) -> None:
        self._native = native
        self._waiter: Any = None

    def set(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if self._native:
                if not waiter.done():
                    waiter.set_result(None)
            else:
                waiter.set()

    async def wait(self, timeout: float = math.inf) -> None:
        """Until ``set()`` or ``timeout`` seconds, whichever comes first."""
        if not self._native:
            event = self._waiter = anyio.Event()
            with anyio.move_on_after(timeout):
                await event.wait()
            return
        loop = asyncio.get_running_loop()
        future = self._waiter = loop.create_future()
        timer = loop.call_later(timeout, _expire, future) if timeout < math.inf else None
        try:
            await future
        finally:
            if self._waiter is future:
                self._waiter = None
            if timer is not None:
                timer.cancel()


def _expire(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _native() -> bool:
    try:
        return sniffio.current_async_library() == "asyncio"
    except sniffio.AsyncLibraryNotFoundError:
        return False


class _Lock:
    """Mutual exclusion for routing that awaits the event store. Taking it free costs an
    attribute check: ``anyio.Lock`` looks up the current task and checks for cancellation
    each time, a few percent of a POST with an SSE answer. Ownership passes to the next
    waiter in order."""

    __slots__ = ("_held", "_waiters")

    def __init__(self) -> None:
        self._held = False
        self._waiters: deque[anyio.Event] = deque()

    async def __aenter__(self) -> None:
        if not self._held:
            self._held = True
            return
        waiter = anyio.Event()
        self._waiters.append(waiter)
        try:
            await waiter.wait()
        except BaseException:
            if waiter.is_set():
                self._release()  # it was handed to us as we were cancelled: pass it on
            else:
                self._waiters.remove(waiter)
            raise

    async def __aexit__(self, *exc_info: object) -> None:
        self._release()

    def _release(self) -> None:
        if self._waiters:
            self._waiters.popleft().set()
        else:
            self._held = False


# -- the session's incoming side -----------------------------------------------------------------


class _Inbox:
    """The session's ``incoming``: the POST handlers put messages, the session takes them.

    Bounded like the memory stream it replaces: a POST waits while ``STREAM_BUFFER`` messages
    are unread (the session holds back when its handlers are saturated).
    """

    __slots__ = ("_ended", "_items", "_reader_gone", "_signal", "_space")

    def __init__(self, native: bool) -> None:
        self._items: deque[Envelope] = deque()
        self._signal = _Signal(native)
        self._space: anyio.Event | None = None
        self._ended = False
        self._reader_gone = False

    # MessageSource, for the session
    def receive_nowait(self) -> Envelope:
        if self._items:
            envelope = self._items.popleft()
            if self._space is not None and len(self._items) < STREAM_BUFFER:
                self._space.set()
                self._space = None
            return envelope
        if self._ended:
            raise anyio.EndOfStream
        raise anyio.WouldBlock

    async def receive(self) -> Envelope:
        while True:
            try:
                return self.receive_nowait()
            except anyio.WouldBlock:
                await self._signal.wait()

    def close(self) -> None:
        self._reader_gone = True
        self._items.clear()
        if self._space is not None:
            self._space.set()

    # for the transport
    async def put(self, envelope: Envelope) -> None:
        while len(self._items) >= STREAM_BUFFER and not (self._ended or self._reader_gone):
            if self._space is None:
                self._space = anyio.Event()
            await self._space.wait()
        if self._reader_gone:
            raise anyio.BrokenResourceError
        if self._ended:
            raise anyio.ClosedResourceError
        self._items.append(envelope)
        self._signal.set()

    def end(self) -> None:
        """No more input: the session reads what is queued, then sees the end."""
        self._ended = True
        self._signal.set()
        if self._space is not None:
            self._space.set()


# -- streams -------------------------------------------------------------------------------------


class _Stream:
    """One logical stream: a POST's answers, or the session's standalone GET stream.

    ``mode`` is ``_JSON``, ``_SSE`` or ``None`` (not decided). ``queue`` holds what the attached
    response has still to write: response messages (JSON and undecided) or encoded SSE events.
    ``consumer`` is the token of the attached response, if any; ``pending`` holds the request
    ids whose responses are still due. ``id`` is given when the stream becomes SSE.
    """

    __slots__ = (
        "consumer",
        "done",
        "id",
        "mode",
        "pending",
        "queue",
        "signal",
        "space",
        "version",
    )

    def __init__(
        self,
        native: bool,
        pending: Iterable[RequestId] = (),
        mode: str | None = _SSE,
        version: str | None = None,
        stream_id: str | None = None,
    ) -> None:
        self.id = stream_id
        self.mode = mode
        self.version = version
        self.pending: set[RequestId] = set(pending)
        self.queue: deque[Any] = deque()
        self.signal = _Signal(native)
        self.space: anyio.Event | None = None
        self.consumer: int | None = None
        self.done = False

    def attach(self, token: int) -> None:
        """A new response writes this stream from now on; an older one ends."""
        if self.consumer is not None:
            self.signal.set()
        self.consumer = token

    def detach(self, token: int) -> None:
        """The response ``token`` is gone (finished or disconnected); the stream goes on."""
        if self.consumer == token:
            self.consumer = None
            self.signal.set()
            self.drained()

    def drained(self) -> None:
        if self.space is not None:
            self.space.set()
            self.space = None

    def take(self) -> bytes:
        """Everything queued for an SSE response, as one chunk."""
        queue = self.queue
        if not queue:
            return b""
        chunk = queue.popleft() if len(queue) == 1 else b"".join(queue)
        queue.clear()
        self.drained()
        return chunk


class _HttpSession:
    """One MCP session's transport side: its connection, streams and routing.

    It is the connection's ``outgoing`` sink: ``send_nowait`` routes a response to a JSON or
    undecided stream at once; anything needing the event store (SSE, the GET stream) raises
    ``WouldBlock`` so that the session awaits ``send``, which routes under the session's lock.
    """

    def __init__(
        self, owner: StreamableHTTPServer, session_id: str | None, assume: str | None = None
    ) -> None:
        self.owner = owner
        self.id = session_id
        self.native = _native()
        #: ``anyio.current_time`` without its backend lookup: the loop's clock on asyncio.
        self.clock: Callable[[], float] = (
            asyncio.get_running_loop().time if self.native else anyio.current_time
        )
        self.store: EventStore | None = (
            owner.event_store_factory() if owner.event_store_factory else None
        )
        self.inbox = _Inbox(self.native)
        extra: dict[str, Any] = {ASSUME_INITIALIZED: assume} if assume is not None else {}
        self.connection = Connection(self.inbox, self, self._close_reason, extra)
        self.streams: dict[str, _Stream] = {}
        self.by_request: dict[RequestId, _Stream] = {}
        self._prefix = secrets.token_hex(4)
        self._next_stream = 0
        self._next_token = 0
        self.standalone = _Stream(self.native, stream_id=f"{self._prefix}-get")
        self.scope = anyio.CancelScope()
        self.lock = _Lock()
        self.protocol_version: str | None = None
        self.closed = False
        self._outgoing_closed = False
        self.busy = 0
        self.last_active = self.clock()
        self.ended = anyio.Event()
        self._reason: str | None = None

    def _close_reason(self) -> str | None:
        return self._reason

    # -- running ------------------------------------------------------------------------

    async def run(self) -> None:
        """Run the user's session until it ends or is terminated."""
        try:
            with self.scope:
                try:
                    await self.owner.serve(self.connection)
                except Exception:
                    logger.exception("MCP session %s failed", self.id)
        finally:
            self._teardown()

    def terminate(self, reason: str) -> None:
        """End the session: no more input, streams closed, its task cancelled after a grace."""
        if self.closed:
            return
        self.closed = True
        self._reason = reason
        self.inbox.end()
        self.scope.deadline = min(
            self.scope.deadline, anyio.current_time() + self.owner.shutdown_grace
        )
        self._finish_all()

    def _teardown(self) -> None:
        self.closed = True
        self._outgoing_closed = True
        self.inbox.end()
        self.inbox.close()
        self._finish_all()
        self.streams.clear()
        self.by_request.clear()
        self.owner._forget(self)
        self.ended.set()

    def _finish_all(self) -> None:
        for stream in {*self.streams.values(), *self.by_request.values(), self.standalone}:
            stream.done = True
            stream.signal.set()
            stream.drained()

    def token(self) -> int:
        """A fresh token for a response attaching to a stream."""
        self._next_token += 1
        return self._next_token

    # -- MessageSink: what the session sends -----------------------------------------------

    def send_nowait(self, envelope: Envelope) -> None:
        if self._outgoing_closed:
            raise anyio.ClosedResourceError
        related = envelope.related_id
        if related is None:
            raise anyio.WouldBlock
        stream = self.by_request.get(related)
        if stream is None:
            logger.debug("dropped a message for request %r, whose stream has ended", related)
            return
        if stream.mode == _SSE:
            raise anyio.WouldBlock
        message = envelope.message
        if type(message) is dict and "method" not in message:
            self._answer(stream, related, message)
        elif stream.mode == _JSON:
            logger.debug("dropped a message for request %r: a JSON response holds none", related)
        else:
            raise anyio.WouldBlock  # sent before the answer: the POST becomes an SSE stream

    async def send(self, envelope: Envelope) -> None:
        if self._outgoing_closed:
            raise anyio.ClosedResourceError
        async with self.lock:
            stream = await self._route(envelope)
        while (
            stream is not None
            and stream.consumer is not None
            and len(stream.queue) > CONSUMER_BUFFER
            and not stream.done
        ):
            space = stream.space = stream.space or anyio.Event()
            await space.wait()

    def close(self) -> None:
        self._outgoing_closed = True

    def _answer(self, stream: _Stream, related: RequestId, message: dict[str, Any]) -> None:
        """A response for a JSON or undecided stream: queue it; settle the request."""
        if self.protocol_version is None:
            self._learn_version(message, related)
        stream.queue.append(message)
        self._settle(stream, related)

    def _learn_version(self, message: dict[str, Any], related: RequestId) -> None:
        result = message.get("result")
        if (
            message.get("id") == related
            and type(result) is dict
            and type(result.get("protocolVersion")) is str
            and result.get("serverInfo")
        ):
            self.protocol_version = result["protocolVersion"]

    def _settle(self, stream: _Stream, related: RequestId) -> None:
        if related in stream.pending:
            stream.pending.discard(related)
            del self.by_request[related]
            if not stream.pending:
                self._finish(stream)

    def _finish(self, stream: _Stream) -> None:
        stream.done = True
        stream.signal.set()
        if stream.id is not None:
            self.streams.pop(stream.id, None)

    async def _route(self, envelope: Envelope) -> _Stream | None:
        """Route under the lock; returns the stream whose consumer may need to catch up."""
        message = envelope.message
        related = envelope.related_id
        stream = self.by_request.get(related) if related is not None else self.standalone
        if stream is None:
            logger.debug("dropped a message for request %r, whose stream has ended", related)
            return None
        is_response = type(message) is dict and "method" not in message
        if stream.mode != _SSE:
            if is_response:
                assert related is not None
                self._answer(stream, related, message)
                return None
            if stream.mode == _JSON:
                return None
            await self.commit_sse(stream)
        event_id = (
            await self.store.store_event(stream.id, message)
            if self.store is not None and stream.id is not None
            else None
        )
        if stream.consumer is not None:
            stream.queue.append(encode_event(message, event_id=event_id))
            stream.signal.set()
        elif stream is self.standalone:
            stream.queue.append(encode_event(message, event_id=event_id))
            if len(stream.queue) > BACKLOG:
                stream.queue.popleft()
        if is_response and related is not None:
            if self.protocol_version is None:
                self._learn_version(message, related)
            self._settle(stream, related)
        return stream

    async def commit_sse(self, stream: _Stream) -> None:
        """Make an undecided stream SSE (call under the lock): it gets an id, a priming event
        if the client expects one, and the responses it already holds become events."""
        if stream.mode == _SSE:
            return
        stream.mode = _SSE
        self._next_stream += 1
        stream.id = f"{self._prefix}-{self._next_stream}"
        if not stream.done:
            self.streams[stream.id] = stream
        held = list(stream.queue)
        stream.queue.clear()
        priming = await self.priming_event(stream)
        if priming is not None:
            stream.queue.append(priming)
        for message in held:
            event_id = (
                await self.store.store_event(stream.id, message) if self.store is not None else None
            )
            stream.queue.append(encode_event(message, event_id=event_id))
        stream.signal.set()

    async def priming_event(self, stream: _Stream) -> bytes | None:
        """The first event of an SSE stream, stored: only for clients that expect one."""
        if self.store is None or stream.id is None:
            return None
        if (stream.version or self.protocol_version or "") < PRIMING_SINCE:
            return None
        event_id = await self.store.store_event(stream.id, None)
        return encode_event(event_id=event_id, retry_ms=self.owner.retry_ms)

    async def close_sse_stream(self, stream: _Stream) -> None:
        """End the POST's response but not its stream (``HttpRequestContext.close_sse_stream``).

        An undecided POST becomes SSE for it; one answered as JSON (by option, or because the
        client accepts nothing else) has no stream to close, so this does nothing there."""
        if stream.mode == _JSON:
            return
        async with self.lock:
            await self.commit_sse(stream)
            if stream.consumer is not None:
                stream.consumer = None
                stream.signal.set()

    # -- what the client sends ----------------------------------------------------------------

    async def deliver(self, messages: Sequence[Any], context: HttpRequestContext) -> None:
        """Hand client messages to the session; a cancellation also settles its stream."""
        for message in messages:
            if message.get("method") == "notifications/cancelled":
                params = message.get("params")
                self._abandon(params.get("requestId") if type(params) is dict else None)
            await self.inbox.put(Envelope(message, context))

    def _abandon(self, request_id: Any) -> None:
        """A cancelled request gets no response, so its stream must not wait for one."""
        if rpc.is_request_id(request_id):
            stream = self.by_request.get(request_id)
            if stream is not None:
                self._settle(stream, request_id)

    def open_stream(
        self, request_ids: Sequence[RequestId], mode: str | None, version: str | None
    ) -> _Stream:
        """A new stream for a POST, answering for its request ids."""
        stream = _Stream(self.native, request_ids, mode, version)
        for rid in request_ids:
            self.by_request[rid] = stream
        return stream

    def touch(self) -> None:
        """Note activity, which postpones reaping."""
        self.last_active = self.clock()


# -- raw ASGI helpers --------------------------------------------------------------------------


#: The request headers the transport reads (handlers reach all of them through ``request``).
_READ_HEADERS: Final = {
    name.encode(): name
    for name in (
        "host",
        "origin",
        "accept",
        "content-type",
        "content-length",
        SESSION_ID,
        PROTOCOL_VERSION,
        LAST_EVENT_ID,
    )
}


def _headers(scope: Scope) -> dict[str, str]:
    """The headers the transport reads, by lower-case name (the first of repeated ones, as
    starlette); decoding only these saved a few percent of a POST."""
    found: dict[str, str] = {}
    for raw, value in scope["headers"]:
        name = _READ_HEADERS.get(raw)
        if name is not None and name not in found:
            found[name] = value.decode("latin-1")
    return found


def _header_list(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]


async def _respond(
    send: Send,
    status: int,
    body: bytes = b"",
    content_type: str | None = JSON,
    headers: dict[str, str] | None = None,
) -> None:
    """A whole response in two ASGI messages (uvicorn writes each at once)."""
    raw = [(b"content-length", b"%d" % len(body))]
    if body and content_type is not None:
        raw.append((b"content-type", content_type.encode("latin-1")))
    if headers:
        raw += _header_list(headers)
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def _error(
    send: Send,
    status: int,
    code: int,
    message: str,
    request_id: RequestId | None = None,
    **headers: str,
) -> None:
    """An HTTP error whose body is a JSON-RPC error (without id unless one is known)."""
    body = rpc.encode(rpc.error_response(request_id, code, message))
    await _respond(send, status, body, JSON, headers or None)


class _TooLarge(Exception):
    pass


class _Disconnected(Exception):
    pass


async def _read_body(receive: Receive, headers: dict[str, str], limit: int) -> bytes:
    declared = headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _TooLarge
    body = b""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk: bytes = message.get("body", b"")
        body = body + chunk if body else chunk
        if len(body) > limit:
            raise _TooLarge
        if not message.get("more_body", False):
            return body


def _sse_headers(extra: dict[str, str]) -> list[tuple[bytes, bytes]]:
    """SSE responses must not be cached or buffered by proxies (nginx honours the last one)."""
    return [
        (b"content-type", SSE.encode()),
        (b"cache-control", b"no-cache, no-transform"),
        (b"x-accel-buffering", b"no"),
        *_header_list(extra),
    ]


class StreamableHTTPServer:
    """The Streamable HTTP endpoint as an ASGI application.

    ``serve`` runs one MCP session on a ``Connection`` (pass ``Server.serve``). The endpoint
    answers at ``path`` (``None``: any path, for mounting under a prefix). ``json_response``
    chooses how POSTed requests are answered: ``None`` (default) with one JSON body when the
    answer is ready within ``sse_after`` seconds and nothing related was sent before it, else
    with an SSE stream; ``True`` always JSON (messages a handler sends before its response are
    then dropped); ``False`` always SSE. ``allowed_hosts``/``allowed_origins`` are the
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
        json_response: bool | None = None,
        sse_after: float = 0.05,
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
        self._path = path.rstrip("/") if path is not None else None
        self.stateless = stateless
        self.json_response = json_response
        self.sse_after = sse_after
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
        self._accept_cache: dict[str, tuple[bool, bool]] = {}

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
        kind = scope["type"]
        if kind != "http":
            if kind == "lifespan":
                await self._lifespan(receive, send)
            return
        if self._path is not None and scope["path"].rstrip("/") != self._path:
            await _respond(send, 404, b"Not Found", "text/plain; charset=utf-8")
            return
        headers = _headers(scope)
        if not self.guard.host_ok(headers.get("host")):
            await _error(send, 403, CONNECTION_ERROR, "Forbidden: Host not allowed")
            return
        if not self.guard.origin_ok(headers.get("origin")):
            await _error(send, 403, CONNECTION_ERROR, "Forbidden: Origin not allowed")
            return
        method = scope["method"]
        if method == "POST":
            await self._post(scope, receive, send, headers)
        elif method == "GET":
            await self._get(scope, receive, send, headers)
        elif method == "DELETE":
            await self._delete(send, headers)
        else:
            await _error(
                send, 405, CONNECTION_ERROR, "Method not allowed", allow="GET, POST, DELETE"
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

    async def _check_version(self, send: Send, headers: dict[str, str]) -> bool:
        """Refuse (and say so) a ``MCP-Protocol-Version`` this endpoint does not serve."""
        version = headers.get(PROTOCOL_VERSION)
        if version is not None and version.strip() not in self.supported_versions:
            supported = ", ".join(self.supported_versions)
            await _error(
                send,
                400,
                CONNECTION_ERROR,
                f"Unsupported MCP-Protocol-Version {version!r}; supported: {supported}",
            )
            return False
        return True

    async def _session_for(self, send: Send, headers: dict[str, str]) -> _HttpSession | None:
        sid = headers.get(SESSION_ID)
        if not sid:
            await _error(send, 400, CONNECTION_ERROR, "Bad Request: missing Mcp-Session-Id header")
            return None
        session = self.sessions.get(sid)
        if session is None or session.closed:
            await _error(send, 404, CONNECTION_ERROR, "Session not found")
            return None
        return session

    # -- POST ---------------------------------------------------------------------------

    async def _parse_post(
        self, receive: Receive, send: Send, headers: dict[str, str]
    ) -> tuple[list[Any], bool] | None:
        """The POSTed messages and whether it was a batch, or None once refused."""
        if not any(self._accepted(headers.get("accept"))):
            await _error(
                send,
                406,
                CONNECTION_ERROR,
                "Not Acceptable: Accept must include application/json and text/event-stream",
            )
            return None
        content_type = headers.get("content-type", "")
        if content_type != JSON and content_type.split(";", 1)[0].strip().lower() != JSON:
            await _error(
                send,
                415,
                CONNECTION_ERROR,
                "Unsupported Media Type: Content-Type must be application/json",
            )
            return None
        try:
            body = await _read_body(receive, headers, self.max_body_bytes)
        except _TooLarge:
            await _error(
                send,
                413,
                CONNECTION_ERROR,
                f"Payload Too Large: the limit is {self.max_body_bytes} bytes",
            )
            return None
        except _Disconnected:
            return None
        parsed = rpc.decode(body)
        if isinstance(parsed, rpc.Malformed):
            await _error(send, 400, PARSE_ERROR, f"Parse error: {parsed.reason}")
            return None
        batch = type(parsed) is list
        messages: list[Any] = parsed if batch else [parsed]
        if not messages:
            await _error(send, 400, INVALID_REQUEST, "Invalid Request: empty batch")
            return None
        for message in messages:
            kind = rpc.classify(message)
            if isinstance(kind, rpc.Invalid):
                await _error(
                    send, 400, kind.code, f"Invalid Request: {kind.reason}", kind.request_id
                )
                return None
        return messages, batch

    async def _post(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        parsed = await self._parse_post(receive, send, headers)
        if parsed is None:
            return
        messages, batch = parsed
        initialize = any(m.get("method") == "initialize" and "id" in m for m in messages)
        if initialize and len(messages) > 1:
            await _error(
                send, 400, INVALID_REQUEST, "Invalid Request: initialize must not be batched"
            )
            return
        if not initialize and not await self._check_version(send, headers):
            return
        if self.stateless:
            await self._post_stateless(scope, receive, send, headers, messages, batch, initialize)
            return
        if initialize and not headers.get(SESSION_ID):
            session = await self._new_session(send)
        else:
            session = await self._session_for(send, headers)
        if session is None:
            return
        session.busy += 1  # not reaped while busy; touched when done
        try:
            await self._exchange(session, scope, receive, send, headers, messages, batch)
        finally:
            session.busy -= 1
            session.touch()

    async def _new_session(self, send: Send) -> _HttpSession | None:
        if self._tg is None:
            await _error(
                send,
                500,
                CONNECTION_ERROR,
                "the server's task group is not running: serve the app with lifespan "
                "enabled, or open StreamableHTTPServer.run()",
            )
            return None
        if len(self.sessions) >= self.max_sessions:
            await _error(
                send,
                503,
                CONNECTION_ERROR,
                "Service Unavailable: too many sessions",
                **{"retry-after": "5"},
            )
            return None
        session = _HttpSession(self, secrets.token_urlsafe(24))
        assert session.id is not None
        self.sessions[session.id] = session
        self._tg.start_soon(session.run)
        return session

    def _accepted(self, accept: str | None) -> tuple[bool, bool]:
        """Whether ``Accept`` admits (JSON, SSE); cached, as a client hardly varies it."""
        key = accept or ""
        found = self._accept_cache.get(key)
        if found is None:
            found = (accepts(accept, JSON), accepts(accept, SSE))
            if len(self._accept_cache) >= 64:
                self._accept_cache.clear()
            self._accept_cache[key] = found
        return found

    def _initial_mode(self, accept: str | None) -> str | None:
        """JSON, SSE, or undecided (``None``) for a POST, from the options and ``Accept``."""
        json_ok, sse_ok = self._accepted(accept)
        if not sse_ok:
            return _JSON
        if not json_ok:
            return _SSE
        if self.json_response is None:
            return None
        return _JSON if self.json_response else _SSE

    async def _exchange(
        self,
        session: _HttpSession,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
        messages: list[Any],
        batch: bool,
    ) -> None:
        """Deliver POSTed messages; answer 202, or with the JSON or SSE carrying the responses."""
        request_ids: list[RequestId] = [m["id"] for m in messages if "method" in m and "id" in m]
        extra = {SESSION_ID: session.id} if session.id is not None else {}
        if not request_ids:
            try:
                await session.deliver(messages, HttpRequestContext(scope, session.id))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                await _error(send, 404, CONNECTION_ERROR, "Session not found")
                return
            await _respond(send, 202, headers=extra)
            return
        if len(set(request_ids)) != len(request_ids):
            await _error(
                send, 400, INVALID_REQUEST, "Invalid Request: a batch repeats a request id"
            )
            return
        clash = next((rid for rid in request_ids if rid in session.by_request), None)
        if clash is not None:
            await _error(
                send,
                400,
                INVALID_REQUEST,
                "Invalid Request: this request id is already in use",
                clash,
            )
            return
        version = headers.get(PROTOCOL_VERSION)
        if version is None and messages[0].get("method") == "initialize":
            params = messages[0].get("params")
            version = params.get("protocolVersion") if type(params) is dict else None
        stream = session.open_stream(
            request_ids, self._initial_mode(headers.get("accept")), version
        )
        token = session.token()
        stream.attach(token)
        if stream.mode == _SSE:
            async with session.lock:
                await session.commit_sse(stream)

        async def close_sse_stream() -> None:
            await session.close_sse_stream(stream)

        try:
            await session.deliver(messages, HttpRequestContext(scope, session.id, close_sse_stream))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            stream.detach(token)
            await _error(send, 404, CONNECTION_ERROR, "Session not found")
            return
        if stream.mode != _SSE:
            clock = session.clock
            deadline = clock() + self.sse_after if stream.mode is None else math.inf
            while not stream.done and stream.mode != _SSE:
                if stream.mode is None and clock() >= deadline:
                    async with session.lock:
                        await session.commit_sse(stream)
                    break
                await stream.signal.wait(deadline - clock())
            if stream.mode != _SSE:
                stream.detach(token)
                responses = list(stream.queue)
                stream.queue.clear()
                if not responses:
                    await _respond(send, 202, headers=extra)
                    return
                body = rpc.encode(responses if batch else responses[0])
                await _respond(send, 200, body, JSON, extra)
                return
        await self._write_sse(session, stream, token, receive, send, extra, WATCH_AFTER)

    async def _write_sse(
        self,
        session: _HttpSession,
        stream: _Stream,
        token: int,
        receive: Receive,
        send: Send,
        extra: dict[str, str],
        watch_after: float,
    ) -> None:
        """Write one SSE response from ``stream`` until it ends or another response takes it.

        A client disconnect just detaches the response (the request goes on). A task watches
        for it once the response has run ``watch_after`` seconds; a comment line goes out
        after ``sse_keepalive`` seconds of silence, which keeps proxies from timing out.
        """
        session.busy += 1
        try:
            await send(
                {"type": "http.response.start", "status": 200, "headers": _sse_headers(extra)}
            )
            if await self._relay(session, stream, token, send, session.clock() + watch_after):
                return
            async with anyio.create_task_group() as tg:
                tg.start_soon(_watch_disconnect, receive, stream, token)
                await self._relay(session, stream, token, send, math.inf)
                tg.cancel_scope.cancel()
        finally:
            stream.detach(token)
            session.busy -= 1
            session.touch()

    async def _relay(
        self, session: _HttpSession, stream: _Stream, token: int, send: Send, until: float
    ) -> bool:
        """Write queued events until the response ends (True) or ``until`` passes (False)."""
        keepalive = self.sse_keepalive if self.sse_keepalive is not None else math.inf
        clock = session.clock
        quiet_since = clock()
        while True:
            consumer = stream.consumer
            ended = stream.done or consumer != token
            # Detached (``close_sse_stream``): flush what was queued; replaced: the queue is
            # the new response's.
            chunk = stream.take() if consumer == token or consumer is None else b""
            if ended:
                await send({"type": "http.response.body", "body": chunk})
                return True
            now = clock()
            if chunk:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                quiet_since = now
                continue
            if now - quiet_since >= keepalive:
                await send(
                    {"type": "http.response.body", "body": b": keepalive\n\n", "more_body": True}
                )
                quiet_since = now
            if now >= until:
                return False
            await stream.signal.wait(min(until, quiet_since + keepalive) - now)

    async def _post_stateless(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
        messages: list[Any],
        batch: bool,
        initialize: bool,
    ) -> None:
        """A session just for this POST, started as initialised unless the POST is ``initialize``."""
        version = (headers.get(PROTOCOL_VERSION) or DEFAULT_PROTOCOL_VERSION).strip()
        session = _HttpSession(self, None, assume=None if initialize else version)
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.run)
            try:
                await self._exchange(session, scope, receive, send, headers, messages, batch)
            finally:
                session.terminate("the request is complete")

    # -- GET and DELETE -----------------------------------------------------------------

    async def _get(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        if self.stateless:
            await _error(
                send,
                405,
                CONNECTION_ERROR,
                "Method not allowed: a stateless server has no GET stream",
                allow="POST",
            )
            return
        if not accepts(headers.get("accept"), SSE):
            await _error(
                send, 406, CONNECTION_ERROR, "Not Acceptable: Accept must include text/event-stream"
            )
            return
        if not await self._check_version(send, headers):
            return
        session = await self._session_for(send, headers)
        if session is None:
            return
        session.touch()
        extra = {SESSION_ID: session.id} if session.id else {}
        token = session.token()
        last_event_id = headers.get(LAST_EVENT_ID)
        if last_event_id and session.store is not None:
            async with session.lock:
                replayed = await session.store.replay_events_after(last_event_id.strip())
                if replayed is None:
                    await _error(send, 400, CONNECTION_ERROR, "Bad Request: unknown Last-Event-ID")
                    return
                stream_id, events = replayed
                stream = session.streams.get(stream_id)
                if stream is None and stream_id == session.standalone.id:
                    stream = session.standalone
                if stream is None:
                    stream = _Stream(session.native, stream_id=stream_id)
                    stream.done = True
                stream.attach(token)
                stream.queue.clear()
                stream.queue.extend(encode_event(m, event_id=e) for e, m in events)
            await self._write_sse(session, stream, token, receive, send, extra, 0.0)
            return
        async with session.lock:
            standalone = session.standalone
            if standalone.consumer is not None and not standalone.done:
                await _error(
                    send,
                    409,
                    CONNECTION_ERROR,
                    "Conflict: a GET stream is already open for this session",
                )
                return
            standalone.attach(token)
            standalone.version = headers.get(PROTOCOL_VERSION)
            priming = await session.priming_event(standalone)
            if priming is not None:
                standalone.queue.appendleft(priming)
        await self._write_sse(session, standalone, token, receive, send, extra, 0.0)

    async def _delete(self, send: Send, headers: dict[str, str]) -> None:
        if self.stateless:
            await _error(
                send,
                405,
                CONNECTION_ERROR,
                "Method not allowed: a stateless server has no sessions",
                allow="POST",
            )
            return
        session = await self._session_for(send, headers)
        if session is None:
            return
        session.terminate("the client ended the session")
        self._forget(session)
        await _respond(send, 200)


async def _watch_disconnect(receive: Receive, stream: _Stream, token: int) -> None:
    """Detach the response ``token`` when its client goes away."""
    message: Message = await receive()
    while message["type"] != "http.disconnect":
        message = await receive()
    stream.detach(token)
