"""``App.run_http``: uvicorn inside the app's lifespan, stopped by Ctrl-C or SIGTERM alike.

The lifespan is entered before uvicorn starts (so a failing startup is one line and exit
status 1, not uvicorn's shutdown), and exited after it stops, also on SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import signal
import socket
import threading
from collections.abc import Callable, Generator
from contextlib import AbstractAsyncContextManager
from types import FrameType
from typing import Any

import anyio
from mcpbind.runtime.core.lifespan import LifespanStartupError
from mcpbind.runtime.core.run import run

__all__ = ["listen_on", "run_http"]


def run_http(
    running: Callable[[], AbstractAsyncContextManager[Any]],
    make_app: Callable[[], Any],
    host: str,
    port: int,
) -> None:
    """Serve ``make_app()`` on uvicorn within ``running()`` until interrupted (blocking).
    ``OSError`` naming ``host:port`` if it cannot be bound (in use, say), before anything runs."""
    from mcpbind.runtime.transports.http.uvicorn import serve_forever

    sock = listen_on(host, port)

    async def serve() -> None:
        async with running(), anyio.create_task_group() as tg:
            with _cancelled_by_sigterm(tg.cancel_scope):
                await serve_forever(make_app(), host, port, sock=sock)

    try:
        run(serve)
    except LifespanStartupError as exc:
        raise SystemExit(f"mcpbind: {exc}") from None
    finally:
        sock.close()  # already closed when uvicorn served it; not when the lifespan failed


def listen_on(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port``, bound here, outside any task group: a port in use is
    then one ``OSError`` that says so, not an exception group from inside the server."""
    from mcpbind.runtime.transports.http.uvicorn import tcp_listener

    try:
        return tcp_listener(host, port)
    except OverflowError as exc:  # a port beyond 65535 (socket's own message names the range)
        raise OSError(errno.EINVAL, f"cannot listen on {host}:{port}: {exc}") from None
    except OSError as exc:
        why = "address in use" if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc)
        raise OSError(exc.errno, f"cannot listen on {host}:{port}: {why}") from None


@contextlib.contextmanager
def _cancelled_by_sigterm(scope: anyio.CancelScope) -> Generator[None, None, None]:
    """SIGTERM stops serving as Ctrl-C does, so the lifespan's exit part runs instead of the
    process dying on the spot. A plain handler, not the loop's: uvicorn replaces the handlers
    while it serves and calls the previous one after its own shutdown, which (uvloop's signal
    handling) would not reach a receiver of the loop's."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals are the main thread's: SIGTERM keeps its meaning
        return
    loop = asyncio.get_running_loop()

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(scope.cancel)

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
