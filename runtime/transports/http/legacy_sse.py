"""The HTTP+SSE transport of protocol revision 2024-11-05, server and client.

The client GETs an SSE stream whose first event, ``endpoint``, names the URL to POST messages
to; every server message then arrives on that one stream, and a POST only gets 202. The SSE
connection *is* the session: when it closes, the session ends. Superseded by Streamable HTTP
but still spoken by older peers, so a server can host both (``combined_app``) and a client
can fall back to it (``streamable_http_client(..., fallback_to_sse=True)``).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import unquote, urljoin, urlsplit

import anyio
import httpx
from anyio.abc import TaskGroup, TaskStatus
from httpx_sse import EventSource
from mcpbind.runtime.core import jsonrpc as rpc
from mcpbind.runtime.core.budget import MemoryBudget, process_budget, resident_size
from mcpbind.runtime.core.errors import INVALID_REQUEST, PARSE_ERROR
from mcpbind.runtime.core.logsafe import printable
from mcpbind.runtime.core.transport import STREAM_BUFFER, Connection, Envelope
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ._legacy_queues import Answers, Inbox, Outbox, Reservation
from .asgi import CONNECTION_ERROR, CONTROL_BYTES
from .common import JSON, SSE, accepts, encode_event
from .lifespan import asgi_lifespan, owner_running
from .protection import Protection
from .security import LOOPBACK_HOSTS, HostGuard
from .server import HttpRequestContext

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = ["LegacySSEChannel", "LegacySSEServer", "combined_app", "sse_client"]

logger = logging.getLogger("mcpbind.runtime.http")

SessionRunner = Callable[[Connection], Awaitable[None]]


class _LegacySession:
    """One SSE connection's session: its byte-bounded queues and the task running it."""

    def __init__(self, session_id: str, server: LegacySSEServer) -> None:
        self.id = session_id
        self.budget = MemoryBudget(server.max_queued_bytes)
        answers = Answers()
        self.inbox = Inbox(server.max_queued_messages, answers)
        self.outbox = Outbox(server.max_outgoing_bytes, answers, server.memory_budget)
        self.connection = Connection(self.inbox, self.outbox)
        self.scope = anyio.CancelScope()


def _refusal(status: int, code: int, message: str, **headers: str) -> Response:
    """An HTTP error whose body is a JSON-RPC error, as the Streamable HTTP endpoint answers."""
    body = rpc.encode(rpc.error_response(None, code, message))
    return Response(body, status, headers or None, media_type=JSON)


def _session_id(query_string: bytes) -> str | None:
    """The ``session_id`` query parameter if it has the form this server issues, else None."""
    for pair in query_string.split(b"&"):
        name, _, value = pair.partition(b"=")
        if name == b"session_id":
            text = value.decode("latin-1")
            return text if len(text) == 32 and all(c in _HEX for c in text) else None
    return None


_HEX: Final = frozenset("0123456789abcdef")


class LegacySSEServer:
    """The 2024-11-05 HTTP+SSE endpoints as an ASGI app: ``GET sse_path`` and ``POST message_path``.

    Like ``StreamableHTTPServer`` it runs ``serve`` once per session in a task group opened by
    ``run()`` (the ASGI lifespan does it when the app is served directly), checks Host and
    Origin, and refuses bodies over ``max_body_bytes``.

    A POST is answered 202 only when its message fits: each session may hold
    ``max_queued_bytes`` of POSTed bodies (from their first byte until every request in them
    is answered or cancelled) and ``max_queued_messages`` messages (a batch counts each)
    waiting to be read; all sessions together ``max_total_queued_bytes``, and these bytes are
    held in the process's ``memory_budget`` too (default ``process_budget()``, shared with
    every other transport). Beyond that the POST gets 429 with ``Retry-After``. Messages for
    the SSE stream wait up to ``max_outgoing_bytes`` for a slow reader, then the session
    itself waits. So whatever one client sends, the server
    holds at most those bytes of its requests (parsed, a message takes a few times its JSON
    size) and of answers to them.

    ``auth`` (a ``Protection``, e.g. ``auth.server.ResourceServer``) requires a bearer token on
    both endpoints and binds each session to the identity whose GET opened it: POSTs with
    another's token find no session.
    """

    def __init__(
        self,
        serve: SessionRunner,
        *,
        sse_path: str = "/sse",
        message_path: str = "/messages/",
        allowed_hosts: Iterable[str] = LOOPBACK_HOSTS,
        allowed_origins: Iterable[str] | None = None,
        max_body_bytes: int = 4 * 1024 * 1024,
        max_sessions: int = 10_000,
        max_queued_bytes: int = 8 * 1024 * 1024,
        max_queued_messages: int = 256,
        max_total_queued_bytes: int = 32 * 1024 * 1024,
        max_outgoing_bytes: int = 8 * 1024 * 1024,
        retry_after: int = 1,
        auth: Protection | None = None,
        memory_budget: MemoryBudget | None = None,
    ) -> None:
        self.serve = serve
        self.sse_path = sse_path
        self.message_path = message_path
        self.guard = HostGuard(allowed_hosts, allowed_origins)
        self.max_body_bytes = max_body_bytes
        self.max_sessions = max_sessions
        self.max_queued_bytes = max_queued_bytes
        self.max_queued_messages = max_queued_messages
        self.max_outgoing_bytes = max_outgoing_bytes
        self.retry_after = retry_after
        self.auth = auth
        self.queued = MemoryBudget(max_total_queued_bytes)
        self.memory_budget = memory_budget or process_budget()
        self.sessions: dict[str, _LegacySession] = {}
        self._tg: TaskGroup | None = None

    @asynccontextmanager
    async def run(self) -> AsyncGenerator[LegacySSEServer, None]:
        """Host the sessions while open; ends them all on exit. The ``Server``'s lifespan, when
        ``serve`` is a server's, is entered first (shared with whatever else runs it)."""
        async with owner_running(self.serve), anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield self
            finally:
                self._tg = None
                for session in list(self.sessions.values()):
                    session.inbox.end()
                tg.cancel_scope.deadline = anyio.current_time() + 2.0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await asgi_lifespan(self.run, receive, send)
            return
        if scope["type"] != "http":
            return
        auth = self.auth
        if auth is not None and await auth.serve_metadata(scope, send):
            return
        request = Request(scope, receive)
        if not self.guard.host_ok(request.headers.get("host")):
            response = _refusal(403, CONNECTION_ERROR, "Forbidden: Host not allowed")
        elif not self.guard.origin_ok(request.headers.get("origin")):
            response = _refusal(403, CONNECTION_ERROR, "Forbidden: Origin not allowed")
        elif auth is not None and not await auth.admit(scope, send):
            return
        else:
            path = scope["path"].rstrip("/")
            if path == self.sse_path.rstrip("/") and request.method == "GET":
                await self._sse(request, scope, receive, send)
                return
            if path == self.message_path.rstrip("/") and request.method == "POST":
                response = await self._message(request)
            elif path in (self.sse_path.rstrip("/"), self.message_path.rstrip("/")):
                allow = "GET" if path == self.sse_path.rstrip("/") else "POST"
                response = _refusal(405, CONNECTION_ERROR, "Method not allowed", allow=allow)
            else:
                response = _refusal(404, CONNECTION_ERROR, "Not Found")
        await response(scope, receive, send)

    async def _sse(self, request: Request, scope: Scope, receive: Receive, send: Send) -> None:
        accept = request.headers.get("accept")
        if self._tg is None:
            refusal = _refusal(
                500, CONNECTION_ERROR, "the server's task group is not running (enable lifespan)"
            )
            await refusal(scope, receive, send)
            return
        if accept is not None and not accepts(accept, SSE):
            refusal = _refusal(
                406, CONNECTION_ERROR, "Not Acceptable: Accept must include text/event-stream"
            )
            await refusal(scope, receive, send)
            return
        if len(self.sessions) >= self.max_sessions:
            refusal = _refusal(
                503,
                CONNECTION_ERROR,
                "Service Unavailable: too many sessions",
                **{"retry-after": "5"},
            )
            await refusal(scope, receive, send)
            return
        session = _LegacySession(secrets.token_hex(16), self)
        self.sessions[session.id] = session
        if self.auth is not None:
            self.auth.bind(session, scope)
        self._tg.start_soon(self._run_session, session)
        endpoint = f"{scope.get('root_path', '')}{self.message_path}?session_id={session.id}"

        async def events() -> AsyncIterator[bytes]:
            try:
                yield encode_event(event="endpoint", data=endpoint)
                while (chunk := await session.outbox.take()) is not None:
                    yield chunk
            finally:
                self._end(session)
                session.outbox.discard()

        response = StreamingResponse(
            events(), media_type=SSE, headers={"cache-control": "no-cache"}
        )
        await response(scope, receive, send)

    async def _run_session(self, session: _LegacySession) -> None:
        try:
            with session.scope:
                await self.serve(session.connection)
        except Exception:
            logger.exception("legacy SSE session %s failed", session.id)
        finally:
            self._end(session)
            session.inbox.close()
            session.outbox.close()
            session.outbox.discard()

    def _end(self, session: _LegacySession) -> None:
        """The SSE connection is gone: the session ends with it."""
        if self.sessions.get(session.id) is session:
            del self.sessions[session.id]
        session.inbox.end()
        session.scope.deadline = min(session.scope.deadline, anyio.current_time() + 2.0)

    def _busy(self, why: str) -> Response:
        return _refusal(
            429,
            CONNECTION_ERROR,
            f"Too Many Requests: {why}; retry later",
            **{"retry-after": str(self.retry_after)},
        )

    async def _message(self, request: Request) -> Response:
        """Check the POST's headers, then hold its bytes while reading, parsing and queueing."""
        raw_id = request.scope.get("query_string", b"")
        session_id = _session_id(raw_id)
        if session_id is None:
            logger.info(
                "legacy POST with a malformed session_id: %r",
                printable(unquote(raw_id.decode("latin-1"))),
            )
            return _refusal(400, CONNECTION_ERROR, "Bad Request: missing or malformed session_id")
        content_type = request.headers.get("content-type", "")
        if content_type.split(";", 1)[0].strip().lower() != JSON:
            return _refusal(
                415,
                CONNECTION_ERROR,
                "Unsupported Media Type: Content-Type must be application/json",
            )
        session = self.sessions.get(session_id)
        if session is None or (
            self.auth is not None and not self.auth.owns(session, request.scope)
        ):
            return _refusal(404, CONNECTION_ERROR, "Could not find session")
        declared = request.headers.get("content-length")
        if declared is not None and not (declared.isascii() and declared.isdigit()):
            return _refusal(400, CONNECTION_ERROR, "Bad Request: malformed Content-Length")
        if declared is not None and (len(declared) > 18 or int(declared) > self.max_body_bytes):
            return _refusal(
                413,
                CONNECTION_ERROR,
                f"Payload Too Large: the limit is {self.max_body_bytes} bytes",
            )
        held = Reservation((session.budget, self.queued), self.memory_budget)
        try:
            return await self._take(request, session, held, int(declared or 0))
        finally:
            if not held.handed:
                held.release()

    async def _take(
        self, request: Request, session: _LegacySession, held: Reservation, declared: int
    ) -> Response:
        if not held.grow(declared):
            return self._busy("too many bytes queued for this session or this server")
        # Chunks joined once at the end: the body and its parse are then all it takes (a
        # growing bytearray and its copy were three times the body).
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in request.stream():
                chunks.append(chunk)
                size += len(chunk)
                if size > self.max_body_bytes:
                    return _refusal(
                        413,
                        CONNECTION_ERROR,
                        f"Payload Too Large: the limit is {self.max_body_bytes} bytes",
                    )
                if size > held.size and not held.grow(size - held.size):
                    return self._busy("too many bytes queued for this session or this server")
        except ClientDisconnect:
            return _refusal(400, CONNECTION_ERROR, "Bad Request: the body was cut short")
        body = b"".join(chunks)
        chunks.clear()
        message: JsonValue | rpc.Malformed = rpc.decode(body)
        del body
        if size > CONTROL_BYTES and not isinstance(message, rpc.Malformed):
            held.settle(resident_size(message))
        if isinstance(message, rpc.Malformed):
            return _refusal(400, PARSE_ERROR, f"Parse error: {message.reason}")
        if message == []:
            return _refusal(400, INVALID_REQUEST, "Invalid Request: empty batch")
        count = len(message) if type(message) is list else 1
        if self.auth is not None:
            batch = message if type(message) is list else [message]
            refused = self.auth.operation_refusal(request.scope, batch)
            if refused is not None:
                return Response(refused[1], refused[0], refused[2], media_type=JSON)
        # Its bytes stay held (process budget included) until answered: prepaid, unless forced.
        context = HttpRequestContext(request, session.id)
        envelope = Envelope(message, context, prepaid=held.prepaid)
        try:
            queued = session.inbox.offer(envelope, held, count)
        except anyio.ClosedResourceError:
            return _refusal(404, CONNECTION_ERROR, "Could not find session")
        if not queued:
            return self._busy("this session has too many messages queued")
        return Response(status_code=202)


def combined_app(
    streamable: ASGIApp, legacy: LegacySSEServer, *, mcp_path: str = "/mcp"
) -> ASGIApp:
    """One ASGI app serving Streamable HTTP at ``mcp_path`` and HTTP+SSE at the legacy paths,
    for servers that keep supporting 2024-11-05 clients (transports.md, backwards compatibility).

    ``streamable`` is usually a ``StreamableHTTPServer``; both lifespans are run.
    """
    run_streamable = getattr(streamable, "run", None)

    @asynccontextmanager
    async def run_both() -> AsyncGenerator[None, None]:
        async with legacy.run():
            if run_streamable is not None:
                async with run_streamable():
                    yield
            else:
                yield

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await asgi_lifespan(run_both, receive, send)
        elif scope["type"] == "http" and scope["path"].rstrip("/") == mcp_path.rstrip("/"):
            await streamable(scope, receive, send)
        else:
            await legacy(scope, receive, send)

    return app


class LegacySSEChannel:
    """The client side of one HTTP+SSE connection: ``run`` reads the stream, ``post`` sends.

    ``run`` is started with ``TaskGroup.start``: it reports started once the ``endpoint`` event
    has arrived, so messages are never POSTed before the server said where.
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        url: str,
        headers: Mapping[str, str],
        feed: Callable[[Any], Awaitable[None]],
        sse_read_timeout: float,
    ) -> None:
        self.http = http
        self.url = url
        self.headers = dict(headers)
        self.feed = feed
        self.sse_read_timeout = sse_read_timeout
        self.endpoint: str | None = None

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Open the stream, wait for ``endpoint``, then feed every message until it ends."""
        headers = {**self.headers, "accept": SSE}
        async with self.http.stream("GET", self.url, headers=headers) as response:
            if response.status_code != 200:
                raise httpx.HTTPStatusError(
                    f"GET {self.url} answered HTTP {response.status_code}",
                    request=response.request,
                    response=response,
                )
            events = EventSource(response).aiter_sse()
            async for event in events:
                if event.event == "endpoint":
                    endpoint = urljoin(self.url, event.data.strip())
                    if urlsplit(endpoint).netloc != urlsplit(self.url).netloc:
                        raise httpx.HTTPError(
                            f"the endpoint {endpoint!r} is not on the server's origin"
                        )
                    self.endpoint = endpoint
                    break
            if self.endpoint is None:
                raise httpx.HTTPError("the SSE stream ended before its endpoint event")
            task_status.started()
            async for event in events:
                if event.event == "message" and event.data:
                    message = rpc.decode(event.data)
                    if isinstance(message, rpc.Malformed):
                        logger.warning("dropped an SSE event that is not JSON: %s", message.reason)
                        continue
                    await self.feed(message)

    async def post(self, message: Any) -> None:
        """Send one message to the endpoint; the answer, if any, comes on the stream."""
        assert self.endpoint is not None
        headers = {**self.headers, "content-type": JSON}
        response = await self.http.post(self.endpoint, content=rpc.encode(message), headers=headers)
        if response.status_code >= 400:
            raise httpx.HTTPStatusError(
                f"POST answered HTTP {response.status_code}",
                request=response.request,
                response=response,
            )


@asynccontextmanager
async def sse_client(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    sse_read_timeout: float = 300.0,
    http_client: httpx.AsyncClient | None = None,
    auth: httpx.Auth | None = None,
) -> AsyncGenerator[Connection, None]:
    """An HTTP+SSE (2024-11-05) transport to the server's SSE endpoint ``url``; ``auth`` (e.g.
    an ``auth.OAuthClientAuth``) authorizes its requests."""
    in_send, in_receive = anyio.create_memory_object_stream[Envelope](STREAM_BUFFER)
    out_send, out_receive = anyio.create_memory_object_stream[Envelope](STREAM_BUFFER)
    own = http_client is None
    http = http_client or httpx.AsyncClient(
        timeout=httpx.Timeout(timeout, read=sse_read_timeout), auth=auth
    )
    reason: list[str] = []

    async def feed(message: Any) -> None:
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await in_send.send(Envelope(message))

    channel = LegacySSEChannel(http, url, headers or {}, feed, sse_read_timeout)

    async def read(task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        try:
            await channel.run(task_status=task_status)
            reason.append("the server closed the SSE stream")
        except httpx.HTTPError as exc:
            reason.append(f"the SSE stream failed: {exc!r}")
        finally:
            in_send.close()

    async def write() -> None:
        async with out_receive:
            async for envelope in out_receive:
                try:
                    await channel.post(envelope.message)
                except httpx.HTTPError as exc:
                    sent: JsonValue = envelope.message
                    request_id = sent.get("id") if type(sent) is dict else None
                    if type(sent) is dict and "method" in sent and rpc.is_request_id(request_id):
                        await feed(
                            rpc.error_response(
                                request_id, -32000, f"could not send the request: {exc}"
                            )
                        )

    try:
        async with anyio.create_task_group() as tg, in_receive, out_send:
            await tg.start(read)
            tg.start_soon(write)
            yield Connection(in_receive, out_send, lambda: reason[0] if reason else None)
            tg.cancel_scope.cancel()
    finally:
        if own:
            with anyio.CancelScope(shield=True):
                await http.aclose()
