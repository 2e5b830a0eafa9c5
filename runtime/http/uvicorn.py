"""Running an ASGI app on uvicorn inside an anyio task: for tests, benchmarks and small servers.

``serving`` binds first (port 0 picks a free port) and yields the base URL only once uvicorn
is accepting, so callers never race the server's start-up or guess a port.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import uvicorn
from starlette.types import ASGIApp

__all__ = ["serve_forever", "serving"]

logger = logging.getLogger("mcpbind.runtime.http")


@asynccontextmanager
async def serving(
    app: ASGIApp,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    startup_timeout: float = 10.0,
    **options: Any,
) -> AsyncIterator[str]:
    """Serve ``app`` on uvicorn (lifespan on) while the block runs; yields ``http://host:port``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on accepted sockets whose proto
    # says TCP, and without it every small POST waits out a 40 ms delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound_port = sock.getsockname()[1]
    # No access log: at level "warning" it is never shown, but uvicorn still formats every
    # line's arguments (a few percent of a small request).
    settings: dict[str, Any] = {
        "lifespan": "on",
        "log_level": "warning",
        "access_log": False,
        "timeout_graceful_shutdown": 2,
    }
    config = uvicorn.Config(app, **{**settings, **options})
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
