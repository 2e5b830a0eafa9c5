"""Telling clients a registry changed (``App._changed``), from wherever the change was made.

``add_tool``, ``disable`` and the others are plain functions: a handler calls them, a task of
the application's, a sync tool in a worker thread, or the module that builds the app before
anything serves. The notification is sent by a task started here, so each of those returns at
once:

* in a worker thread (a sync tool), through its event loop (``anyio.from_thread``);
* on asyncio, in a task of the loop's own (``loop_path``'s native ``spawn``), tied to no
  session, so a cluster worker with nobody connected still tells the others (``relay``);
* elsewhere (trio), in the task group of a running session of the server's (anyio has no task
  tied to nothing): the notification is for its sessions anyway, and with none running there
  is nobody in this process to tell.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

import sniffio
from mcpbind.runtime.core.errors import ConnectionClosedError
from mcpbind.runtime.core.loop_path import AsyncioPath, loop_path
from mcpbind.runtime.endpoints.server import Server

__all__ = ["ChangeTeller"]

logger = logging.getLogger("mcpbind.runtime")

Notify = Callable[[], Coroutine[Any, Any, int]]


class ChangeTeller:
    """Starts ``notify()`` (a ``Server.notify_*_changed``) for a change, on any backend.

    On asyncio, changes made in one step (a skill's files, tools added in a loop) are told
    once: a ``notify`` started for an earlier change and not yet running is not started again,
    and when it runs, the list it tells of already holds them all.
    """

    def __init__(self, server: Server[Any]) -> None:
        self.server = server
        #: The asyncio tasks still telling (the loop keeps only weak references to tasks).
        self._pending: set[Any] = set()
        #: The notifications started on asyncio and not yet running.
        self._waiting: set[Notify] = set()

    def tell(self, notify: Notify) -> None:
        server = self.server
        if not server.sessions and server.relay is None:
            return  # nobody to tell here, nor (``relay``: a cluster) on other workers
        # Start-up: anyio.from_thread (its own dataclasses and locks) only once there is
        # someone to tell, not in every app.
        import anyio.from_thread

        try:
            # A worker thread of the loop's (a sync tool): told through the loop, waited for.
            anyio.from_thread.run(_guarded, notify)
            return
        except anyio.RunFinishedError:
            return  # the worker's loop has ended: nobody is served any more
        except anyio.NoEventLoopError:
            pass  # not a worker thread: the loop's own thread, or a thread of nobody's
        try:
            sniffio.current_async_library()
        except sniffio.AsyncLibraryNotFoundError:
            return  # no loop in this thread: nobody is served from here
        path = loop_path()
        if isinstance(path, AsyncioPath):
            if notify in self._waiting:
                return  # told by the task already started, which has not run yet
            self._waiting.add(notify)
            task = path.spawn(self._once(notify))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
            # Also when it never ran (cancelled with its loop), so no later change is lost.
            task.add_done_callback(lambda _: self._waiting.discard(notify))
            return
        for session in list(server.sessions):
            try:
                session.start_soon(_guarded, notify)
            except ConnectionClosedError:
                continue  # ending: another one hosts it
            return

    async def _once(self, notify: Notify) -> None:
        # From here on, a change is one this run may not see: it starts another.
        self._waiting.discard(notify)
        await _guarded(notify)


async def _guarded(notify: Notify) -> None:
    """``notify()``, a failure logged: it must not end the session (or task) hosting it."""
    try:
        await notify()
    except Exception:
        logger.exception("telling clients that a list changed failed")
