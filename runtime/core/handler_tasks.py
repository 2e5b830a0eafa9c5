"""The tasks that handle incoming requests: started cheaply, cancelled one by one, awaited at the end.

Every incoming request runs in its own task, so a slow handler never holds up the others. On
asyncio (and uvloop) those tasks are plain ``asyncio`` tasks: anyio's ``TaskGroup.start_soon``
measured about 25 us per task against 3.5 us for ``loop.create_task``, a tenth of a whole
``tools/call`` round trip. Each still has its own context and is still awaited before the
session ends, which is what the task group gave; anyio primitives work inside them as in any
task. On other backends (trio) the task group is used, each task under its own cancel scope.
Which one, the session's ``LoopPath`` says (``loop_path.py``, the one fast path seam), once.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Coroutine, Hashable
from typing import Any

import anyio
from anyio.abc import TaskGroup

from .logsafe import printable
from .loop_path import AsyncioPath, LoopPath

__all__ = ["Borrowed", "HandlerTasks"]

logger = logging.getLogger("mcpbind.runtime")

Job = Callable[..., Coroutine[Any, Any, None]]


class HandlerTasks:
    """Running handler tasks by key (the request id).

    ``on_done(key)`` is called as each task ends, however it ends. A task that ends by cancellation
    (``cancel(key)`` or ``cancel_all()``) ends quietly: its job sends no response. On a native
    ``path`` the tasks are plain asyncio tasks; else they run in the task group ``tg`` (which
    only they need).
    """

    __slots__ = ("_closing", "_on_done", "_running", "_spawn", "_tg")

    def __init__(
        self, tg: TaskGroup | None, on_done: Callable[[Hashable], None], path: LoopPath
    ) -> None:
        self._tg = tg
        self._on_done = on_done
        self._running: dict[Hashable, asyncio.Task[None] | anyio.CancelScope | Borrowed] = {}
        self._closing = False
        self._spawn: Callable[[Coroutine[Any, Any, None]], asyncio.Task[None]] | None = (
            path.spawn if isinstance(path, AsyncioPath) else None
        )

    def __contains__(self, key: Hashable) -> bool:
        return key in self._running

    def __len__(self) -> int:
        return len(self._running)

    def start(self, key: Hashable, job: Job, *args: Any) -> None:
        """Run ``job(*args)`` in a new task known by ``key`` (which must not be running)."""
        spawn = self._spawn
        if spawn is not None:
            task = spawn(job(*args))
            self._running[key] = task
            task.add_done_callback(functools.partial(self._finished, key))
        else:
            assert self._tg is not None, "a task group is needed off asyncio"
            scope = anyio.CancelScope()
            self._running[key] = scope
            self._tg.start_soon(self._run_scoped, key, scope, job, args)

    def adopt_current(self, key: Hashable) -> None:
        """Know the running task as the task of ``key`` from now on (a handler started in the
        session's reading task that has to wait: see ``_eager.py``)."""
        task: asyncio.Task[None] | None = asyncio.current_task()
        assert task is not None
        self._running[key] = task
        task.add_done_callback(functools.partial(self._finished, key))

    def borrow(self, key: Hashable, started: Awaitable[None]) -> Borrowed:
        """Know the running task, which the session does not own, as the task of ``key`` until
        ``started`` (the handler's rest, ``_eager.Started``) ends: see ``Borrowed``."""
        task: asyncio.Task[None] | None = asyncio.current_task()
        assert task is not None
        borrowed = self._running[key] = Borrowed(self, key, task, started)
        return borrowed

    def _give_back(self, key: Hashable, borrowed: Borrowed) -> None:
        del self._running[key]
        if borrowed.cancelled:
            self._note_cancelled(key)
        self._on_done(key)

    def cancel(self, key: Hashable) -> bool:
        """Cancel the task of ``key``; False if there is none."""
        running = self._running.get(key)
        if running is None:
            return False
        running.cancel()
        return True

    def cancel_all(self) -> None:
        """Cancel every task (the session is ending)."""
        self._closing = True
        for running in list(self._running.values()):
            running.cancel()

    async def wait_all(self) -> None:
        """Wait until every native task (and borrowed handler) has ended (the task group awaits the others)."""
        tasks: list[asyncio.Future[Any]] = [
            task if isinstance(task, asyncio.Task) else task.done
            for task in self._running.values()
            if not isinstance(task, anyio.CancelScope)
        ]
        if tasks:
            with anyio.CancelScope(shield=True):
                await asyncio.wait(tasks)

    def _finished(self, key: Hashable, task: asyncio.Task[None]) -> None:
        # A done callback, not a ``finally``: a task cancelled before its first step never
        # runs its coroutine's code at all.
        del self._running[key]
        if task.cancelled():
            self._note_cancelled(key)
        elif (exc := task.exception()) is not None:
            # A job handles its own errors; one that escapes is a bug worth a log line.
            logger.error("the handler task of request %r failed", printable(key), exc_info=exc)
        self._on_done(key)

    async def _run_scoped(
        self, key: Hashable, scope: anyio.CancelScope, job: Job, args: tuple[Any, ...]
    ) -> None:
        try:
            with scope:
                await job(*args)
        finally:
            del self._running[key]
            if scope.cancelled_caught:
                self._note_cancelled(key)
            self._on_done(key)

    def _note_cancelled(self, key: Hashable) -> None:
        if not self._closing:
            logger.debug("request %r was cancelled; no response sent", printable(key))


class Borrowed:
    """A handler started in a task the session does not own (a stateless HTTP POST's, which
    serves its own request: ``Receiving.serve_here``) that has to wait: it stays in that task
    (whatever it bound to its task holds), which ``run()`` drives to the handler's end.

    Cancelling it (a cancellation, the session's end) cancels that task, as cancelling a
    handler's own task would; ``run()`` then takes the cancellation back once the handler has
    unwound, so the task goes on with its own work (the POST's answer). A cancellation of the
    task from elsewhere goes on up.
    """

    __slots__ = ("_key", "_started", "_task", "_tasks", "cancelled", "done")

    def __init__(
        self,
        tasks: HandlerTasks,
        key: Hashable,
        task: asyncio.Task[None],
        started: Awaitable[None],
    ) -> None:
        self._tasks = tasks
        self._key = key
        self._task = task
        self._started = started
        self.cancelled = False
        #: Set once the handler has ended (``HandlerTasks.wait_all`` waits for it).
        self.done: asyncio.Future[None] = task.get_loop().create_future()

    def cancel(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            self._task.cancel()

    async def run(self) -> None:
        """Drive the handler to its end in this task (the one that started it)."""
        try:
            await self._started
        except asyncio.CancelledError:
            # Ours if the session cancelled it and nobody else asked the task to stop.
            if not self.cancelled or self._task.cancelling() > 1:
                raise
        finally:
            if self.cancelled:
                self._task.uncancel()
            self._tasks._give_back(self._key, self)  # pyright: ignore[reportPrivateUsage]
            self.done.set_result(None)
