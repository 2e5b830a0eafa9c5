"""Writing one SSE response from a stream: events as they come, keep-alive comments, and
noticing the client leave (which detaches the response, or, in the stateless era, cancels)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final

import anyio
from starlette.types import Message, Receive, Send

from ._http_session import HttpSession
from ._streams import Stream
from .asgi import sse_headers

__all__ = ["WATCH_AFTER", "write_sse"]

#: How long a POST's SSE response runs before a task starts watching for the client leaving:
#: most answer sooner, and that watcher (a task per response) was a fifth of the POST's cost.
WATCH_AFTER: Final = 0.25


async def write_sse(
    session: HttpSession,
    stream: Stream,
    token: int,
    receive: Receive,
    send: Send,
    extra: dict[str, str],
    watch_after: float,
    keepalive: float | None,
    on_gone: Callable[[], None] | None = None,
) -> None:
    """Write one SSE response from ``stream`` until it ends or another response takes it.

    A client disconnect detaches the response; the request goes on unless ``on_gone`` says
    otherwise (the stateless era, where closing the stream cancels the request). A task
    watches for it once the response has run ``watch_after`` seconds; a comment line goes
    out after ``keepalive`` seconds of silence, which keeps proxies from timing out.
    """
    session.busy += 1
    try:
        await send({"type": "http.response.start", "status": 200, "headers": sse_headers(extra)})
        if await _relay(session, stream, token, send, keepalive, session.clock() + watch_after):
            return
        async with anyio.create_task_group() as tg:
            tg.start_soon(_watch_disconnect, receive, stream, token, on_gone)
            await _relay(session, stream, token, send, keepalive, math.inf)
            tg.cancel_scope.cancel()
    except OSError:
        # The client went away mid-write (the server reports a broken pipe this way).
        if on_gone is not None and not stream.done:
            on_gone()
    finally:
        stream.detach(token)
        session.busy -= 1
        session.touch()


async def _relay(
    session: HttpSession,
    stream: Stream,
    token: int,
    send: Send,
    keepalive: float | None,
    until: float,
) -> bool:
    """Write queued events until the response ends (True) or ``until`` passes (False)."""
    quiet = keepalive if keepalive is not None else math.inf
    clock = session.clock
    quiet_since = clock()
    while True:
        consumer = stream.consumer
        ended = stream.done or consumer != token
        # Detached (``close_sse_stream``): flush what was queued; replaced: the queue is
        # the new response's.
        chunk = stream.take() if consumer == token or consumer is None else b""
        if ended:
            await send({"type": "http.response.body", "body": chunk})
            return True
        now = clock()
        if chunk:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            quiet_since = now
            continue
        if now - quiet_since >= quiet:
            await send(
                {"type": "http.response.body", "body": b": keepalive\n\n", "more_body": True}
            )
            quiet_since = now
        if now >= until:
            return False
        await stream.signal.wait(min(until, quiet_since + quiet) - now)


async def _watch_disconnect(
    receive: Receive, stream: Stream, token: int, on_gone: Callable[[], None] | None
) -> None:
    """Detach the response ``token`` when its client goes away (and tell ``on_gone``)."""
    message: Message = await receive()
    while message["type"] != "http.disconnect":
        message = await receive()
    if on_gone is not None and not stream.done and stream.consumer == token:
        on_gone()
    stream.detach(token)
