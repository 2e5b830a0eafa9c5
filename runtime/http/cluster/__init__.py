"""Many workers behind a load balancer, sharing the transport's state (issue 16).

``StreamableHTTPServer(..., shared=...)`` takes a ``SharedState``: ``InProcessState()`` (the
default, one process) or ``RedisState.from_url(url)``. ``shared_state_from_env()`` picks
``RedisState`` when ``MCPBIND_REDIS_URL`` is set. ``RedisState`` and ``RedisEventStore`` need the
``redis`` extra (``pip install 'mcpbind[redis]'``) and are imported only when asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._state import (
    InProcessState,
    SharedState,
    SharedStateUnavailable,
    default_worker_id,
    shared_state_from_env,
    worker_stats,
)

if TYPE_CHECKING:
    from ._redis_events import RedisEventStore
    from ._redis_state import RedisState

__all__ = [
    "InProcessState",
    "RedisEventStore",
    "RedisState",
    "SharedState",
    "SharedStateUnavailable",
    "default_worker_id",
    "shared_state_from_env",
    "worker_stats",
]


def __getattr__(name: str) -> Any:
    if name == "RedisState":
        from ._redis_state import RedisState

        return RedisState
    if name == "RedisEventStore":
        from ._redis_events import RedisEventStore

        return RedisEventStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
