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

Handshake-era streams are resumable: each SSE event is recorded in the session's
``EventStore`` before it is written, and ``GET`` with ``Last-Event-ID`` replays the rest of
*that* stream, then continues live. A client disconnecting never cancels such a request
(transports.md): the events keep going to the store until the response, so nothing is lost.

Both protocol eras share the endpoint. A POST of the stateless era (2026-07-28: its
``MCP-Protocol-Version``, or the ``_meta`` version of its body, says so) has its headers
checked against its body (``_binding``) and is served on a session that serves nothing else
while it runs (one of the pool ``run()`` keeps, when it was left clean by an earlier request
answered at once, else one of its own); closing its SSE response cancels it, and its streams
are not resumable. Handshake-era sessions outlive single HTTP requests, so they run in a task group
opened by ``run()``; used directly as an ASGI app the server opens it from the ``lifespan``
protocol (uvicorn, hypercorn... run it). ``stateless=True`` serves handshake-era POSTs on
sessions of their own too, started as already initialised at the request's
``MCP-Protocol-Version``, which is what horizontally scaled deployments want.

This module is the endpoint and its dispatch; the pieces live beside it: ``_exchange`` (one
POST's answer), ``_http_session`` (routing what a session sends), ``_binding`` and
``_tool_headers`` (the 2026 headers), ``_intake`` (header form, body), ``_sse_writer``,
``_streams``, ``_signals``, ``_pool``, ``_get_stream``, ``_asgi``.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
from anyio.abc import TaskGroup
from mcpbind.generated.names import INITIALIZE, SUBSCRIPTIONS_LISTEN, TOOLS_CALL
from mcpbind.runtime.core.budget import MemoryBudget, process_budget
from mcpbind.runtime.core.errors import INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION
from mcpbind.runtime.core.jsonvalue import JsonValue
from mcpbind.runtime.core.logsafe import printable
from mcpbind.runtime.core.revisions import STATELESS_REVISIONS
from mcpbind.runtime.core.transport import Connection
from starlette.types import Receive, Scope, Send

from ._exchange import batch_allowed, exchange, per_request, poolable, pooled
from ._get_stream import serve_get
from ._http_session import HttpRequestContext, HttpSession
from ._intake import HeaderView, header_view, parse_post
from ._lookup import named_session, no_session, session_for
from ._pool import SessionPool
from ._streams import RequestId
from ._token_expiry import serve_until_expiry
from ._tool_headers import ToolHeaderCache
from .asgi import CONNECTION_ERROR, error, respond
from .binding import HEADER_MISMATCH, Refusal, check_facts, check_params, meta_version
from .common import (
    DEFAULT_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
    SESSION_ID,
    SSE,
    SUPPORTED_VERSIONS,
    accepts,
)
from .event_store import EventStore, InMemoryEventStore
from .lifespan import asgi_lifespan, owner_running
from .protection import Protection
from .security import LOOPBACK_HOSTS, HostGuard
from .shared_state import (
    InProcessState,
    SharedState,
    SharedStateUnavailable,
    unavailable,
    worker_stats,
)

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
    ``detach_stuck_after``: a response whose client has not read for that long while its
    buffer is full is detached, so nothing waits on it (the client resumes from the store).

    Both protocol eras are served at once: a POST carrying (or opening, with ``initialize``)
    a handshake-era session goes to that session; one whose ``MCP-Protocol-Version`` is a
    stateless-era revision, or whose body carries the per-request ``_meta`` version, is
    checked against the 2026-07-28 HTTP binding and served on a session that serves nothing
    else meanwhile (its own, or a clean one from a pool while ``run()`` hosts the server).
    ``stateless=True`` serves handshake-era requests that way too (no sessions at all).
    ``tool_headers_ttl`` is how long the tools' ``x-mcp-header`` annotations, which say what
    ``Mcp-Param-*`` headers a ``tools/call`` must carry, are reused (``ToolHeaderCache``).
    ``auth`` (a ``Protection``, e.g. ``auth.server.ResourceServer``) requires an OAuth bearer
    token on every request, serves the Protected Resource Metadata, and binds each session to
    the identity that opened it.
    ``shared`` (a ``cluster.SharedState``; default ``InProcessState()``) is what this worker
    shares with the others behind a load balancer (``cluster.RedisState``): sessions are then
    reachable, and notifications fanned out, from any worker. ``stats`` counts what it served.
    ``memory_budget`` (default ``process_budget()``) holds POST bodies as read (503 beyond).
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
        detach_stuck_after: float = 10.0,
        tool_headers_ttl: float = 30.0,
        auth: Protection | None = None,
        shared: SharedState | None = None,
        memory_budget: MemoryBudget | None = None,
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
        self.memory_budget = memory_budget or process_budget()
        self.session_idle_timeout = session_idle_timeout
        self.max_sessions = max_sessions
        self.supported_versions = tuple(supported_versions)
        self.shutdown_grace = shutdown_grace
        self.sse_keepalive = sse_keepalive
        self.detach_stuck_after = detach_stuck_after
        self.sessions: dict[str, HttpSession] = {}
        #: Idle sessions for stateless-era requests (``_exchange.pooled``) while ``run()``
        #: hosts them; None otherwise: each request then has a session of its own.
        self.pool: SessionPool | None = None
        self._tg: TaskGroup | None = None
        self.tool_headers = ToolHeaderCache(serve, tool_headers_ttl)
        self.auth = auth
        self.shared: SharedState = shared or InProcessState()
        if self.shared.event_store_factory is not None and self.event_store_factory is not None:
            self.event_store_factory = self.shared.event_store_factory
        #: Requests answered here, forwarded to their session's owner, and served for another worker.
        self.counters: dict[str, int] = {"served": 0, "forwarded_out": 0, "forwarded_in": 0}

    @property
    def stats(self) -> Mapping[str, int]:
        """This worker's counters (read-only): ``served``, ``forwarded_out``, ``forwarded_in``,
        ``sessions`` and ``listeners`` (open ``subscriptions/listen`` streams)."""
        return worker_stats(self)

    async def close_subscriptions(self) -> None:
        """End open ``subscriptions/listen`` streams with their graceful ``complete`` answer
        (subscriptions.md, "Graceful Closure"), before a shutdown cuts them: asks the
        ``Server`` whose ``serve`` this endpoint runs, if it is one. ``serving()`` calls it."""
        owner = getattr(self.serve, "__self__", None)
        closer = getattr(owner, "close_subscriptions", None)
        if closer is not None:
            await closer()

    # -- lifetime -----------------------------------------------------------------------

    @asynccontextmanager
    async def run(self) -> AsyncGenerator[StreamableHTTPServer, None]:
        """Host the sessions (and the idle reaper) while open; ends every session on exit.

        The ASGI lifespan calls this; enter it yourself from the lifespan of a framework the app
        is mounted in, whose lifespan does not reach it (Starlette wants a lifespan that yields
        nothing: ``async with server.run(): yield``). The ``Server``'s own lifespan, when
        ``serve`` is a server's, is entered first (shared with whatever else runs it).
        """
        reaper = anyio.CancelScope()
        async with owner_running(self.serve), anyio.create_task_group() as tg:
            self._tg = tg
            pool = self.pool = SessionPool(tg)
            tg.start_soon(self._reap, reaper)
            try:
                async with self.shared.attach(self):
                    yield self
            finally:
                self._tg = None
                self.pool = None
                pool.close("the server is shutting down")
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
                        self.forget(session)

    def forget(self, session: HttpSession) -> None:
        """Drop an ended session from the table (its ``HttpSession`` calls this as it ends)."""
        if session.id is not None and self.sessions.get(session.id) is session:
            del self.sessions[session.id]
            self.shared.release(session.id)

    # -- ASGI ---------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind != "http":
            if kind == "lifespan":
                await asgi_lifespan(self.run, receive, send)
            return
        auth = self.auth
        if auth is not None and await auth.serve_metadata(scope, send):
            return
        if self._path is not None and scope["path"].rstrip("/") != self._path:
            await respond(send, 404, b"Not Found", "text/plain; charset=utf-8")
            return
        view = header_view(scope)
        headers, bad = view.headers, view.malformed
        if bad is not None:
            await error(send, 400, CONNECTION_ERROR, f"Bad Request: malformed {bad} header")
            return
        guard = self.guard
        if view.admitted_by is not guard:  # checked once per header set and guard
            if not guard.host_ok(headers.get("host")):
                await error(send, 403, CONNECTION_ERROR, "Forbidden: Host not allowed")
                return
            if not guard.origin_ok(headers.get("origin")):
                await error(send, 403, CONNECTION_ERROR, "Forbidden: Origin not allowed")
                return
            view.admitted_by = guard
        if auth is not None and not await auth.admit(scope, send):
            return
        if self.shared.forwarding and await self.shared.route(self, scope, receive, send, headers):
            return  # another worker owns its session or task: answered from there
        if auth is None and scope["method"] == "POST":  # ``serve_here``'s first case, inline
            self.counters["served"] += 1
            await self._post(scope, receive, send, headers, view)
            return
        await self.serve_here(scope, receive, send, headers)

    async def serve_here(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        """Serve an admitted request here (``shared.route``: one whose body it read, handed back
        in ``receive``), with what ``auth`` added (``DPoP-Nonce``), a stream ending with its token."""
        if self.auth is None:
            await self._serve(scope, receive, headers, send)
        else:
            await serve_until_expiry(scope, send, partial(self._serve, scope, receive, headers))

    async def _serve(
        self, scope: Scope, receive: Receive, headers: dict[str, str], send: Send
    ) -> None:
        self.counters["served"] += 1
        method = scope["method"]
        if method == "POST":
            await self._post(scope, receive, send, headers)
        elif method == "GET":
            await self._get(scope, receive, send, headers)
        elif method == "DELETE":
            await self._delete(scope, send, headers)
        else:
            await error(
                send, 405, CONNECTION_ERROR, "Method not allowed", allow="GET, POST, DELETE"
            )

    def _unsupported(self, version: str) -> dict[str, Any]:
        """``data`` of -32022: what is served, newest first, and what was asked."""
        return {"supported": sorted(self.supported_versions, reverse=True), "requested": version}

    async def _check_version(
        self,
        send: Send,
        version: str | None,
        request_id: RequestId | None = None,
        stateless_only: bool = False,
    ) -> bool:
        """Refuse (400, ``UnsupportedProtocolVersion``) a version this endpoint does not serve
        (with ``stateless_only``: any but a stateless-era one, for a request with ``_meta``)."""
        if version is not None and (
            version not in self.supported_versions
            or (stateless_only and version not in STATELESS_REVISIONS)
        ):
            supported = ", ".join(sorted(self.supported_versions, reverse=True))
            await error(
                send,
                400,
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version {version!r}; supported: {supported}",
                request_id,
                self._unsupported(version),
            )
            return False
        return True

    # -- POST ---------------------------------------------------------------------------

    async def _post(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
        view: HeaderView | None = None,
    ) -> None:
        if view is None:  # ``__call__`` passes the one it made
            view = header_view(scope)
        accept = view.accept
        if not (accept[0] or accept[1]):
            await error(
                send,
                406,
                CONNECTION_ERROR,
                "Not Acceptable: Accept must include application/json and text/event-stream",
            )
            return
        parsed = await parse_post(
            receive, send, headers, self.max_body_bytes, self.memory_budget, view.json_body
        )
        if parsed is None:
            return
        messages, batch, size = parsed
        if self.auth is not None and not await self.auth.admit_operations(scope, send, messages):
            return
        version = view.version
        first = messages[0]
        params: JsonValue = first.get("params")  # ``meta_version`` only if there is ``_meta``
        if version in STATELESS_REVISIONS or (
            not batch
            and type(params) is dict
            and "_meta" in params
            and meta_version(first) is not None
        ):
            await self._post_modern(
                scope, receive, send, headers, messages, batch, version, view, size
            )
            return
        initialize = (
            any(m.get("method") == INITIALIZE and "id" in m for m in messages)
            if batch
            else messages[0].get("method") == INITIALIZE and "id" in messages[0]
        )
        if initialize and len(messages) > 1:
            await error(
                send, 400, INVALID_REQUEST, "Invalid Request: initialize must not be batched"
            )
            return
        first_id = messages[0].get("id") if not batch else None
        if (
            not initialize
            and version not in self.supported_versions  # served (or None): no coroutine to await
            and not await self._check_version(send, version, first_id)
        ):
            return
        if self.stateless:
            if batch and not await batch_allowed(send, version):
                return
            assume = None if initialize else version or DEFAULT_PROTOCOL_VERSION
            await per_request(self, scope, receive, send, headers, messages, batch, assume, size)
            return
        if initialize and not headers.get(SESSION_ID):
            session = await self._new_session(send)
            if session is not None and self.auth is not None:
                self.auth.bind(session, scope)
        else:
            session = named_session(self, scope, headers)
            if session is None:
                await no_session(send, headers)
                return
        if session is None:
            return
        if batch and not await batch_allowed(send, version or session.protocol_version):
            return
        session.busy += 1  # not reaped while busy; touched when done
        try:
            await exchange(
                self, session, scope, receive, send, headers, messages, batch, size, accept=accept
            )
        finally:
            session.busy -= 1
            session.last_active = session.clock()  # ``touch``, inline: per request

    async def _post_modern(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
        messages: list[Any],
        batch: bool,
        version: str | None,
        view: HeaderView | None = None,
        size: int = 0,
    ) -> None:
        """A stateless-era POST: one request, its headers checked against its body
        (``_binding``), served on a session of its own. ``Mcp-Session-Id`` is ignored."""
        if batch:
            await error(
                send, 400, INVALID_REQUEST, "Invalid Request: JSON-RPC batches are not part of MCP"
            )
            return
        message = messages[0]
        if "method" not in message:
            await error(
                send, 400, INVALID_REQUEST, "Invalid Request: a client does not send responses"
            )
            return
        if "id" not in message:
            await respond(send, 202)  # no client notifications in this era: nothing to act on
            return
        request_id = message["id"]
        method = message["method"]
        if view is None:  # ``__call__`` passes the one it made
            view = header_view(scope)
        mcp, bad = view.mcp()
        refusal = (
            Refusal(HEADER_MISMATCH, f"Header mismatch: malformed {bad} header")
            if bad is not None
            else check_facts(view.facts(), message, version)
        )
        if refusal is None and (
            version not in self.supported_versions or version not in STATELESS_REVISIONS
        ):
            await self._check_version(send, version, request_id, stateless_only=True)
            return
        if refusal is None and method == TOOLS_CALL:
            params: JsonValue = message.get("params")
            name = params.get("name") if type(params) is dict else None
            if type(name) is str and version is not None:
                tool_headers = self.tool_headers.cached(version, name)
                if tool_headers is None:
                    tool_headers = await self.tool_headers.headers_for(version, name)
                refusal = check_params(mcp, message, tool_headers)
        if refusal is not None:
            logger.info(
                "refused %s (id %s): %s",
                printable(method),
                printable(request_id),
                printable(refusal.message),
            )
            await error(send, 400, refusal.code, refusal.message, request_id)
            return
        if method == SUBSCRIPTIONS_LISTEN and not view.accept[1]:
            await error(
                send,
                406,
                CONNECTION_ERROR,
                "Not Acceptable: subscriptions/listen answers with text/event-stream",
                request_id,
            )
            return
        pool = self.pool
        if pool is not None and poolable(message):  # ``per_request``'s first case, directly
            await pooled(self, pool, scope, receive, send, headers, messages, version, size)
            return
        await per_request(
            self, scope, receive, send, headers, messages, False, version, size, modern=True
        )

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
        if self.shared.forwarding:
            try:
                await self.shared.claim(session.id)
            except SharedStateUnavailable as exc:
                await unavailable(send, exc)
                return None
        self.sessions[session.id] = session
        self._tg.start_soon(session.run)
        return session

    # -- GET and DELETE -----------------------------------------------------------------

    def _sessionless(self, headers: dict[str, str]) -> bool:
        """Whether a GET or DELETE cannot be about a session: a stateless server, a
        stateless-era version, or no session named (streamable-http.md answers 405)."""
        version = (headers.get(PROTOCOL_VERSION) or "").strip()
        return (
            self.stateless
            or version in STATELESS_REVISIONS
            or (not headers.get(SESSION_ID) and not version)
        )

    async def _get(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        if self._sessionless(headers):
            await error(
                send,
                405,
                CONNECTION_ERROR,
                "Method not allowed: no GET stream without a session",
                allow="POST",
            )
            return
        if not accepts(headers.get("accept"), SSE):
            await error(
                send, 406, CONNECTION_ERROR, "Not Acceptable: Accept must include text/event-stream"
            )
            return
        if not await self._check_version(
            send, (headers.get(PROTOCOL_VERSION) or "").strip() or None
        ):
            return
        session = await session_for(self, scope, send, headers)
        if session is None:
            return
        await serve_get(session, receive, send, headers, self.sse_keepalive)

    async def _delete(self, scope: Scope, send: Send, headers: dict[str, str]) -> None:
        if self._sessionless(headers):
            await error(
                send,
                405,
                CONNECTION_ERROR,
                "Method not allowed: no session to end",
                allow="POST",
            )
            return
        session = await session_for(self, scope, send, headers)
        if session is None:
            return
        session.terminate("the client ended the session")
        self.forget(session)
        await respond(send, 200)
