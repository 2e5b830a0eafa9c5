"""The one fast path seam: asyncio's own primitives where the loop is asyncio, anyio's elsewhere.

anyio lets the runtime run on asyncio and trio alike, but each of its primitives looks the
backend up and wraps the loop's own: ``TaskGroup.start_soon`` measured about 25 us per task
against 3.5 us for ``loop.create_task``, ``anyio.Event`` 9 us against 0.8 us for
``asyncio.Event``, ``anyio.current_time`` 4 us a call. On asyncio (and uvloop) the hot paths
therefore use the loop directly. Which path is taken is decided here, by ``loop_path()``, once
when a session or a transport's connection starts; the object it returns is kept and asked
for the operations below, so no call site looks the backend up again.

Two implementations:

* ``AsyncioPath`` (``native``): bound to the running loop; ``spawn`` is ``loop.create_task``,
  ``future`` ``loop.create_future``, ``call_soon``/``call_later`` the loop's, ``event``
  ``asyncio.Event``, ``clock`` ``time.monotonic`` (what asyncio's loop reads, tied to no loop).
* ``AnyioPath``: anything anyio runs on (trio); ``clock`` and ``event`` are anyio's, and the
  operations only a loop has (``spawn``, ``future``, ``call_soon``, ``call_later``) are absent:
  call sites test ``native`` (a plain attribute, set once) and use a task group or a cancel
  scope instead, as they always did off asyncio.

The modules that still take the native path themselves (they need the loop beyond these
operations) say so in their docstrings: ``_eager.py`` and ``_background.py`` (asyncio tasks
driven by hand), ``transports/_pipes.py`` (``loop.add_reader``), ``app/_threads.py`` (the
loop's executor), ``transports/http/_fastpost.py`` (an ``asyncio.Protocol``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any, Final

import anyio

from .run import on_asyncio

__all__ = ["ANYIO", "AnyioPath", "AsyncioPath", "LoopPath", "loop_path"]

#: An event either path makes: ``set()``, ``is_set()``, ``await wait()``.
Event = anyio.Event | asyncio.Event


class LoopPath:
    """The operations the runtime's hot paths need from the event loop (see the module)."""

    __slots__ = ()

    #: True for ``AsyncioPath``: the loop-only operations are there.
    native: bool = False

    # Static: AsyncioPath's are the C functions themselves.
    @staticmethod
    def clock() -> float:
        """Seconds on a monotonic clock (the one anyio's deadlines read)."""
        raise NotImplementedError

    @staticmethod
    def event() -> Event:
        """A new event."""
        raise NotImplementedError


class AnyioPath(LoopPath):
    """Any backend, through anyio (what runs on trio)."""

    __slots__ = ()

    native = False

    @staticmethod
    def clock() -> float:
        return anyio.current_time()

    @staticmethod
    def event() -> Event:
        return anyio.Event()


class AsyncioPath(LoopPath):
    """asyncio's own primitives, on the loop this was made on."""

    __slots__ = ("call_later", "call_soon", "future", "loop", "spawn")

    native = True
    #: Plain functions, not methods: a call is the C function's, with no frame of ours.
    clock = staticmethod(time.monotonic)
    event = staticmethod(asyncio.Event)

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.spawn: Callable[[Coroutine[Any, Any, Any]], asyncio.Task[Any]] = loop.create_task
        self.future: Callable[[], asyncio.Future[Any]] = loop.create_future
        self.call_soon = loop.call_soon
        self.call_later = loop.call_later


#: The anyio path: one for all, it holds nothing.
ANYIO: Final = AnyioPath()


def loop_path() -> LoopPath:
    """The path for the running event loop: asked once per session or connection, at its
    start, and kept (the one place that looks the backend up). Not cached here: a path holds
    its loop, which a module-level cache would keep alive after it closed."""
    if not on_asyncio():
        return ANYIO
    return AsyncioPath(asyncio.get_running_loop())
