"""Waking one task, a cheap lock, and the session's inbox: the transport's synchronisation.

Each is a leaner stand-in for an anyio primitive on the POST's hot path (measured: see the
class docstrings); which to use, the session's ``LoopPath`` says (``core/loop_path.py``, the
fast path seam): on other backends they fall back to anyio.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import anyio
from mcpbind.runtime.core.loop_path import AsyncioPath, LoopPath
from mcpbind.runtime.core.transport import STREAM_BUFFER, Envelope

__all__ = ["Inbox", "Lock", "Signal"]


class Signal:
    """Wakes the one task waiting on it (a wake with nobody waiting is dropped: waiters check
    their condition first). A bare future on asyncio, where ``anyio.Event`` plus a cancel
    scope per wait measured several microseconds; an ``anyio.Event`` on other backends."""

    __slots__ = ("_native", "_waiter")

    def __init__(self, path: LoopPath) -> None:
        self._native = path if isinstance(path, AsyncioPath) else None
        self._waiter: Any = None

    def set(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if self._native is not None:
                if not waiter.done():
                    waiter.set_result(None)
            else:
                waiter.set()

    async def wait(self, timeout: float = math.inf) -> None:
        """Until ``set()`` or ``timeout`` seconds, whichever comes first."""
        native = self._native
        if native is None:
            event = self._waiter = anyio.Event()
            with anyio.move_on_after(timeout):
                await event.wait()
            return
        future = self._waiter = native.future()
        timer = native.call_later(timeout, _expire, future) if timeout < math.inf else None
        try:
            await future
        finally:
            if self._waiter is future:
                self._waiter = None
            if timer is not None:
                timer.cancel()


def _expire(future: Any) -> None:
    if not future.done():
        future.set_result(None)


class Lock:
    """Mutual exclusion for routing that awaits the event store. Taking it free costs an
    attribute check: ``anyio.Lock`` looks up the current task and checks for cancellation
    each time, a few percent of a POST with an SSE answer. Ownership passes to the next
    waiter in order."""

    __slots__ = ("_held", "_waiters")

    def __init__(self) -> None:
        self._held = False
        self._waiters: deque[anyio.Event] = deque()

    async def __aenter__(self) -> None:
        if not self._held:
            self._held = True
            return
        waiter = anyio.Event()
        self._waiters.append(waiter)
        try:
            await waiter.wait()
        except BaseException:
            if waiter.is_set():
                self._release()  # it was handed to us as we were cancelled: pass it on
            else:
                self._waiters.remove(waiter)
            raise

    async def __aexit__(self, *exc_info: object) -> None:
        self._release()

    def _release(self) -> None:
        if self._waiters:
            self._waiters.popleft().set()
        else:
            self._held = False


class Inbox:
    """The session's ``incoming``: the POST handlers put messages, the session takes them.

    Bounded like the memory stream it replaces: a POST waits while ``STREAM_BUFFER`` messages
    are unread (the session holds back when its handlers are saturated).
    """

    __slots__ = ("_ended", "_items", "_reader_gone", "_signal", "_space", "idle")

    def __init__(self, path: LoopPath) -> None:
        self._items: deque[Envelope] = deque()
        self._signal = Signal(path)
        self._space: anyio.Event | None = None
        self._ended = False
        self._reader_gone = False
        #: Whether the reader waits for input with nothing queued: all it was given before has
        #: been read and handled up to its handler's first wait, so a request handled now, not
        #: queued, is handled in the same order (``HttpSession.serves_here``). An attribute,
        #: not a method: every POST of a session reads it.
        self.idle = False

    # MessageSource, for the session
    def receive_nowait(self) -> Envelope:
        if self._items:
            envelope = self._items.popleft()
            if self._space is not None and len(self._items) < STREAM_BUFFER:
                self._space.set()
                self._space = None
            return envelope
        if self._ended:
            raise anyio.EndOfStream
        raise anyio.WouldBlock

    async def receive(self) -> Envelope:
        while True:
            try:
                return self.receive_nowait()
            except anyio.WouldBlock:
                self.idle = True  # nothing queued, not ended: ``receive_nowait`` says so
                try:
                    await self._signal.wait()
                finally:
                    self.idle = False

    def close(self) -> None:
        self._reader_gone = True
        self._items.clear()
        if self._space is not None:
            self._space.set()

    # for the transport
    def put_nowait(self, envelope: Envelope) -> bool:
        """``put`` when it need not wait (``False``: nothing done, ``put`` it)."""
        if len(self._items) >= STREAM_BUFFER or self._reader_gone or self._ended:
            return False
        self._items.append(envelope)
        self.idle = False
        self._signal.set()
        return True

    async def put(self, envelope: Envelope) -> None:
        while len(self._items) >= STREAM_BUFFER and not (self._ended or self._reader_gone):
            if self._space is None:
                self._space = anyio.Event()
            await self._space.wait()
        if self._reader_gone:
            raise anyio.BrokenResourceError
        if self._ended:
            raise anyio.ClosedResourceError
        self._items.append(envelope)
        self.idle = False
        self._signal.set()

    def end(self) -> None:
        """No more input: the session reads what is queued, then sees the end."""
        self._ended = True
        self.idle = False
        self._signal.set()
        if self._space is not None:
            self._space.set()
