"""What a Streamable HTTP endpoint shares with the other workers of a deployment (issue 16).

One worker holds everything in its own memory; many workers behind a load balancer need the
parts below shared, so that any of them can serve any request. ``SharedState`` is what the
endpoint calls; ``InProcessState`` (the default) is exactly the one-process behaviour, and
``mcpbind.runtime.cluster.RedisState`` shares it through Redis:

- the **event store** each handshake-era session records its SSE events in (``None`` here: the
  endpoint's own ``event_store_factory``; resumption on another worker reaches the owner's store
  through the forwarder);
- the **notification bus**: a change notification fanned out on one worker is ``publish``ed and
  fanned out again, locally, on every other worker;
- the **session directory**: which worker owns handshake-era session X (``claim`` when it opens,
  ``release`` when it ends, renewed with a TTL while it lives);
- the **task directory**: which worker runs task X (``RedisState.record_task``, as the tasks'
  ``TaskDirectory``), for the stateless era's tasks, which belong to no session;
- the **forwarder**: ``route`` answers a request for a session or task another worker holds by
  relaying it there and its answer (JSON or SSE, chunk by chunk) back.
"""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from starlette.types import Receive, Scope, Send

from .asgi import CONNECTION_ERROR, error
from .event_store import EventStore

if TYPE_CHECKING:
    from .server import StreamableHTTPServer

__all__ = [
    "InProcessState",
    "SharedState",
    "SharedStateUnavailable",
    "default_worker_id",
    "unavailable",
    "worker_stats",
]

#: The environment variable naming this worker (``default_worker_id``).
WORKER_ID_ENV = "MCPBIND_WORKER_ID"


class SharedStateUnavailable(RuntimeError):
    """The shared store cannot be reached now (the endpoint answers 503 and retries later)."""


class SharedState(Protocol):
    """The parts of the transport's state that many workers share."""

    #: This worker's name in the shared store (unique among the workers).
    worker_id: str
    #: Whether ``route`` may relay requests (``False``: the endpoint never asks it).
    forwarding: bool
    #: One event store per handshake-era session, or ``None`` for the endpoint's own choice.
    event_store_factory: Callable[[], EventStore] | None

    def attach(self, server: StreamableHTTPServer) -> AbstractAsyncContextManager[None]:
        """Run the background work (heartbeat, renewals, the bus, forwarded requests) while
        ``server`` serves; on exit, say this worker and its sessions are gone."""
        ...

    async def claim(self, session_id: str) -> None:
        """Record this worker as the owner of a new session (``SharedStateUnavailable``)."""
        ...

    def release(self, session_id: str) -> None:
        """The session ended here: drop its ownership (soon, without waiting)."""
        ...

    async def route(
        self,
        server: StreamableHTTPServer,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
    ) -> bool:
        """Answer the request if another worker holds its session or task (forwarded there);
        ``False`` leaves it to this worker, which answers it as one process would (a route
        that had to read the body serves it here itself, with ``server.serve_here``)."""
        ...

    async def publish(self, method: str, params: dict[str, Any] | None) -> None:
        """Send a notification fanned out here to every other worker's listeners."""
        ...


class InProcessState:
    """Nothing shared: one process, today's behaviour."""

    forwarding = False
    event_store_factory: Callable[[], EventStore] | None = None

    def __init__(self, worker_id: str | None = None) -> None:
        self.worker_id = worker_id or default_worker_id()

    @asynccontextmanager
    async def _attached(self) -> AsyncGenerator[None, None]:
        yield

    def attach(self, server: StreamableHTTPServer) -> AbstractAsyncContextManager[None]:
        return self._attached()

    async def claim(self, session_id: str) -> None:
        return None

    def release(self, session_id: str) -> None:
        return None

    async def route(
        self,
        server: StreamableHTTPServer,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
    ) -> bool:
        return False

    async def publish(self, method: str, params: dict[str, Any] | None) -> None:
        return None


def default_worker_id() -> str:
    """``MCPBIND_WORKER_ID``, else ``host:pid``."""
    return os.environ.get(WORKER_ID_ENV) or f"{socket.gethostname()}:{os.getpid()}"


def worker_stats(server: StreamableHTTPServer) -> Mapping[str, int]:
    """``server.counters`` with its live sessions and open listen streams, read-only."""
    owner = getattr(server.serve, "__self__", None)
    listeners = getattr(getattr(owner, "subscriptions", None), "listening", 0)
    return MappingProxyType(
        {**server.counters, "sessions": len(server.sessions), "listeners": listeners}
    )


async def unavailable(send: Send, exc: Exception, request_id: Any = None) -> None:
    """503 with a JSON-RPC error: the shared store is down, or recovering; retry shortly."""
    await error(
        send,
        503,
        CONNECTION_ERROR,
        f"Service Unavailable: shared state unreachable ({exc}); retry shortly",
        request_id,
        **{"retry-after": "1"},
    )
