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
"""

from __future__ import annotations

import contextvars
from collections.abc import Coroutine, Generator
from typing import Any

__all__ = ["Started", "start"]


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
