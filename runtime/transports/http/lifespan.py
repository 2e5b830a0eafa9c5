"""The ASGI lifespan protocol around an app's ``run()``, and the served ``Server``'s lifespan.

An HTTP app hosts its sessions in ``run()``; the ASGI lifespan (uvicorn, hypercorn...) enters
it at startup and leaves it at shutdown. ``run()`` also enters the lifespan of the ``Server``
whose ``serve`` it runs (``Server.running()``, found on ``serve.__self__`` as
``close_subscriptions`` is, since this layer may not import the endpoints), so a server's
lifespan runs once per HTTP app (or once for all of them: it is shared).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from starlette.types import Receive, Send

__all__ = ["asgi_lifespan", "owner_running"]


def owner_running(serve: Callable[..., Any] | None) -> AbstractAsyncContextManager[Any]:
    """The lifespan of the server ``serve`` belongs to (its ``running()``), or nothing (also
    for None: an app that serves no ``Server``)."""
    running = getattr(getattr(serve, "__self__", None), "running", None)
    if running is None:
        return contextlib.nullcontext()
    manager: AbstractAsyncContextManager[Any] = running()
    return manager


async def asgi_lifespan(
    run: Callable[[], AbstractAsyncContextManager[Any]], receive: Receive, send: Send
) -> None:
    """Answer the ASGI lifespan protocol around ``run()``: a failure while entering it is
    ``lifespan.startup.failed`` with its one-line message (the server then exits, uvicorn
    with status 3), one while leaving it ``lifespan.shutdown.failed``. Leaving is bounded by
    the server's lifespan itself (``shutdown_timeout``, ``core/lifespan.py``): the shutdown
    answer comes even when its exit part hangs, which uvicorn would wait for forever."""
    message = await receive()
    if message["type"] != "lifespan.startup":
        return
    started = False
    try:
        async with run():
            started = True
            await send({"type": "lifespan.startup.complete"})
            while (await receive())["type"] != "lifespan.shutdown":
                pass
    except Exception as exc:
        kind = "shutdown" if started else "startup"
        said = str(exc) if isinstance(exc, RuntimeError) else f"{type(exc).__name__}: {exc}"
        await send({"type": f"lifespan.{kind}.failed", "message": " ".join(said.split())})
        return
    await send({"type": "lifespan.shutdown.complete"})
