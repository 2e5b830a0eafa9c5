"""The pool of clean sessions stateless-era requests reuse while ``run()`` hosts the server.

Building a session and its task for every stateless-era POST was half the cost of one. A
pooled session serves one request at a time and goes back to the pool only once nothing of
that request is left in it (``_exchange.pooled`` decides).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anyio.abc import TaskGroup

from ._http_session import HttpSession

if TYPE_CHECKING:
    from .server import StreamableHTTPServer

__all__ = ["POOL_SIZE", "SessionPool"]

#: Idle sessions kept for stateless-era requests.
POOL_SIZE = 64


class SessionPool:
    """Idle sessions, and the task group their runs live in (``run()``'s, while it is open)."""

    def __init__(self, tg: TaskGroup, size: int = POOL_SIZE) -> None:
        self._tg = tg
        self.size = size
        #: The sessions waiting for a request, the last returned first.
        self.idle: list[HttpSession] = []
        self.closed = False

    def take(self, owner: StreamableHTTPServer, assume: str | None) -> HttpSession:
        """An idle session, or a new one started in the pool's task group."""
        if self.idle:
            return self.idle.pop()
        session = HttpSession(owner, None, assume=assume, resumable=False)
        self._tg.start_soon(session.run)
        return session

    def give_back(self, session: HttpSession) -> bool:
        """Keep ``session`` for a later request; ``False`` (the caller ends it) when the pool
        is full or closed."""
        if self.closed or len(self.idle) >= self.size:
            return False
        self.idle.append(session)
        return True

    def close(self, reason: str) -> None:
        """End the idle sessions; a session in use is ended by its request, not given back."""
        self.closed = True
        idle, self.idle = self.idle, []
        for session in idle:
            session.terminate(reason)
