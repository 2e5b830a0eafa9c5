"""One MCP session's transport side: its connection, streams and the routing of what it sends."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio
from mcpbind.generated.names import NOTIFICATIONS_CANCELLED
from mcpbind.runtime.core import jsonrpc as rpc
from mcpbind.runtime.core.access_token import AccessToken
from mcpbind.runtime.core.loop_path import AsyncioPath, loop_path
from mcpbind.runtime.core.revisions import ASSUME_INITIALIZED
from mcpbind.runtime.core.transport import Connection, Envelope
from starlette.requests import Request
from starlette.types import Scope

from ._signals import Inbox, Lock
from ._streams import BACKLOG, CONSUMER_BUFFER, JSON_MODE, SSE_MODE, RequestId, Stream
from .common import AUTH_SCOPE_KEY, PRIMING_SINCE, SESSION_ID, encode_event
from .event_store import EventStore

if TYPE_CHECKING:
    import asyncio  # annotations only: the tasks come from the fast path seam

    from mcpbind.runtime.core.jsonvalue import JsonValue

    from .server import StreamableHTTPServer

__all__ = ["HttpRequestContext", "HttpSession"]

logger = logging.getLogger("mcpbind.runtime.http")


async def _nothing_to_close() -> None:
    return None


class HttpRequestContext:
    """The ``Envelope.context`` of a message that arrived over HTTP: handlers reach the HTTP
    request (headers, client address, auth set by middleware) as ``context.transport_context``.

    ``close_sse_stream()`` ends the SSE response of this POST *without* ending its stream
    (SEP-1699 polling): the client reconnects with ``Last-Event-ID`` after the ``retry`` delay
    and gets the rest, so a server can avoid holding long-lived connections. A POST not yet
    answered becomes an SSE stream for that. ``request`` is built on first use. The POST's
    session and stream are held, not a closure over them: one function object less per POST.
    """

    __slots__ = ("_request", "_scope", "_session", "_stream", "session_id")

    def __init__(
        self,
        request: Request | Scope,
        session_id: str | None,
        session: HttpSession | None = None,
        stream: Stream | None = None,
    ) -> None:
        if type(request) is dict:  # a scope: no ``isinstance`` through ``Mapping``'s ABC
            self._request: Request | None = None
            self._scope: Scope = request
        else:
            self._request = request if isinstance(request, Request) else None
            self._scope = request.scope if isinstance(request, Request) else request
        self.session_id = session_id
        self._session = session
        self._stream = stream

    def close_sse_stream(self) -> Awaitable[None]:
        """End this POST's SSE response, not its stream (nothing for a message with none)."""
        session, stream = self._session, self._stream
        if session is None or stream is None:
            return _nothing_to_close()
        return session.close_sse_stream(stream)

    @property
    def auth(self) -> AccessToken | None:
        """The request's verified access token, on a server protected by a ``ResourceServer``."""
        token: AccessToken | None = self._scope.get(AUTH_SCOPE_KEY)
        return token

    @property
    def request(self) -> Request:
        """The HTTP request (its body already read)."""
        if self._request is None:
            self._request = Request(self._scope)
        return self._request


class HttpSession:
    """One MCP session's transport side: its connection, streams and routing.

    It is the connection's ``outgoing`` sink: ``send_nowait`` routes a response to a JSON or
    undecided stream at once; anything needing the event store (SSE, the GET stream) raises
    ``WouldBlock`` so that the session awaits ``send``, which routes under the session's lock.
    """

    def __init__(
        self,
        owner: StreamableHTTPServer,
        session_id: str | None,
        assume: str | None = None,
        resumable: bool = True,
    ) -> None:
        self.owner = owner
        self.id = session_id
        #: ``Mcp-Session-Id`` as a JSON answer's header, encoded once (none without an id).
        self.id_header: list[tuple[bytes, bytes]] = (
            [(SESSION_ID.encode(), session_id.encode("latin-1"))] if session_id is not None else []
        )
        #: The fast path seam (``core/loop_path.py``), picked once for the session.
        self.path = path = loop_path()
        self.native = path.native
        #: ``anyio.current_time`` without its backend lookup: the loop's clock on asyncio.
        self.clock: Callable[[], float] = (
            path.loop.time if isinstance(path, AsyncioPath) else anyio.current_time
        )
        self.store: EventStore | None = (
            owner.event_store_factory() if owner.event_store_factory and resumable else None
        )
        self.inbox = Inbox(path)
        extra: dict[str, Any] = {ASSUME_INITIALIZED: assume} if assume is not None else {}
        self.connection = Connection(self.inbox, self, self._close_reason, extra)
        self.streams: dict[str, Stream] = {}
        self.by_request: dict[RequestId, Stream] = {}
        # Stream ids name events in the store, so they are unguessable where there is one.
        self._prefix = secrets.token_hex(4) if self.store is not None else "r"
        self._next_stream = 0
        self._next_token = 0
        self.standalone = Stream(path, stream_id=f"{self._prefix}-get")
        self._scope: anyio.CancelScope | None = None
        #: The task of a session of one request on asyncio (``start_alone``): it is cancelled
        #: directly, without a cancel scope (making one cost about 9 us, and its deadline a timer).
        self._task: asyncio.Task[None] | None = None
        self._grace: asyncio.TimerHandle | None = None
        self.lock = Lock()
        self.protocol_version: str | None = None
        self.closed = False
        self._outgoing_closed = False
        self.busy = 0
        self.last_active = self.clock()
        self._reason: str | None = None

    @property
    def scope(self) -> anyio.CancelScope:
        """The cancel scope ``run`` serves in, made on first use."""
        if self._scope is None:
            self._scope = anyio.CancelScope()
        return self._scope

    def _close_reason(self) -> str | None:
        return self._reason

    # -- running ------------------------------------------------------------------------

    async def run(self) -> None:
        """Run the user's session until it ends or is terminated."""
        with self.scope:
            await self._serve()

    def start_alone(self) -> asyncio.Task[None]:
        """Run a session of one request in a task of its own (asyncio only): ``cancel`` and
        ``terminate`` act on that task, so no cancel scope is needed."""
        assert isinstance(self.path, AsyncioPath)
        task: asyncio.Task[None] = self.path.spawn(self._serve())
        self._task = task
        return task

    async def _serve(self) -> None:
        """Serve the session, log its failure, and tear it down however it ends."""
        try:
            await self.owner.serve(self.connection)
        except Exception:
            logger.exception("MCP session %s failed", self.id)
        finally:
            self._teardown()

    def cancel(self) -> None:
        """Stop the session now (the client of its only request went away)."""
        if self._task is not None:
            self._task.cancel()
        else:
            self.scope.cancel()

    def terminate(self, reason: str) -> None:
        """End the session: no more input, streams closed, its task cancelled after a grace."""
        if self.closed:
            return
        self.closed = True
        self._reason = reason
        self.inbox.end()
        grace = self.owner.shutdown_grace
        task = self._task
        if task is not None:
            if not task.done():
                assert isinstance(self.path, AsyncioPath)
                self._grace = self.path.call_later(grace, task.cancel)
        else:
            self.scope.deadline = min(self.scope.deadline, anyio.current_time() + grace)
        self._finish_all()

    def _teardown(self) -> None:
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None
        self.closed = True
        self._outgoing_closed = True
        self.inbox.end()
        self.inbox.close()
        closer = getattr(self.store, "close", None)  # an in-memory store gives its bytes back
        if closer is not None:
            closer()
        self._finish_all()
        self.streams.clear()
        self.by_request.clear()
        self.owner.forget(self)

    def idle(self) -> bool:
        """Whether the session is running and holds nothing of a request: it may serve the
        next one (``_exchange.pooled``). What it sent unrelated to a request is dropped."""
        if self.closed or self.by_request or self.streams:
            return False
        self.standalone.queue.clear()
        return True

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
        if stream.mode == SSE_MODE:
            raise anyio.WouldBlock
        message: JsonValue = envelope.message
        if type(message) is dict and "method" not in message:
            self._answer(stream, related, message)
        elif stream.mode == JSON_MODE:
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
            now = self.clock()
            if stream.full_since is None:
                stream.full_since = now
            left = stream.full_since + self.owner.detach_stuck_after - now
            if left <= 0:
                # The client stopped reading: its response is detached (what it missed stays
                # in the event store, to resume with Last-Event-ID) so that senders, and the
                # queue, no longer wait on it; however many senders gave up waiting before.
                logger.warning(
                    "session %s: stream %s not read for %g s; detached",
                    self.id,
                    stream.id,
                    self.owner.detach_stuck_after,
                )
                assert stream.consumer is not None
                stream.detach(stream.consumer)
                stream.queue.clear()
                break
            space = stream.space = stream.space or anyio.Event()
            with anyio.move_on_after(left):
                await space.wait()

    def close(self) -> None:
        self._outgoing_closed = True

    def _answer(self, stream: Stream, related: RequestId, message: dict[str, Any]) -> None:
        """A response for a JSON or undecided stream: queue it; settle the request."""
        stream.queue.append(message)
        if related in stream.pending:
            self._settle_answer(stream, related, message)
        elif self.protocol_version is None and self.id is not None:
            self._learn_version(message, related)

    def answered_here(self, stream: Stream, related: RequestId, message: dict[str, Any]) -> bool:
        """A response ``Session.serve_here`` handed back to the POST serving its request (the
        handler ended in its first step): settled as ``send_nowait`` settles one, for the POST
        to write itself, when its stream is untouched (not SSE, nothing queued, the request
        pending). False otherwise: it is sent as any response is, after what went before it."""
        if (
            self._outgoing_closed
            or stream.mode == SSE_MODE
            or stream.queue
            or related not in stream.pending
        ):
            return False
        self._settle_answer(stream, related, message)
        return True

    def _settle_answer(self, stream: Stream, related: RequestId, message: dict[str, Any]) -> None:
        """``_settle`` and ``_finish`` for a pending request's JSON answer, in one step."""
        if self.protocol_version is None and self.id is not None:  # a session of one request
            self._learn_version(message, related)  # has no later batch or priming to tell
        pending = stream.pending
        pending.discard(related)
        del self.by_request[related]
        if not pending:
            stream.done = True
            stream.signal.set()
            if stream.id is not None:
                self.streams.pop(stream.id, None)

    def _learn_version(self, message: dict[str, Any], related: RequestId) -> None:
        result: JsonValue = message.get("result")
        if (
            message.get("id") == related
            and type(result) is dict
            and type(result.get("protocolVersion")) is str
            and result.get("serverInfo")
        ):
            self.protocol_version = result["protocolVersion"]

    def _settle(self, stream: Stream, related: RequestId) -> None:
        if related in stream.pending:
            stream.pending.discard(related)
            del self.by_request[related]
            if not stream.pending:
                self._finish(stream)

    def _finish(self, stream: Stream) -> None:
        stream.done = True
        stream.signal.set()
        if stream.id is not None:
            self.streams.pop(stream.id, None)

    async def _route(self, envelope: Envelope) -> Stream | None:
        """Route under the lock; returns the stream whose consumer may need to catch up."""
        message: JsonValue = envelope.message
        related = envelope.related_id
        stream = self.by_request.get(related) if related is not None else self.standalone
        if stream is None:
            logger.debug("dropped a message for request %r, whose stream has ended", related)
            return None
        response = message if type(message) is dict and "method" not in message else None
        if stream.mode != SSE_MODE:
            if response is not None:
                assert related is not None
                self._answer(stream, related, response)
                return None
            if stream.mode == JSON_MODE:
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
        if response is not None and related is not None:
            if self.protocol_version is None:
                self._learn_version(response, related)
            self._settle(stream, related)
        return stream

    async def commit_sse(self, stream: Stream) -> None:
        """Make an undecided stream SSE (call under the lock): it gets an id, a priming event
        if the client expects one, and the responses it already holds become events."""
        if stream.mode == SSE_MODE and stream.id is not None:
            return
        stream.mode = SSE_MODE
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

    async def priming_event(self, stream: Stream) -> bytes | None:
        """The first event of an SSE stream, stored: only for clients that expect one."""
        if self.store is None or stream.id is None:
            return None
        if (stream.version or self.protocol_version or "") < PRIMING_SINCE:
            return None
        event_id = await self.store.store_event(stream.id, None)
        return encode_event(event_id=event_id, retry_ms=self.owner.retry_ms)

    async def close_sse_stream(self, stream: Stream) -> None:
        """End the POST's response but not its stream (``HttpRequestContext.close_sse_stream``).

        An undecided POST becomes SSE for it; one answered as JSON (by option, or because the
        client accepts nothing else) has no stream to close, so this does nothing there."""
        if stream.mode == JSON_MODE:
            return
        async with self.lock:
            await self.commit_sse(stream)
            if stream.consumer is not None:
                stream.consumer = None
                stream.signal.set()

    # -- what the client sends ----------------------------------------------------------------

    def serves_here(self, message: dict[str, Any]) -> bool:
        """Whether the POST's task may serve this lone request itself (``Session.serve_here``)
        instead of queueing it for the session's reader: only while the reader waits idle, so
        that it is handled after everything POSTed before it, as queued it would be. A
        ``notifications/cancelled`` sent as a request keeps the queue (``deliver`` settles
        the request it names first)."""
        return self.inbox.idle and message.get("method") != NOTIFICATIONS_CANCELLED

    def deliver_nowait(self, message: Any, context: HttpRequestContext, size: int = 0) -> bool:
        """``deliver`` of one request (``parse_post`` classified it: the session need not) when
        the inbox has room at once (``False``: nothing done, ``deliver`` it)."""
        if message.get("method") == NOTIFICATIONS_CANCELLED:
            return False
        return self.inbox.put_nowait(Envelope(message, context, size=size, request=True))

    async def deliver(self, messages: Sequence[Any], context: HttpRequestContext) -> None:
        """Hand client messages to the session; a cancellation also settles its stream."""
        for message in messages:
            if message.get("method") == NOTIFICATIONS_CANCELLED:
                params: JsonValue = message.get("params")
                self.abandon(params.get("requestId") if type(params) is dict else None)
            await self.inbox.put(Envelope(message, context))

    def abandon(self, request_id: Any) -> None:
        """A cancelled request gets no response, so its stream must not wait for one."""
        if rpc.is_request_id(request_id):
            stream = self.by_request.get(request_id)
            if stream is not None:
                self._settle(stream, request_id)

    def open_stream(
        self, request_ids: Sequence[RequestId], mode: str | None, version: str | None
    ) -> tuple[Stream, int]:
        """A new stream for a POST, answering for its request ids, and the token of the POST's
        response, attached to it (``token``, ``Stream.attach``: one call for the three)."""
        stream = Stream(self.path, request_ids, mode, version)
        for rid in request_ids:
            self.by_request[rid] = stream
        self._next_token = token = self._next_token + 1
        stream.consumer = token  # ``attach``: a new stream has no response to end
        return stream, token

    def touch(self) -> None:
        """Note activity, which postpones reaping."""
        self.last_active = self.clock()
