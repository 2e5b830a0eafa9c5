"""Starting a handler in the task that read its request, and finishing it there if it waits.

A task per incoming request (``_tasks.py``) is the largest single cost of a quick request:
creating it, the event-loop pass that starts it and its done callback were a fifth of a
``tools/call`` over stdio (callgrind: 46k of 235k instructions). Most handlers never wait for
anything, so the session runs a handler's first step right where it read the request, in a
context of its own (as a task would have had). When the handler ends within that step, it has
been answered with no task at all. When it waits, it stays in the task that started it: that
task becomes the handler's (cancelling it cancels the handler) and a new task reads on. So a
handler only ever runs in one task, and whatever it bound to its task (a cancel scope, a lock's
owner, a timeout) stays true, which moving a started coroutine to another task would break.
A request a transport serves in its own task (``Receiving.serve_here``) starts the same way; a
handler that waits there stays in that task too (``handler_tasks.Borrowed``), and the reading
task, which never saw the request, reads on.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any

import anyio

__all__ = ["Relay", "Started", "start"]


class Started:
    """A coroutine that waits after its first step; ``await`` it to drive it to its end in the
    awaiting task (what it waits for, cancellation included, passes through unchanged)."""

    __slots__ = ("_context", "_coro", "_signal")

    def __init__(
        self, coro: Coroutine[Any, Any, Any], context: contextvars.Context, signal: Any
    ) -> None:
        self._coro = coro
        self._context = context
        self._signal = signal

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, run = self._coro, self._context.run
        signal = self._signal
        while True:
            try:
                value = yield signal
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:
                try:
                    signal = run(coro.throw, exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    signal = run(coro.send, value)
                except StopIteration as stop:
                    return stop.value


def start(coro: Coroutine[Any, Any, Any]) -> Started | None:
    """Run the first step of ``coro`` in a copy of the current context: None if it ended
    there (its own exceptions propagate), else the ``Started`` to await for the rest."""
    context = contextvars.copy_context()
    try:
        signal = context.run(coro.send, None)
    except StopIteration:
        return None
    return Started(coro, context, signal)


class Relay:
    """The task that reads a session's input, handed on to a new one whenever a handler started
    in it has to wait (``start()`` again, from that handler's side).

    ``read(token)`` is the session's reading loop: it stops once ``token`` is no longer the
    relay's (its task now belongs to a handler). ``run()`` waits until the reading ends,
    whichever task ends it, and passes on how it ended.
    """

    __slots__ = ("_done", "_read", "_task", "token")

    def __init__(self, read: Callable[[object], Awaitable[None]]) -> None:
        self._read = read
        self.token: object | None = None
        self._task: asyncio.Task[None] | None = None
        self._done: asyncio.Future[None] | None = None

    async def run(self) -> None:
        """Read until the input ends (or the reading fails, or this is cancelled)."""
        done = self._done = asyncio.get_running_loop().create_future()
        self.start()
        try:
            await done
        finally:
            task = self._task
            if task is not None and not task.done():  # we were cancelled: so is the reading
                task.cancel()
                with anyio.CancelScope(shield=True):
                    await asyncio.wait([task])

    def start(self) -> None:
        """Go on reading in a new task (the current one, if any, reads no more)."""
        token = self.token = object()
        self._task = asyncio.get_running_loop().create_task(self._reading(token))

    async def _reading(self, token: object) -> None:
        # While this task reads, how the reading ends goes to ``run()``; once it runs a handler
        # instead, its end is that handler's (the session's ``HandlerTasks`` see it).
        done = self._done
        assert done is not None
        try:
            await self._read(token)
        except Exception as exc:
            if self.token is not token:
                raise
            if not done.done():
                done.set_exception(exc)
            return
        except BaseException:
            if self.token is token and not done.done():
                done.cancel()
            raise
        if self.token is token and not done.done():
            done.set_result(None)
