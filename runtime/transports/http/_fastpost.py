"""The POSTs of the Streamable HTTP client on a small HTTP/1.1 pool (asyncio + httptools).

Measured (``bench/http_client.py``): httpx + httpcore spent about 1 ms of CPU on each POST,
most of the client's time; a keep-alive connection written to from a prebuilt request head and
parsed by httptools (the C parser uvicorn uses) costs a small fraction of that. The answer is
still an ``httpx.Response`` (its body streamed from the connection), so everything downstream
(JSON, SSE through httpx-sse, error bodies, resumption) is the same code whichever carried it.

Only the POSTs of a transport that owns its httpx clients, runs on asyncio and has no
``httpx.Auth`` take this path; GET streams, DELETE, redirects, auth flows and a caller's own
``httpx.AsyncClient`` stay on httpx. Failures raise httpx's exceptions, so callers handle
both paths alike. A connection goes back to the pool only once its response was read to the
end; a response abandoned (a cancelled request, a stream closed early) closes it.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections import deque
from collections.abc import AsyncIterator, Coroutine, Mapping
from typing import Any

import httptools
import httpx
from mcpbind.runtime.core.bounded import remember

logger = logging.getLogger("mcpbind.runtime.http")

__all__ = ["Answer", "FastPoster", "RequestTasks"]

#: Idle keep-alive connections kept per transport.
MAX_IDLE = 64
#: Distinct header sets whose encoded request head is kept per transport (all dropped when
#: full): a client sends the same few again and again.
MAX_HEADS = 128


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection; one request at a time, its response parsed by httptools."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.headers: list[tuple[bytes, bytes]] = []
        #: The ``Content-Type`` value as sent (the first one), or empty.
        self.content_type = b""
        self.chunks: deque[bytes] = deque()
        self.status = 0
        self.headed = False
        self.complete = False
        self.keep_alive = False
        self.error: Exception | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.parser: Any = None

    # -- asyncio.Protocol --
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.parser is None:
            self._fail(httpx.RemoteProtocolError("the server sent bytes nobody asked for"))
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(httpx.RemoteProtocolError(f"invalid HTTP response: {exc}"))
            return
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        if not self.complete:
            reason = f": {exc}" if exc else ""
            self._fail(httpx.RemoteProtocolError(f"the server closed the connection{reason}"))

    # -- httptools callbacks --
    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))
        if len(name) == 12 and not self.content_type and name.lower() == b"content-type":
            self.content_type = value

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.keep_alive = self.parser.should_keep_alive()
        self.headed = True

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        self.complete = True

    # --
    def _fail(self, error: Exception) -> None:
        if self.error is None:
            self.error = error
        if self.transport is not None:
            self.transport.close()
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def start(self, request: bytes) -> None:
        assert self.transport is not None
        self.headers = []
        self.content_type = b""
        self.chunks.clear()
        self.headed = self.complete = False
        self.parser = httptools.HttpResponseParser(self)
        self.transport.write(request)

    async def wait(self, timeout: float) -> None:
        """Until something arrived (or the connection failed), at most ``timeout`` seconds."""
        if self.error is not None:
            raise self.error
        loop = asyncio.get_running_loop()
        self.waiter = waiter = loop.create_future()
        timer = loop.call_later(timeout, _expire, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self.waiter = None
        if self.error is not None:
            raise self.error

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
            self.transport = None


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(httpx.ReadTimeout("no answer from the server in time"))


class Answer(httpx.AsyncByteStream):
    """The response to one POST: status and headers, and its body streamed from the
    connection, which goes back to the pool (or is closed) once, when the body was read or
    given up."""

    def __init__(self, poster: FastPoster, connection: _Connection) -> None:
        self.poster = poster
        self.connection: _Connection | None = connection
        self.status = connection.status
        self.headers = connection.headers
        self.raw_content_type = connection.content_type

    def content_type(self) -> bytes:
        """The media type, lower case, without parameters."""
        value = self.raw_content_type
        if value == b"application/json":
            return value
        return value.split(b";", 1)[0].strip().lower()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self.connection
        if connection is None:
            return
        while True:
            while connection.chunks:
                yield connection.chunks.popleft()
            if connection.complete:
                self.discard()
                return
            await connection.wait(self.poster.read_timeout)

    async def read(self) -> bytes:
        """The whole body."""
        try:
            return b"".join([chunk async for chunk in self])
        finally:
            self.discard()

    def response(self) -> httpx.Response:
        """This answer as httpx's, its body still to be streamed."""
        return httpx.Response(
            self.status, headers=self.headers, stream=self, request=self.poster.request
        )

    def discard(self) -> None:
        """Done with the connection: back to the pool if its response was complete, else closed."""
        connection, self.connection = self.connection, None
        if connection is not None:
            self.poster.release(connection)

    async def aclose(self) -> None:
        self.discard()


class FastPoster:
    """POSTs to one URL over a pool of keep-alive HTTP/1.1 connections."""

    def __init__(
        self, url: str, tls: ssl.SSLContext | None, connect_timeout: float, read_timeout: float
    ) -> None:
        parsed = httpx.URL(url)
        self.url = parsed
        self.host = parsed.host
        self.port = parsed.port or (443 if parsed.scheme == "https" else 80)
        self.tls = tls if parsed.scheme == "https" else None
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.head = b"POST %s HTTP/1.1\r\nhost: %s\r\n" % (parsed.raw_path, parsed.netloc)
        self.idle: list[_Connection] = []
        self.request = httpx.Request("POST", parsed)
        self._heads: dict[tuple[tuple[str, str], ...], bytes] = {}

    @staticmethod
    def usable(url: str) -> bool:
        return httpx.URL(url).scheme in ("http", "https")

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            _, connection = await asyncio.wait_for(
                loop.create_connection(
                    _Connection,
                    self.host,
                    self.port,
                    ssl=self.tls,
                    server_hostname=self.host if self.tls is not None else None,
                ),
                self.connect_timeout,
            )
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"connecting to {self.url} timed out") from exc
        except OSError as exc:
            raise httpx.ConnectError(f"could not connect to {self.url}: {exc}") from exc
        return connection

    def release(self, connection: _Connection) -> None:
        if (
            connection.complete
            and connection.keep_alive
            and connection.transport is not None
            and len(self.idle) < MAX_IDLE
        ):
            connection.parser = None
            self.idle.append(connection)
        else:
            connection.close()

    def _head(self, headers: Mapping[str, str]) -> bytes:
        """The request line and ``headers``, encoded; kept by their exact names and values
        (a header with a line break is refused every time: it is never kept)."""
        key = tuple(headers.items())
        head = self._heads.get(key)
        if head is None:
            lines = [self.head]
            for name, value in key:
                if "\r" in value or "\n" in value:
                    raise httpx.LocalProtocolError(f"header {name!r} has a line break")
                lines.append(f"{name}: {value}\r\n".encode())
            head = remember(self._heads, key, b"".join(lines), MAX_HEADS)
        return head

    async def post(self, headers: Mapping[str, str], content: bytes) -> Answer:
        """Send the POST and wait for its status and headers; the body is the caller's to read
        (``Answer.read``, ``Answer.response``) or give up (``Answer.discard``)."""
        request = b"%scontent-length: %d\r\n\r\n%s" % (self._head(headers), len(content), content)
        while True:
            while self.idle and self.idle[-1].transport is None:
                self.idle.pop()
            reused = bool(self.idle)
            connection = self.idle.pop() if reused else await self._connect()
            try:
                connection.start(request)
                while not connection.headed:
                    await connection.wait(self.read_timeout)
            except httpx.RemoteProtocolError:
                connection.close()
                if reused and not connection.headed:
                    continue  # a keep-alive connection the server had closed meanwhile
                raise
            except BaseException:
                connection.close()
                raise
            return Answer(self, connection)

    def close(self) -> None:
        for connection in self.idle:
            connection.close()
        self.idle.clear()


class RequestTasks:
    """Plain asyncio tasks, one per request being POSTed on the pool (which runs only on
    asyncio): an anyio task and cancel scope per request cost more than the rest of the POST.
    ``close`` cancels the ones left and waits until they have let go of their connections."""

    def __init__(self) -> None:
        self.running: set[asyncio.Task[None]] = set()

    def spawn(self, work: Coroutine[Any, Any, None], what: str) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work)
        self.running.add(task)
        task.add_done_callback(lambda done: self._done(done, what))
        return task

    def _done(self, task: asyncio.Task[None], what: str) -> None:
        self.running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("posting %s failed", what, exc_info=task.exception())

    async def close(self) -> None:
        tasks = list(self.running)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
