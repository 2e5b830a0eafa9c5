"""``App.run_http``: uvicorn inside the app's lifespan, stopped by Ctrl-C or SIGTERM alike.

The lifespan is entered before uvicorn starts (so a failing startup is one line and exit
status 1, not uvicorn's shutdown), and exited after it stops, also on SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Generator
from contextlib import AbstractAsyncContextManager
from types import FrameType
from typing import Any

import anyio
from mcpbind.runtime.core.lifespan import LifespanStartupError
from mcpbind.runtime.core.run import run

__all__ = ["run_http"]


def run_http(
    running: Callable[[], AbstractAsyncContextManager[Any]],
    make_app: Callable[[], Any],
    host: str,
    port: int,
) -> None:
    """Serve ``make_app()`` on uvicorn within ``running()`` until interrupted (blocking)."""
    from mcpbind.runtime.transports.http.uvicorn import serve_forever

    async def serve() -> None:
        async with running(), anyio.create_task_group() as tg:
            with _cancelled_by_sigterm(tg.cancel_scope):
                await serve_forever(make_app(), host, port)

    try:
        run(serve)
    except LifespanStartupError as exc:
        raise SystemExit(f"mcpbind: {exc}") from None


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
