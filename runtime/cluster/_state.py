"""Choosing the shared state from the environment: Redis when ``MCPBIND_REDIS_URL`` is set."""

from __future__ import annotations

import os

from mcpbind.runtime.transports.http.shared_state import (
    WORKER_ID_ENV,
    InProcessState,
    SharedState,
    default_worker_id,
)

__all__ = [
    "DURABLE_TASKS_ENV",
    "REDIS_URL_ENV",
    "WORKER_ID_ENV",
    "default_worker_id",
    "shared_state_from_env",
]

#: The environment variables ``shared_state_from_env`` reads.
REDIS_URL_ENV = "MCPBIND_REDIS_URL"
DURABLE_TASKS_ENV = "MCPBIND_DURABLE_TASKS"


def shared_state_from_env() -> SharedState:
    """``RedisState`` on ``MCPBIND_REDIS_URL`` when it is set (its tasks in Redis too when
    ``MCPBIND_DURABLE_TASKS`` is ``1``), else ``InProcessState()``."""
    url = os.environ.get(REDIS_URL_ENV)
    if not url:
        return InProcessState()
    from ._redis_state import RedisState

    durable = os.environ.get(DURABLE_TASKS_ENV, "") == "1"
    return RedisState.from_url(url, worker_id=default_worker_id(), durable_tasks=durable)
