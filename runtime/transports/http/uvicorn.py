"""Running an ASGI app on uvicorn inside an anyio task: for tests, benchmarks and small servers.

``serving`` binds first (port 0 picks a free port) and yields the base URL only once uvicorn
is accepting, so callers never race the server's start-up or guess a port.

It also bounds what idle peers can hold. uvicorn alone does not: its ``timeout_keep_alive``
timer is armed only after a response, so a connection that never finishes its request head
is never closed; ``limit_concurrency`` is checked only once a head is complete (and then
answers 503 to everyone, stalled peers keep their sockets); ``h11_max_incomplete_event_size``
bounds a head's bytes, not its time; ``backlog`` is the kernel's accept queue. So 1,100
half-sent request lines exhaust ``ulimit -n 1024``. ``_HeadGuard`` adds the two missing
pieces to uvicorn's own protocol class: a request head must arrive within ``header_timeout``
seconds of the connection (or of the previous response) and within ``max_head_bytes``, and
at ``max_connections`` a new
connection evicts the oldest one that is only waiting for a head (or idling between
requests); if every connection is busy, the newcomer gets 503 and is closed.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import uvicorn
from mcpbind.runtime.core.budget import REQUEST_BYTES, MemoryBudget, process_budget
from starlette.types import ASGIApp
from uvicorn.config import HTTP_PROTOCOLS
from uvicorn.importer import import_from_string

if sys.platform != "win32":
    import resource

__all__ = [
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_HEAD_BYTES",
    "serve_forever",
    "serving",
    "tcp_listener",
]

logger = logging.getLogger("mcpbind.runtime.http")

#: Open connections at most: half of the usual ``ulimit -n 1024``, leaving room for the
#: process's other files (lowered further when the soft limit is lower).
DEFAULT_MAX_CONNECTIONS: Final = 512
#: Seconds a peer has to send a complete request head.
DEFAULT_HEADER_TIMEOUT: Final = 15.0
#: Bytes a request head may take (uvicorn's h11 allows 16 KiB; httptools sets no limit).
DEFAULT_MAX_HEAD_BYTES: Final = 64 * 1024
#: How long open listen streams may take to get their graceful answer when serving ends.
SHUTDOWN_GRACE: Final = 2.0
#: File descriptors kept free for everything that is not a connection.
_SPARE_FDS: Final = 32
#: What uvicorn may hold of a request body ahead of the app: it reads until it buffers more
#: than 64 KiB (its flow control's high-water mark), and a read takes up to 256 KiB (asyncio's
#: socket transport). A connection whose body is still coming reserves this in the memory
#: budget before any more of it is read (``_HeadGuard._reserve_read_ahead``).
_READ_AHEAD: Final = 64 * 1024 + 256 * 1024
_BUSY_BODY: Final = (
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"too many connections"}}'
)
_BUSY: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
    b"retry-after: 1\r\nconnection: close\r\ncontent-length: %d\r\n\r\n%s"
) % (len(_BUSY_BODY), _BUSY_BODY)
_TOO_LARGE: Final = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\n"
    b"content-length: 0\r\n\r\n"
)


class _Limits:
    """What the guarded protocols of one server share: the limits and who is evictable."""

    def __init__(
        self,
        max_connections: int,
        header_timeout: float,
        max_head_bytes: int,
        budget: MemoryBudget,
    ) -> None:
        self.budget = budget
        self.max_connections = max_connections
        self.header_timeout = header_timeout
        self.max_head_bytes = max_head_bytes
        #: Connections waiting for a request head or idle between requests, oldest first.
        self.idle: dict[_HeadGuard, None] = {}
        self.open = 0


class _HeadGuard(asyncio.Protocol):
    """Mixed in front of uvicorn's HTTP protocol class (``_guarded``): a head timeout and a
    connection cap. It relies on two things both uvicorn implementations have: ``cycle``
    (replaced when a request head is complete) and ``on_response_complete``."""

    limits: _Limits
    transport: asyncio.Transport
    cycle: Any

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        limits = self.limits
        limits.open += 1
        self._head_cycle: Any = None
        self._head_timer: asyncio.TimerHandle | None = None
        self._head_bytes = 0
        self._counted = True
        self._buffers_held = 0  # bytes held in the budget for uvicorn's buffer of a body
        self._requests = 0  # heads complete whose response is not: held at ``REQUEST_BYTES``
        if limits.open > limits.max_connections:
            victim = next(iter(limits.idle), None)
            if victim is None:
                logger.warning("connection limit (%d) reached; refused", limits.max_connections)
                assert isinstance(transport, asyncio.WriteTransport)
                transport.write(_BUSY)
                transport.close()
                return
            victim._drop("evicted: the connection limit was reached while it was idle")
        self._await_head()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        cycle = self.cycle
        if self._buffers_held and not (cycle.more_body and not cycle.response_complete):
            self._release_buffers()  # all of the body has come, or it is answered (dropped)
        if cycle is not self._head_cycle:  # a head is complete (this chunk may hold body too)
            self._head_cycle = cycle
            self._head_done()
            # Its objects are made whatever the budget (a ping must go on): charged, inline
            # (``charge`` and ``release`` calls cost 1.8k instructions a request; ``peak`` is
            # brought up to date by the next ``reserve``).
            self._requests += 1
            self.limits.budget.used += REQUEST_BYTES
            if cycle is not None and cycle.more_body and not cycle.response_complete:
                self._reserve_read_ahead()
            return
        if self._head_timer is None:
            # A response may complete before its request's body has all come (a 413 or 429
            # answered early): until then the bytes are that body's, not the next head's.
            if cycle is not None and not (cycle.response_complete and not cycle.more_body):
                return
            self._await_head()
        self._head_bytes += len(data)
        if self._head_bytes > self.limits.max_head_bytes and not self.transport.is_closing():
            self.transport.write(_TOO_LARGE)
            self._drop("a request head over the size limit")

    def on_response_complete(self) -> None:
        # What uvicorn may still hold of the body, and one request's objects (a pipelined
        # request's head may have come meanwhile: its own are held until its response).
        held = self._buffers_held
        if self._requests:
            self._requests -= 1
            held += REQUEST_BYTES
        if held:
            self._buffers_held = 0
            self.limits.budget.used -= held  # ``release``, inline
        cycle = self.cycle
        if cycle.body and cycle.response_complete:  # not a pipelined request's, come meanwhile
            # A body the app did not read (a POST refused unread, answered 503): uvicorn keeps
            # what it buffered of it until the connection's next request, though the app can no
            # longer read it (``receive`` answers a disconnect now). Measured: about 100 KiB a
            # refused 3 MiB POST, 10 MiB over 100 of them, held after the budget gave it back.
            cycle.body = cycle.body[:0]
        super().on_response_complete()  # type: ignore[misc]
        if not self.transport.is_closing():
            self.limits.idle[self] = None  # uvicorn's keep-alive timer closes it later

    def connection_lost(self, exc: Exception | None) -> None:
        self._release_buffers()
        if self._requests:
            self.limits.budget.release(self._requests * REQUEST_BYTES)
            self._requests = 0
        self._head_done()
        if self._counted:
            self._counted = False
            self.limits.open -= 1
        super().connection_lost(exc)

    def _reserve_read_ahead(self) -> None:
        """Hold what uvicorn may read of this body ahead of the app, or read no more of it.

        Paused with uvicorn's own flow control, the body waits in the kernel: uvicorn resumes
        reading when the app asks for the body (an app that reads it holds what it reads,
        as ``read_body`` does) or once the response is complete (a body refused is then
        read and dropped a socket read at a time, never buffered). What came of the body with
        its head is held either way: it was read already (charged, even beyond the limit)."""
        budget = self.limits.budget
        if budget.reserve(_READ_AHEAD):
            self._buffers_held = _READ_AHEAD  # given back once the body has come or is answered
        else:
            self.flow.pause_reading()  # type: ignore[attr-defined]
            self._buffers_held = len(self.cycle.body)
            budget.charge(self._buffers_held)

    def _release_buffers(self) -> None:
        if self._buffers_held:
            self.limits.budget.release(self._buffers_held)
            self._buffers_held = 0

    def _await_head(self) -> None:
        self.limits.idle[self] = None
        if self._head_timer is None:
            loop = asyncio.get_running_loop()
            self._head_timer = loop.call_later(
                self.limits.header_timeout, self._drop, "no complete request head in time"
            )

    def _head_done(self) -> None:
        self.limits.idle.pop(self, None)
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        self._head_bytes = 0

    def _drop(self, why: str) -> None:
        self._head_done()
        logger.debug("closing an HTTP connection: %s", why)
        if not self.transport.is_closing():
            self.transport.close()


def tcp_listener(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (0: a free port, the kernel's pick)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on accepted sockets whose proto
    # says TCP, and without it every small POST waits out a 40 ms delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if sys.platform == "win32":
            # Windows' SO_REUSEADDR would let another socket bind over this one and take its
            # connections (an OAuth redirect's code, too): exclusive use instead.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)
        else:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _guarded(http: Any, limits: _Limits) -> type[asyncio.Protocol]:
    """uvicorn's protocol class for ``http`` ("auto", "h11", "httptools" or a class), guarded."""
    base = import_from_string(HTTP_PROTOCOLS.get(http, http)) if isinstance(http, str) else http
    return type(f"Guarded{base.__name__}", (_HeadGuard, base), {"limits": limits})


def _fd_budget(wanted: int) -> int:
    """``wanted``, lowered under the process's soft ``ulimit -n`` if that is lower (Windows
    sets no such limit on sockets)."""
    if sys.platform == "win32":
        return wanted
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft > wanted + _SPARE_FDS:
        return wanted
    lowered = max(1, soft - _SPARE_FDS)
    logger.warning("max_connections lowered from %d to %d (ulimit -n %d)", wanted, lowered, soft)
    return lowered


@asynccontextmanager
async def serving(
    app: ASGIApp,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    startup_timeout: float = 10.0,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    header_timeout: float = DEFAULT_HEADER_TIMEOUT,
    max_head_bytes: int = DEFAULT_MAX_HEAD_BYTES,
    memory_budget: MemoryBudget | None = None,
    sock: socket.socket | None = None,
    **options: Any,
) -> AsyncGenerator[str, None]:
    """Serve ``app`` on uvicorn (lifespan on) while the block runs; yields ``http://host:port``.

    At most ``max_connections`` connections are open at once (kept under ``ulimit -n``); a
    peer has ``header_timeout`` seconds to send each request head, of ``max_head_bytes`` at
    most (431 beyond). What uvicorn may read of a request body ahead of the app is reserved in
    ``memory_budget`` (default ``process_budget()``) until the body has come or is answered;
    with no room, that connection is not read until the app asks for its body. Each request is
    held there at ``REQUEST_BYTES`` from its complete head until its response is complete. ``options`` go to
    ``uvicorn.Config`` (``http="h11"`` etc. is honoured and guarded the same way). On the way
    out, an app with ``close_subscriptions`` (``StreamableHTTPServer``) first ends its open
    listen streams gracefully. ``sock``: a socket bound already, served instead of binding
    ``port`` (``host`` still names it in the URL), as a supervisor hands one to its worker so that
    no other process can take the port between choosing it and serving on it.
    """
    budget = memory_budget or process_budget()
    limits = _Limits(_fd_budget(max_connections), header_timeout, max_head_bytes, budget)
    if sock is None:
        sock = tcp_listener(host, port)
    family = sock.family
    bound_port = sock.getsockname()[1]
    # No access log: at level "warning" it is never shown, but uvicorn still formats every
    # line's arguments (a few percent of a small request).
    settings: dict[str, Any] = {
        "lifespan": "on",
        "log_level": "warning",
        "access_log": False,
        "timeout_graceful_shutdown": 2,
    }
    settings.update(options)
    settings["http"] = _guarded(settings.get("http", "auto"), limits)
    config = uvicorn.Config(app, **settings)
    server = uvicorn.Server(config)
    url_host = f"[{host}]" if family == socket.AF_INET6 else host
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [sock])
            with anyio.fail_after(startup_timeout):
                while not server.started:
                    if server.should_exit:
                        raise RuntimeError("uvicorn failed to start")
                    await anyio.sleep(0.01)
            try:
                yield f"http://{url_host}:{bound_port}"
            finally:
                # Open listen streams first get their graceful answer (shielded: this also runs
                # when the block is cancelled, as by Ctrl-C in serve_forever).
                closer = getattr(app, "close_subscriptions", None)
                if closer is not None:
                    with anyio.CancelScope(shield=True), anyio.move_on_after(SHUTDOWN_GRACE):
                        await closer()
                server.should_exit = True
                server.force_exit = False
    finally:
        sock.close()


async def serve_forever(
    app: ASGIApp, host: str = "127.0.0.1", port: int = 8000, **options: Any
) -> None:
    """Serve ``app`` until cancelled (Ctrl-C under ``anyio.run``): the one-liner for scripts.

    Loopback by default; binding elsewhere needs the app's ``allowed_hosts`` widened too.
    """
    async with serving(app, host, port, **options) as url:
        logger.info("serving on %s", url)
        await anyio.sleep_forever()
