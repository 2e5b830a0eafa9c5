"""Receiving from an anyio memory object stream without its leading checkpoint.

Used by ``transport.take`` for memory streams (the in-memory pair, the HTTP transports).
"""

# This module's job is anyio's private layout: pyright's private-use check is off here alone.
# pyright: reportPrivateUsage=false

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

__all__ = ["receive_directly"]

# ``MemoryObjectReceiveStream.receive`` also passes a checkpoint before it queues itself as a
# waiter: one more event-loop pass per message on an idle stream, which measured 20-35% of a
# sequential stdio round trip. ``_wait_for_item`` queues itself directly, through the stream's
# internals as anyio 4 lays them out (checked here, once); with any other layout ``take``
# simply uses ``receive``.
if TYPE_CHECKING:
    from anyio.streams.memory import _MemoryObjectItemReceiver, _MemoryObjectStreamState
else:
    try:
        from anyio.streams.memory import _MemoryObjectItemReceiver, _MemoryObjectStreamState
    except ImportError:  # pragma: no cover - another anyio layout
        _MemoryObjectStreamState = None  # no fields: the check below says no
_WAIT_DIRECTLY = "waiting_receivers" in getattr(
    _MemoryObjectStreamState, "__dataclass_fields__", {}
) and {"_state", "_closed", "_waiters"} <= set(
    getattr(MemoryObjectReceiveStream, "__dataclass_fields__", {})
)


async def _wait_for_item(stream: MemoryObjectReceiveStream[Any]) -> Any:
    """``receive`` minus its leading checkpoint; same registration, same wake-up."""
    waiters = stream._waiters
    if waiters is None:
        waiters = stream._waiters = set()
    event = anyio.Event()
    receiver = _MemoryObjectItemReceiver[Any]()
    waiters.add(event)
    stream._state.waiting_receivers[event] = receiver
    try:
        await event.wait()
    finally:
        stream._state.waiting_receivers.pop(event, None)
        waiters.discard(event)
    try:
        return receiver.item
    except AttributeError:
        if stream._closed:
            raise anyio.ClosedResourceError from None
        raise anyio.EndOfStream from None


async def receive_directly(stream: MemoryObjectReceiveStream[Any]) -> Any:
    """``stream.receive()``, without the checkpoint where anyio's layout allows it."""
    if _WAIT_DIRECTLY:
        return await _wait_for_item(stream)
    return await stream.receive()
