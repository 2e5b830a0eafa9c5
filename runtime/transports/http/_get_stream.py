"""GET on a session: its standalone SSE stream, or the replay of one of its streams after
``Last-Event-ID`` (then live again, if that stream is still going)."""

from __future__ import annotations

from mcpbind.runtime.core.budget import MemoryBudget
from starlette.types import Receive, Send

from ._http_session import HttpSession
from ._sse_writer import write_sse
from ._streams import Stream
from .asgi import CONNECTION_ERROR, OverBudget, error, refuse_busy
from .common import LAST_EVENT_ID, PROTOCOL_VERSION, SESSION_ID, encode_event
from .event_store import BUSY_REPLAY

__all__ = ["serve_get"]


async def serve_get(
    session: HttpSession,
    receive: Receive,
    send: Send,
    headers: dict[str, str],
    keepalive: float | None,
) -> None:
    """Answer a GET already checked (method, ``Accept``, version, session) with its stream."""
    session.touch()
    extra = {SESSION_ID: session.id} if session.id else {}
    token = session.token()
    last_event_id = headers.get(LAST_EVENT_ID)
    if last_event_id and session.store is not None:
        async with session.lock:
            replayed = await session.store.replay_events_after(last_event_id.strip())
            if replayed is None:
                # The in-memory store can say why (expired, or never seen); others may not.
                explain = getattr(session.store, "unavailable_reason", None)
                why = explain(last_event_id.strip()) if explain else "unknown Last-Event-ID"
                if why.startswith(BUSY_REPLAY):  # no room to read it back: retry later
                    await refuse_busy(send, OverBudget(why.removeprefix(BUSY_REPLAY)))
                else:
                    await error(send, 400, CONNECTION_ERROR, f"Bad Request: {why}")
                return
            stream_id, events = replayed
            stream = session.streams.get(stream_id)
            if stream is None and stream_id == session.standalone.id:
                stream = session.standalone
            if stream is None:
                stream = Stream(session.path, stream_id=stream_id)
                stream.done = True
            stream.attach(token)
            stream.queue.clear()
            stream.queue.extend(encode_event(m, event_id=e) for e, m in events)
            # The replayed events are held in the store's memory budget while they are sent.
            budget: MemoryBudget | None = getattr(session.store, "budget", None)
            held = sum(map(len, stream.queue))
            if budget is not None:
                budget.charge(held)
        try:
            await write_sse(session, stream, token, receive, send, extra, 0.0, keepalive)
        finally:
            if budget is not None:
                budget.release(held)
        return
    async with session.lock:
        standalone = session.standalone
        if standalone.consumer is not None and not standalone.done:
            await error(
                send,
                409,
                CONNECTION_ERROR,
                "Conflict: a GET stream is already open for this session",
            )
            return
        standalone.attach(token)
        standalone.version = headers.get(PROTOCOL_VERSION)
        priming = await session.priming_event(standalone)
        if priming is not None:
            standalone.queue.appendleft(priming)
    await write_sse(session, standalone, token, receive, send, extra, 0.0, keepalive)
