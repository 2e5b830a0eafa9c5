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
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urljoin, urlsplit

import anyio
import httpx
from anyio.abc import TaskGroup, TaskStatus
from httpx_sse import EventSource
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .. import _jsonrpc as rpc
from ..errors import PARSE_ERROR
from ..transport import STREAM_BUFFER, Connection, Envelope
from ._common import JSON, SSE, encode_event
from .security import LOOPBACK_HOSTS, HostGuard
from .server import HttpRequestContext

__all__ = ["LegacySSEChannel", "LegacySSEServer", "combined_app", "sse_client"]

logger = logging.getLogger("mcpbind.runtime.http")

SessionRunner = Callable[[Connection], Awaitable[None]]


class _LegacySession:
    """One SSE connection's session: its inbound stream and the task running it."""

    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.in_send, in_receive = anyio.create_memory_object_stream[Envelope](STREAM_BUFFER)
        self.out_send, self.out_receive = anyio.create_memory_object_stream[Envelope](STREAM_BUFFER)
        self.connection = Connection(in_receive, self.out_send)
        self.scope = anyio.CancelScope()


class LegacySSEServer:
    """The 2024-11-05 HTTP+SSE endpoints as an ASGI app: ``GET sse_path`` and ``POST message_path``.

    Like ``StreamableHTTPServer`` it runs ``serve`` once per session in a task group opened by
    ``run()`` (the ASGI lifespan does it when the app is served directly), checks Host and
    Origin, and refuses bodies over ``max_body_bytes``.
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
    ) -> None:
        self.serve = serve
        self.sse_path = sse_path
        self.message_path = message_path
        self.guard = HostGuard(allowed_hosts, allowed_origins)
        self.max_body_bytes = max_body_bytes
        self.max_sessions = max_sessions
        self.sessions: dict[str, _LegacySession] = {}
        self._tg: TaskGroup | None = None

    @asynccontextmanager
    async def run(self) -> AsyncIterator[LegacySSEServer]:
        """Host the sessions while open; ends them all on exit."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield self
            finally:
                self._tg = None
                for session in list(self.sessions.values()):
                    session.in_send.close()
                tg.cancel_scope.deadline = anyio.current_time() + 2.0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(self.run, receive, send)
            return
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        if not self.guard.host_ok(request.headers.get("host")) or not self.guard.origin_ok(
            request.headers.get("origin")
        ):
            await Response("Forbidden", 403)(scope, receive, send)
            return
        path = scope["path"]
        if path.rstrip("/") == self.sse_path.rstrip("/") and request.method == "GET":
            await self._sse(request, scope, receive, send)
        elif path.rstrip("/") == self.message_path.rstrip("/") and request.method == "POST":
            await (await self._message(request))(scope, receive, send)
        elif path.rstrip("/") in (self.sse_path.rstrip("/"), self.message_path.rstrip("/")):
            await Response("Method Not Allowed", 405)(scope, receive, send)
        else:
            await Response("Not Found", 404)(scope, receive, send)

    async def _sse(self, request: Request, scope: Scope, receive: Receive, send: Send) -> None:
        if self._tg is None:
            await Response("the server's task group is not running (enable lifespan)", 500)(
                scope, receive, send
            )
            return
        if len(self.sessions) >= self.max_sessions:
            await Response("too many sessions", 503)(scope, receive, send)
            return
        session = _LegacySession(secrets.token_hex(16))
        self.sessions[session.id] = session
        self._tg.start_soon(self._run_session, session)
        endpoint = f"{scope.get('root_path', '')}{self.message_path}?session_id={session.id}"

        async def events() -> AsyncIterator[bytes]:
            try:
                yield encode_event(event="endpoint", data=endpoint)
                async with session.out_receive:
                    async for envelope in session.out_receive:
                        yield encode_event(envelope.message, event="message")
            finally:
                self._end(session)

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
            session.out_send.close()

    def _end(self, session: _LegacySession) -> None:
        """The SSE connection is gone: the session ends with it."""
        if self.sessions.get(session.id) is session:
            del self.sessions[session.id]
        session.in_send.close()
        session.scope.deadline = min(session.scope.deadline, anyio.current_time() + 2.0)

    async def _message(self, request: Request) -> Response:
        session = self.sessions.get(request.query_params.get("session_id", ""))
        if session is None:
            return Response("Could not find session", 404)
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            return Response("Payload Too Large", 413)
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > self.max_body_bytes:
                return Response("Payload Too Large", 413)
        message = rpc.decode(bytes(body))
        if isinstance(message, rpc.Malformed):
            return Response(
                rpc.encode(rpc.error_response(None, PARSE_ERROR, message.reason)),
                400,
                media_type=JSON,
            )
        try:
            await session.in_send.send(Envelope(message, HttpRequestContext(request, session.id)))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return Response("Could not find session", 404)
        return Response("Accepted", 202)


async def _lifespan(run: Callable[[], Any], receive: Receive, send: Send) -> None:
    """The ASGI lifespan protocol around ``run()`` (an async context manager factory)."""
    message = await receive()
    if message["type"] != "lifespan.startup":
        return
    async with run():
        await send({"type": "lifespan.startup.complete"})
        while (await receive())["type"] != "lifespan.shutdown":
            pass
    await send({"type": "lifespan.shutdown.complete"})


def combined_app(
    streamable: ASGIApp, legacy: LegacySSEServer, *, mcp_path: str = "/mcp"
) -> ASGIApp:
    """One ASGI app serving Streamable HTTP at ``mcp_path`` and HTTP+SSE at the legacy paths,
    for servers that keep supporting 2024-11-05 clients (transports.md, backwards compatibility).

    ``streamable`` is usually a ``StreamableHTTPServer``; both lifespans are run.
    """
    run_streamable = getattr(streamable, "run", None)

    @asynccontextmanager
    async def run_both() -> AsyncIterator[None]:
        async with legacy.run():
            if run_streamable is not None:
                async with run_streamable():
                    yield
            else:
                yield

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(run_both, receive, send)
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
) -> AsyncIterator[Connection]:
    """An HTTP+SSE (2024-11-05) transport to the server's SSE endpoint ``url``."""
    in_send, in_receive = anyio.create_memory_object_stream[Envelope](STREAM_BUFFER)
    out_send, out_receive = anyio.create_memory_object_stream[Envelope](STREAM_BUFFER)
    own = http_client is None
    http = http_client or httpx.AsyncClient(timeout=httpx.Timeout(timeout, read=sse_read_timeout))
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
                    request_id = (
                        envelope.message.get("id") if type(envelope.message) is dict else None
                    )
                    if "method" in envelope.message and rpc.is_request_id(request_id):
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
