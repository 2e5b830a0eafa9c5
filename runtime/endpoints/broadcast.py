"""Sending one notification to many sessions without letting a slow one hold up the rest.

A peer that stops reading fills its connection's buffer; awaiting it would stall the sender and
every recipient after it. So each message is first offered without waiting (nearly always
enough: no task, no yield), and only the recipients that are full get a task each, all at once,
under a per-recipient ``timeout``; one still full after it is skipped for that message, counted
and logged. The call returns once every recipient got the message, was skipped, or was gone.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

import anyio
from mcpbind.runtime.core.errors import ConnectionClosedError
from mcpbind.runtime.core.session import Target
from mcpbind.runtime.core.transport import Envelope

__all__ = ["Delivery", "deliver"]

logger = logging.getLogger("mcpbind.runtime")


@dataclass
class Delivery:
    """What became of one message (or, summed with ``add``, of many): how many recipients got
    it, were skipped because they stayed full past the timeout, or were already gone."""

    sent: int = 0
    skipped: int = 0
    closed: int = 0

    def add(self, other: Delivery) -> None:
        self.sent += other.sent
        self.skipped += other.skipped
        self.closed += other.closed


async def deliver(targets: Iterable[Target], timeout: float, what: str = "") -> Delivery:
    """Send every target's message concurrently, each given at most ``timeout`` seconds."""
    outcome = Delivery()
    full: list[Target] = []
    for target in targets:
        session, message, related_id = target
        if session.closed:
            outcome.closed += 1
            continue
        try:
            # What ``Session.send_raw`` tries first too; done here, a full recipient says so
            # instead of making the loop wait for it.
            session.connection.outgoing.send_nowait(Envelope(message, related_id=related_id))
        except anyio.WouldBlock:
            full.append(target)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            outcome.closed += 1
        else:
            outcome.sent += 1
    if full:
        async with anyio.create_task_group() as tg:
            for target in full:
                tg.start_soon(_send_within, target, timeout, outcome)
        if outcome.skipped:
            logger.warning(
                "%s: %d recipient(s) still full after %g s were skipped",
                what or "notification",
                outcome.skipped,
                timeout,
            )
    return outcome


async def _send_within(target: Target, timeout: float, outcome: Delivery) -> None:
    session, message, related_id = target
    with anyio.move_on_after(timeout):
        try:
            await session.send_raw(message, related_id)
        except ConnectionClosedError:
            outcome.closed += 1
        else:
            outcome.sent += 1
        return
    outcome.skipped += 1
