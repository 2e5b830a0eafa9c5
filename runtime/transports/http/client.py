"""The Streamable HTTP client transport (httpx + httpx-sse).

Every message the session sends becomes one POST. A request's answer comes back as JSON or
as an SSE stream carrying the response and whatever the server sends on the way (progress,
logs, nested requests); notifications and responses get 202. After the handshake the client
opens the GET stream for server-initiated messages. A stream that drops before its response
is resumed with ``GET`` + ``Last-Event-ID`` after the server's ``retry`` delay, so nothing sent
meanwhile is lost. Closing the transport DELETEs the session.

Requests are POSTed concurrently (each in its own task), but ``initialize``, notifications and
responses are sent in order and awaited, so the server sees ``notifications/initialized``
before anything that follows it and a cancellation after the request it cancels.

The transport follows the backwards-compatibility rule of transports.md: if POSTing
``initialize`` gets 400, 404 or 405 without a modern JSON-RPC error in the body (a modern-only
server's refusal is surfaced instead: it names the versions it serves), it switches to the
2024-11-05 HTTP+SSE transport at the same URL (``fallback_to_sse=False`` turns that off).

A stateless-era request (2026-07-28: its ``params._meta`` names the protocol version) gets the
request metadata headers (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, and the
``Mcp-Param-*`` a lifecycle provides through the ``HeaderHook`` in ``Connection.extra``); its
stream is never resumed, and cancelling it closes the stream instead of POSTing
``notifications/cancelled`` (that era has no client notifications over HTTP). An error
status whose body is a JSON-RPC error response reaches the caller as that error, code, message
and data unchanged; only a body that is not one becomes a transport error (-32000).

Speed: when the transport owns its httpx clients, has no ``auth`` and runs on asyncio, POSTs
go through a small keep-alive pool on httptools (``_fastpost.py``), each in a plain asyncio
task, and a JSON answer is read straight off the connection; everything else (SSE answers,
errors, redirects, GET streams, resumption, DELETE, auth flows) is the same httpx code.

This module POSTs what the session sends and makes the transport; the client's state and how
answers reach the session are in ``_client_state``, reading SSE responses in ``_client_streams``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import httpx
from anyio.abc import TaskGroup, TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcpbind.generated.names import INITIALIZE, NOTIFICATIONS_CANCELLED, NOTIFICATIONS_INITIALIZED
from mcpbind.runtime.core import jsonrpc as rpc
from mcpbind.runtime.core.errors import METHOD_NOT_FOUND
from mcpbind.runtime.core.loop_path import loop_path
from mcpbind.runtime.core.outgoing import DEADLINE_HOLD
from mcpbind.runtime.core.request_headers import standard_headers
from mcpbind.runtime.core.revisions import MODERN_ERRORS
from mcpbind.runtime.core.transport import STREAM_BUFFER, Connection, Envelope

from ._client_state import HttpTransportError, error_body, request_id_of
from ._client_streams import StreamReader
from ._fastpost import FastPoster
from ._signals import Inbox
from .common import JSON, PROTOCOL_VERSION, SESSION_ID, SSE
from .legacy_sse import LegacySSEChannel

if TYPE_CHECKING:
    import asyncio  # annotations only: the tasks come from the fast path seam

    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = ["HttpTransportError", "streamable_http_client"]

logger = logging.getLogger("mcpbind.runtime.http")

#: Codes that show a modern server answered ``initialize`` (an unknown method to it): no reason
#: to look for a legacy HTTP+SSE server (streamable-http.md, "Backward Compatibility").
_MODERN_REFUSALS = MODERN_ERRORS | {METHOD_NOT_FOUND}
#: Connections kept open to the server: every request in flight holds one (its POST), plus the
#: GET stream; httpx's default of 20 kept alive means reconnecting per request beyond that.
POOL_SIZE = 128
#: How many httpx clients an owned pool is split into (see ``_post_client``).
POOL_SHARDS = 4
#: How long the POST after ``notifications/initialized`` waits for the GET stream's head, so a
#: server request sent right away finds the stream open.
GET_STREAM_WAIT = 5.0
_JSON_BYTES = JSON.encode()
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class _StreamableClient(StreamReader):
    """One client connection: POSTs what the session sends (state in ``ClientState``, SSE
    reading in ``StreamReader``), and falls back to HTTP+SSE when the server is legacy."""

    # -- sending --------------------------------------------------------------------------

    async def write_loop(
        self, outgoing: MemoryObjectReceiveStream[Envelope], tg: TaskGroup
    ) -> None:
        """POST what the session sends: requests concurrently, everything else in order."""
        self._tg = tg
        async with outgoing:
            async for envelope in outgoing:
                try:
                    await self._send_in_order(envelope, tg)
                finally:
                    self.queued -= 1

    async def _send_in_order(self, envelope: Envelope, tg: TaskGroup) -> None:
        message = envelope.message
        request_id = request_id_of(message)
        if self.legacy is not None:
            await self._post_legacy(message, request_id)
        elif request_id is not None and message.get("method") != INITIALIZE:
            if self.poster is not None:
                self._spawn_native(message, request_id)
            else:
                scope = anyio.CancelScope()
                self.readers[request_id] = scope
                tg.start_soon(self._post_scoped, message, request_id, scope)
        else:
            sent: JsonValue = message
            request = sent if type(sent) is dict else None
            method = request.get("method") if request is not None else None
            if request_id is not None:
                self._initialize_id = request_id
            if (
                method == NOTIFICATIONS_CANCELLED
                and request is not None
                and self._cancel_reader(request)
            ):
                return
            await self._post(message, request_id)
            if method == NOTIFICATIONS_INITIALIZED:
                await self._start_get_stream()

    def post_at_once(self, envelope: Envelope) -> bool:
        """POST a request on the pool from the sender's own task, if that is all it takes
        (``_Outgoing``): True if done."""
        message: JsonValue = envelope.message
        if self.poster is None or self.legacy is not None or type(message) is not dict:
            return False
        request_id = request_id_of(message)
        if request_id is None or message.get("method") == INITIALIZE:
            return False
        self._spawn_native(message, request_id)
        return True

    def _cancel_reader(self, message: dict[str, Any]) -> bool:
        """The session gave up on a request: stop reading a stream that will never end.

        True if that request was a stateless-era one, whose cancellation is closing its stream
        and nothing more (the notification is then not sent).
        """
        params: JsonValue = message.get("params")
        target: JsonValue = params.get("requestId") if type(params) is dict else None
        if not rpc.is_request_id(target):
            return False
        scope = self.readers.get(target)
        if scope is not None:
            scope.cancel()
        return target in self.modern

    async def _start_get_stream(self) -> None:
        """Open the GET stream and wait for its first answer before the next POST: a server
        may send a request of its own there as soon as it gets one of ours (the conformance
        suite's elicitation scenarios do), and a message sent before the stream is open is lost.
        """
        if (
            not self.get_started
            and self.session_id is not None
            and self._tg is not None
            and self.legacy is None
        ):
            self.get_started = True
            opened = anyio.Event()
            self._tg.start_soon(self._get_stream, opened)
            # Bounded: a server that accepts the GET but never answers its head must not hold
            # every later POST for ``sse_read_timeout``.
            with anyio.move_on_after(GET_STREAM_WAIT):
                await opened.wait()

    def _spawn_native(self, message: Any, request_id: int | str) -> None:
        """POST a request in a plain asyncio task (see ``RequestTasks``); that task is the
        request's reader: cancelling it closes the stream."""
        task = self.tasks.spawn(self._post(message, request_id), f"request {request_id!r}")
        self.readers[request_id] = task
        task.add_done_callback(lambda done: self._forget_reader(done, request_id))

    def _forget_reader(self, task: asyncio.Task[None], request_id: int | str) -> None:
        if self.readers.get(request_id) is task:
            del self.readers[request_id]

    async def _post_scoped(
        self, message: Any, request_id: int | str, scope: anyio.CancelScope
    ) -> None:
        try:
            with scope:
                await self._post(message, request_id)
        finally:
            self.readers.pop(request_id, None)

    async def _post_legacy(self, message: Any, request_id: int | str | None) -> None:
        assert self.legacy is not None
        try:
            await self.legacy.post(message)
        except (httpx.HTTPError, HttpTransportError) as exc:
            await self._fail(request_id, f"could not send the message: {exc}")

    async def _post(self, message: JsonValue, request_id: int | str | None) -> None:
        headers = self.headers_for(f"{JSON}, {SSE}")
        headers["content-type"] = JSON
        if type(message) is dict and (metadata := standard_headers(message)):
            headers.pop(PROTOCOL_VERSION, None)
            headers.update(metadata)
            headers.update(self.hook.headers_for(message))
            if request_id is not None:
                self.modern.add(request_id)
        try:
            if self.poster is not None:
                await self._post_fast(self.poster, message, request_id, headers)
            else:
                # The session's deadline hold rides with the request: an httpx.Auth that
                # signs a user in on a 401 keeps that time off the request's timeout.
                hold = self.extra.get(DEADLINE_HOLD)
                extensions = (
                    {DEADLINE_HOLD: functools.partial(hold, request_id)}
                    if hold is not None and request_id is not None
                    else None
                )
                async with self._post_client().stream(
                    "POST",
                    self.url,
                    content=rpc.encode(message),
                    headers=headers,
                    extensions=extensions,
                ) as response:
                    await self._on_post_response(response, message, request_id)
        except httpx.HTTPError as exc:
            await self._fail(request_id, f"HTTP request failed: {exc!r}")
        except Exception as exc:
            # A server answering nonsense must fail this request, not the whole connection.
            logger.exception("handling the answer to %r failed", request_id)
            await self._fail(request_id, f"the server's answer could not be handled: {exc!r}")
        finally:
            if request_id is not None:
                self.modern.discard(request_id)

    async def _post_fast(
        self,
        poster: FastPoster,
        message: Any,
        request_id: int | str | None,
        headers: dict[str, str],
    ) -> None:
        """POST on the small pool; a redirect is left to httpx, which follows it.

        The usual answer (a JSON response to a request, or 202) is read straight from the
        connection; any other goes through ``_on_post_response`` as an ``httpx.Response``.
        """
        content = rpc.encode(message)
        answer = await poster.post(headers, content)
        status = answer.status
        try:
            if status == 202:
                return
            if (
                status == 200
                and request_id is not None
                and request_id != self._initialize_id
                and answer.content_type() == _JSON_BYTES
            ):
                parsed: JsonValue | rpc.Malformed = rpc.decode(await answer.read())
                if isinstance(parsed, rpc.Malformed):
                    await self._fail(request_id, f"the server sent invalid JSON: {parsed.reason}")
                    return
                for item in parsed if type(parsed) is list else [parsed]:
                    await self._feed(item)
                return
            if status in _REDIRECTS:
                answer.discard()
                async with self._post_client().stream(
                    "POST", self.url, content=content, headers=headers
                ) as followed:
                    await self._on_post_response(followed, message, request_id)
                return
            await self._on_post_response(answer.response(), message, request_id)
        finally:
            answer.discard()

    def _post_client(self) -> httpx.AsyncClient:
        """The next of ``post_clients``, round robin.

        httpx's pool does work proportional to its connections on every request; with dozens
        in flight that dominates the client's CPU, so an owned pool is split into several.
        """
        clients = self.post_clients
        self._next_post = (self._next_post + 1) % len(clients)
        return clients[self._next_post]

    async def _on_post_response(
        self, response: httpx.Response, message: Any, request_id: int | str | None
    ) -> None:
        status = response.status_code
        if request_id is not None and request_id == self._initialize_id:
            if self.fallback_to_sse and status in (400, 404, 405):
                error = error_body(await response.aread())
                if error is None or error["code"] not in _MODERN_REFUSALS:
                    await self._switch_to_legacy(message, request_id, status)
                    return
                await self._answer_error(request_id, error)
                return
            sid = response.headers.get(SESSION_ID)
            if sid:
                self.session_id = sid
        if status == 202:
            return
        if status == 404 and self.session_id is not None:
            await self._fail(request_id, "the server ended the session (HTTP 404)")
            self._end("the server ended the session (HTTP 404); start a new one")
            return
        if status >= 400:
            body = await response.aread()
            error = error_body(body)
            if error is not None and request_id is not None:
                await self._answer_error(request_id, error)
            else:
                detail = error["message"] if error else body[:200].decode(errors="replace")
                await self._fail(request_id, f"HTTP {status}: {detail}", status)
            return
        content_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if content_type == SSE:
            await self._read_post_stream(response, request_id)
        elif content_type == JSON:
            parsed: JsonValue | rpc.Malformed = rpc.decode(await response.aread())
            if isinstance(parsed, rpc.Malformed):
                await self._fail(request_id, f"the server sent invalid JSON: {parsed.reason}")
                return
            for item in parsed if type(parsed) is list else [parsed]:
                await self._feed(item)
        elif request_id is not None:
            await self._fail(request_id, f"unexpected Content-Type {content_type!r} for a request")

    # -- legacy fallback ------------------------------------------------------------------

    async def _switch_to_legacy(self, message: Any, request_id: int | str, status: int) -> None:
        assert self._tg is not None
        logger.info("POST answered %d; falling back to HTTP+SSE (2024-11-05)", status)
        self.legacy = LegacySSEChannel(
            self.http, self.url, self.headers, self._feed, self.sse_read_timeout
        )
        try:
            await self._tg.start(self._read_legacy)
        except (httpx.HTTPError, HttpTransportError, OSError) as exc:
            self.legacy = None
            await self._fail(
                request_id,
                f"neither Streamable HTTP (POST answered HTTP {status}) nor HTTP+SSE "
                f"({exc}) worked at {self.url}",
            )
            return
        await self._post_legacy(message, request_id)

    async def _read_legacy(self, *, task_status: TaskStatus[None]) -> None:
        """Run the HTTP+SSE stream; its end is the session's end (that transport's rule)."""
        assert self.legacy is not None
        try:
            await self.legacy.run(task_status=task_status)
            reason = "the server closed the HTTP+SSE stream"
        except (httpx.HTTPError, OSError) as exc:
            if self.legacy.endpoint is None:
                raise
            reason = f"the HTTP+SSE stream failed: {exc!r}"
        self._end(reason)


class _Outgoing:
    """The connection's ``outgoing``. A request is POSTed (in a task of its own) straight from
    the session's ``send_nowait`` when nothing sent before it still waits in ``write_loop``'s
    queue: one task switch and a queue less per request. Everything else, and a request
    behind something queued, goes through that queue, so the order of sending holds."""

    __slots__ = ("_client", "_closed", "_stream")

    def __init__(self, client: _StreamableClient, stream: MemoryObjectSendStream[Envelope]) -> None:
        self._client = client
        self._stream = stream
        self._closed = False

    def send_nowait(self, item: Envelope) -> None:
        client = self._client
        if not self._closed and client.queued == 0 and client.post_at_once(item):
            return
        client.queued += 1
        try:
            self._stream.send_nowait(item)
        except BaseException:
            client.queued -= 1
            raise

    async def send(self, item: Envelope) -> None:
        client = self._client
        client.queued += 1
        try:
            await self._stream.send(item)
        except BaseException:
            client.queued -= 1
            raise

    def close(self) -> None:
        self._closed = True
        self._stream.close()


@asynccontextmanager
async def streamable_http_client(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    sse_read_timeout: float = 300.0,
    http_client: httpx.AsyncClient | None = None,
    terminate_on_close: bool = True,
    max_reconnects: int = 5,
    fallback_to_sse: bool = True,
    auth: httpx.Auth | None = None,
) -> AsyncGenerator[Connection, None]:
    """A Streamable HTTP transport to ``url`` (the server's MCP endpoint).

    ``headers`` go on every request (e.g. ``Authorization``). ``timeout`` bounds connecting and
    sending; ``sse_read_timeout`` bounds the wait for the next bytes of a response (a handler
    that runs longer without sending anything must report progress). ``http_client`` lets the
    caller share a pool, TLS or auth set-up (it is not closed here). ``max_reconnects`` bounds
    consecutive failed attempts to resume a dropped stream. ``auth`` (e.g. an
    ``auth.OAuthClientAuth``) authorizes every request of the clients made here.
    """
    path = loop_path()  # the fast path seam, picked once for this connection
    inbox = Inbox(path)
    out_send, out_receive = anyio.create_memory_object_stream[Envelope](STREAM_BUFFER)
    own = http_client is None
    # One TLS context for every owned client: each builds its own otherwise, about 20 ms apiece
    # (loading the CA store), which was most of opening a connection.
    tls = httpx.create_ssl_context() if own else None

    def make_client(connections: int) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            timeout=httpx.Timeout(timeout, read=sse_read_timeout),
            limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
            follow_redirects=True,
            verify=tls if tls is not None else True,
            auth=auth,
        )

    http = http_client or make_client(POOL_SIZE)
    state = _StreamableClient(
        http,
        url,
        headers or {},
        inbox,
        max_reconnects=max_reconnects,
        fallback_to_sse=fallback_to_sse,
        sse_read_timeout=sse_read_timeout,
    )
    outgoing = _Outgoing(state, out_send)
    if own:
        state.post_clients = [make_client(POOL_SIZE // POOL_SHARDS) for _ in range(POOL_SHARDS)]
        if auth is None and path.native and FastPoster.usable(url):
            state.poster = FastPoster(url, tls, timeout, sse_read_timeout)
    try:
        async with anyio.create_task_group() as tg, out_send:
            state._tg = tg  # pyright: ignore[reportPrivateUsage]  (before write_loop runs)
            tg.start_soon(state.write_loop, out_receive, tg)
            yield Connection(
                inbox,
                outgoing,
                lambda: state.close_reason,
                extra=state.extra,
            )
            tg.cancel_scope.cancel()
    finally:
        outgoing.close()  # a request sent from now on fails instead of being POSTed
        inbox.end()
        with anyio.CancelScope(shield=True):
            await state.tasks.close()
            if terminate_on_close and state.session_id is not None and state.legacy is None:
                try:
                    with anyio.fail_after(min(timeout, 5.0)):
                        await http.delete(url, headers=state.headers_for(f"{JSON}, {SSE}"))
                except (httpx.HTTPError, TimeoutError) as exc:
                    logger.debug("could not end the session: %r", exc)
            if state.poster is not None:
                state.poster.close()
            if own:
                for client in {http, *state.post_clients}:
                    await client.aclose()
