r"""Many workers behind a load balancer, sharing the transport's state (issue 16).

``StreamableHTTPServer(..., shared=...)`` takes a ``SharedState``: ``InProcessState()`` (the
default, one process) or ``RedisState.from_url(url)``. ``shared_state_from_env()`` picks
``RedisState`` when ``MCPBIND_REDIS_URL`` is set. ``RedisState`` and ``RedisEventStore`` need the
``redis`` extra (``pip install 'mcpbind[redis]'``) and are imported only when asked for, as are
the launcher's ``Supervisor`` (``python -m mcpbind.runtime.http.cluster serve``, from code) and
``haproxy_config`` (the balancer's configuration for ``WorkerSpec``\ s).
"""

from __future__ import annotations

import importlib
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
    from ._launch import Supervisor, WorkerSpec, haproxy_config
    from ._redis_events import RedisEventStore
    from ._redis_state import RedisState

__all__ = [
    "InProcessState",
    "RedisEventStore",
    "RedisState",
    "SharedState",
    "SharedStateUnavailable",
    "Supervisor",
    "WorkerSpec",
    "default_worker_id",
    "haproxy_config",
    "shared_state_from_env",
    "worker_stats",
]

#: What is imported on first use: the Redis client, and the launcher (subprocesses, httpx).
_LAZY: dict[str, str] = {
    "RedisState": "._redis_state",
    "RedisEventStore": "._redis_events",
    "Supervisor": "._launch",
    "WorkerSpec": "._launch",
    "haproxy_config": "._launch",
}


def __getattr__(name: str) -> Any:
    source = _LAZY.get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(source, __name__), name)
