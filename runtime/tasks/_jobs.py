"""Where a task's handler runs when no session can hold it.

A task outlives the request that created it, but a per-request session (every request of the
stateless era; handshake-era requests on ``StreamableHTTPServer(stateless=True)``) ends with
its POST and would cancel it. On asyncio (the session's ``loop_path``, the fast path seam)
such a handler runs in a task of its own, kept here until it ends; on other backends it stays
in the session's task group (and ends with it).
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from mcpbind.runtime.core.context import RequestContext
from mcpbind.runtime.core.loop_path import AsyncioPath

if TYPE_CHECKING:
    import asyncio  # annotations only: the tasks come from the fast path seam

    from mcpbind.runtime.core.session import Session

__all__ = ["Jobs", "per_request"]

_NO_SESSION_ID: Any = object()


def per_request(context: RequestContext) -> bool:
    """Whether the request came on a session of its own (an HTTP POST without a session id)."""
    return getattr(context.transport_context, "session_id", _NO_SESSION_ID) is None


class Jobs:
    """Detached handler jobs, by strong reference until they end."""

    def __init__(self) -> None:
        self._running: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        return len(self._running)

    def spawn(self, job: Coroutine[Any, Any, None], session: Session) -> asyncio.Task[None] | None:
        """Run ``job`` detached (asyncio: its task, which ``cancel()`` stops), else in
        ``session``'s task group (None)."""
        path = session.loop_path
        if not isinstance(path, AsyncioPath):
            session.start_soon(lambda: job)
            return None
        task: asyncio.Task[None] = path.spawn(job)
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return task
