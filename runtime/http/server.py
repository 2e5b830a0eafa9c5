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

import logging
import math
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import TaskGroup
from starlette.types import Receive, Scope, Send

from .. import _jsonrpc as rpc
from ..errors import INVALID_REQUEST, PARSE_ERROR
from ..transport import Connection
from ._asgi import (
    CONNECTION_ERROR,
    Disconnected,
    TooLarge,
    error,
    read_body,
    read_headers,
    respond,
)
from ._common import (
    DEFAULT_PROTOCOL_VERSION,
    JSON,
    LAST_EVENT_ID,
    PROTOCOL_VERSION,
    SESSION_ID,
    SSE,
    SUPPORTED_VERSIONS,
    accepts,
    encode_event,
)
from ._http_session import HttpRequestContext, HttpSession
from ._sse_writer import WATCH_AFTER, write_sse
from ._streams import JSON_MODE, SSE_MODE, RequestId, Stream
from .event_store import EventStore, InMemoryEventStore
from .security import LOOPBACK_HOSTS, HostGuard

__all__ = ["HttpRequestContext", "SessionRunner", "StreamableHTTPServer"]

logger = logging.getLogger("mcpbind.runtime.http")

#: Runs one MCP session over a connection until its ``incoming`` ends (``Server.serve``).
SessionRunner = Callable[[Connection], Awaitable[None]]


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
        self.sessions: dict[str, HttpSession] = {}
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

    def _forget(self, session: HttpSession) -> None:
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
            await respond(send, 404, b"Not Found", "text/plain; charset=utf-8")
            return
        headers = read_headers(scope)
        if not self.guard.host_ok(headers.get("host")):
            await error(send, 403, CONNECTION_ERROR, "Forbidden: Host not allowed")
            return
        if not self.guard.origin_ok(headers.get("origin")):
            await error(send, 403, CONNECTION_ERROR, "Forbidden: Origin not allowed")
            return
        method = scope["method"]
        if method == "POST":
            await self._post(scope, receive, send, headers)
        elif method == "GET":
            await self._get(scope, receive, send, headers)
        elif method == "DELETE":
            await self._delete(send, headers)
        else:
            await error(
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
            await error(
                send,
                400,
                CONNECTION_ERROR,
                f"Unsupported MCP-Protocol-Version {version!r}; supported: {supported}",
            )
            return False
        return True

    async def _session_for(self, send: Send, headers: dict[str, str]) -> HttpSession | None:
        sid = headers.get(SESSION_ID)
        if not sid:
            await error(send, 400, CONNECTION_ERROR, "Bad Request: missing Mcp-Session-Id header")
            return None
        session = self.sessions.get(sid)
        if session is None or session.closed:
            await error(send, 404, CONNECTION_ERROR, "Session not found")
            return None
        return session

    # -- POST ---------------------------------------------------------------------------

    async def _parse_post(
        self, receive: Receive, send: Send, headers: dict[str, str]
    ) -> tuple[list[Any], bool] | None:
        """The POSTed messages and whether it was a batch, or None once refused."""
        if not any(self._accepted(headers.get("accept"))):
            await error(
                send,
                406,
                CONNECTION_ERROR,
                "Not Acceptable: Accept must include application/json and text/event-stream",
            )
            return None
        content_type = headers.get("content-type", "")
        if content_type != JSON and content_type.split(";", 1)[0].strip().lower() != JSON:
            await error(
                send,
                415,
                CONNECTION_ERROR,
                "Unsupported Media Type: Content-Type must be application/json",
            )
            return None
        try:
            body = await read_body(receive, headers, self.max_body_bytes)
        except TooLarge:
            await error(
                send,
                413,
                CONNECTION_ERROR,
                f"Payload Too Large: the limit is {self.max_body_bytes} bytes",
            )
            return None
        except Disconnected:
            return None
        parsed = rpc.decode(body)
        if isinstance(parsed, rpc.Malformed):
            await error(send, 400, PARSE_ERROR, f"Parse error: {parsed.reason}")
            return None
        batch = type(parsed) is list
        messages: list[Any] = parsed if batch else [parsed]
        if not messages:
            await error(send, 400, INVALID_REQUEST, "Invalid Request: empty batch")
            return None
        for message in messages:
            kind = rpc.classify(message)
            if isinstance(kind, rpc.Invalid):
                await error(
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
            await error(
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

    async def _new_session(self, send: Send) -> HttpSession | None:
        if self._tg is None:
            await error(
                send,
                500,
                CONNECTION_ERROR,
                "the server's task group is not running: serve the app with lifespan "
                "enabled, or open StreamableHTTPServer.run()",
            )
            return None
        if len(self.sessions) >= self.max_sessions:
            await error(
                send,
                503,
                CONNECTION_ERROR,
                "Service Unavailable: too many sessions",
                **{"retry-after": "5"},
            )
            return None
        session = HttpSession(self, secrets.token_urlsafe(24))
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
            return JSON_MODE
        if not json_ok:
            return SSE_MODE
        if self.json_response is None:
            return None
        return JSON_MODE if self.json_response else SSE_MODE

    async def _exchange(
        self,
        session: HttpSession,
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
                await error(send, 404, CONNECTION_ERROR, "Session not found")
                return
            await respond(send, 202, headers=extra)
            return
        if len(set(request_ids)) != len(request_ids):
            await error(send, 400, INVALID_REQUEST, "Invalid Request: a batch repeats a request id")
            return
        clash = next((rid for rid in request_ids if rid in session.by_request), None)
        if clash is not None:
            await error(
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
        if stream.mode == SSE_MODE:
            async with session.lock:
                await session.commit_sse(stream)

        async def close_sse_stream() -> None:
            await session.close_sse_stream(stream)

        try:
            await session.deliver(messages, HttpRequestContext(scope, session.id, close_sse_stream))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            stream.detach(token)
            await error(send, 404, CONNECTION_ERROR, "Session not found")
            return
        if stream.mode != SSE_MODE:
            clock = session.clock
            deadline = clock() + self.sse_after if stream.mode is None else math.inf
            while not stream.done and stream.mode != SSE_MODE:
                if stream.mode is None and clock() >= deadline:
                    async with session.lock:
                        await session.commit_sse(stream)
                    break
                await stream.signal.wait(deadline - clock())
            if stream.mode != SSE_MODE:
                stream.detach(token)
                responses = list(stream.queue)
                stream.queue.clear()
                if not responses:
                    await respond(send, 202, headers=extra)
                    return
                body = rpc.encode(responses if batch else responses[0])
                await respond(send, 200, body, JSON, extra)
                return
        await write_sse(
            session, stream, token, receive, send, extra, WATCH_AFTER, self.sse_keepalive
        )

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
        session = HttpSession(self, None, assume=None if initialize else version)
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
            await error(
                send,
                405,
                CONNECTION_ERROR,
                "Method not allowed: a stateless server has no GET stream",
                allow="POST",
            )
            return
        if not accepts(headers.get("accept"), SSE):
            await error(
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
                    await error(send, 400, CONNECTION_ERROR, "Bad Request: unknown Last-Event-ID")
                    return
                stream_id, events = replayed
                stream = session.streams.get(stream_id)
                if stream is None and stream_id == session.standalone.id:
                    stream = session.standalone
                if stream is None:
                    stream = Stream(session.native, stream_id=stream_id)
                    stream.done = True
                stream.attach(token)
                stream.queue.clear()
                stream.queue.extend(encode_event(m, event_id=e) for e, m in events)
            await write_sse(session, stream, token, receive, send, extra, 0.0, self.sse_keepalive)
            return
        async with session.lock:
            standalone = session.standalone
            if standalone.consumer is not None and not standalone.done:
                await error(
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
        await write_sse(session, standalone, token, receive, send, extra, 0.0, self.sse_keepalive)

    async def _delete(self, send: Send, headers: dict[str, str]) -> None:
        if self.stateless:
            await error(
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
        await respond(send, 200)
