"""A session served on asyncio without a task group: its host task, and its background jobs in
a task group opened only when the first job starts (the native side of ``loop_path.py``).

A session's task group (open, cancel, close) was about a tenth of a stateless HTTP request,
which never starts a background job: its answer is ready before its session ends. So on
asyncio the session serves in its caller's task with no task group, and the jobs that outlive
the request starting them (deadline watcher, keep-alive, notification handlers, a task's
handler) run in a task group opened in a task of its own on first use. They keep everything
a task group gives: cancellation that respects shields when the session ends, a failing job
ending the session (``on_error``), the context of whoever started each job. ``Host`` is the
task serving the session: ``interrupt()`` cancels it as cancelling a task group's scope would.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import anyio
from anyio.abc import TaskGroup

__all__ = ["Background", "Host"]

Job = Callable[..., Coroutine[Any, Any, Any]]


class Background:
    """Jobs run in a task group of their own, opened with the first; ``stop()`` ends them."""

    __slots__ = ("_jobs", "_on_error", "_stopping", "_task", "_tg", "error")

    def __init__(self, on_error: Callable[[BaseException], None]) -> None:
        self._on_error = on_error
        self._jobs: list[tuple[Job, tuple[Any, ...], contextvars.Context]] = []
        self._tg: TaskGroup | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        #: How the task group ended, if a job failed (an ``ExceptionGroup``, as anyio raises).
        self.error: BaseException | None = None

    def start_soon(self, job: Job, *args: Any) -> None:
        """Run ``job(*args)`` in the group, in a copy of the current context."""
        if self._stopping:
            raise anyio.ClosedResourceError("the session's background jobs were stopped")
        if self._tg is not None:
            self._tg.start_soon(job, *args)
            return
        # Started once the group is open, each in the context it was asked for in.
        self._jobs.append((job, args, contextvars.copy_context()))
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._host())

    async def _host(self) -> None:
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                for job, args, context in self._jobs:
                    context.run(tg.start_soon, job, *args)
                self._jobs.clear()
                if self._stopping:
                    tg.cancel_scope.cancel()
                await anyio.sleep_forever()
        except asyncio.CancelledError:
            raise  # stopped before its group opened
        except BaseException as exc:  # a job failed: the group's ExceptionGroup
            self.error = exc
            self._on_error(exc)
        finally:
            self._tg = None

    async def stop(self) -> None:
        """Cancel every job (shields respected) and wait until all have ended."""
        self._stopping = True
        task = self._task
        if task is None:
            return
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
        elif not task.done():
            task.cancel()  # its group is not open yet: no job has started
        with anyio.CancelScope(shield=True):
            await asyncio.wait([task])


class Host:
    """The task that serves a session (``serve``), and the session's ``background`` jobs."""

    __slots__ = ("_interrupted", "_task", "background")

    def __init__(self, on_error: Callable[[BaseException], None]) -> None:
        self._task: asyncio.Task[Any] | None = None
        self._interrupted = False
        self.background = Background(on_error)

    async def serve(self, serving: Awaitable[None]) -> None:
        """Await ``serving`` in this task; then stop the background jobs, and raise how their
        group failed, if it did."""
        host = self._task = asyncio.current_task()
        assert host is not None
        background = self.background
        try:
            await serving
        except asyncio.CancelledError:
            # ``interrupt()`` cancels this task as a cancel scope would: only its own
            # cancellation ends here, quietly; any other passes on.
            if not self._interrupted or host.uncancel() > 0:
                raise
        finally:
            self._task = None
            await background.stop()
        if background.error is not None:
            raise background.error

    def interrupt(self) -> None:
        """Cancel ``serve`` where it waits (once; not from its own task, which is ending)."""
        host = self._task
        if host is None or self._interrupted:
            return
        if host is not asyncio.current_task():
            self._interrupted = True
            host.cancel()
