"""The end of a session's input: what is queued, running or answered, within a bound each."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from .admission import Admission, Incoming, unavailable
from .handler_tasks import HandlerTasks

__all__ = ["drain"]


async def drain(
    admission: Admission,
    handlers: HandlerTasks,
    reply: Callable[[Incoming, dict[str, Any]], Awaitable[None]],
    wait_room: Callable[[], Awaitable[None]],
    grace: float,
) -> None:
    """The input ended: answer what is queued, give running handlers a short grace, then
    answer those still running (cancelled right after; never answered twice). Each step is
    bounded by ``grace`` seconds, so a peer that stopped reading cannot hold the session.

    ``reply`` answers an admitted request once; ``wait_room`` waits until a handler ends.
    """
    # Each step opens its time bound only when it has something to wait for: a session per
    # request (stateless HTTP) drains with nothing left, and a cancel scope is not free.
    queued = admission.queued()
    if queued:
        with anyio.move_on_after(grace):
            for entry in queued:
                admission.withdraw(entry)
                await reply(
                    entry,
                    unavailable(entry.request_id, "closing", "the input ended before it started"),
                )
    if handlers:
        with anyio.move_on_after(grace):
            while handlers:
                await wait_room()
    running = admission.running()
    if running:
        with anyio.move_on_after(grace):
            for entry in running:
                await reply(
                    entry,
                    unavailable(entry.request_id, "closing", "the input ended before it finished"),
                )
