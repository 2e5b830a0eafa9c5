r"""Many workers behind a load balancer, sharing the transport's state .

``StreamableHTTPServer(..., shared=...)`` takes a ``SharedState``: ``InProcessState()`` (the
default, one process) or ``RedisState.from_url(url)`` (``durable_tasks=True``: the app's tasks
in Redis too, ``RedisTaskStore``; ``replay_cache()``: the DPoP proofs accepted by every worker,
``RedisReplayCache``). ``shared_state_from_env()`` picks ``RedisState`` when
``MCPBIND_REDIS_URL`` is set. ``RedisState``, ``RedisEventStore`` and ``RedisTaskStore`` need the
``redis`` extra (``pip install 'mcpbind[redis]'``) and are imported only when asked for, as are
the launcher's ``Supervisor`` (``python -m mcpbind.runtime.cluster serve``, from code) and
``haproxy_config`` (the balancer's configuration for ``WorkerSpec``\ s).

A plug-in layer over Streamable HTTP, which declares ``SharedState`` and never names the
cluster. May import: ``auth`` and below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpbind.runtime._exports import install

if TYPE_CHECKING:
    from mcpbind.runtime.transports.http.shared_state import (
        InProcessState as InProcessState,
        SharedState as SharedState,
        SharedStateUnavailable as SharedStateUnavailable,
        default_worker_id as default_worker_id,
        worker_stats as worker_stats,
    )

    from ._launch import (
        Supervisor as Supervisor,
        WorkerSpec as WorkerSpec,
        haproxy_config as haproxy_config,
        serve_cluster as serve_cluster,
    )
    from ._options import (
        check_serve_options as check_serve_options,
        check_target as check_target,
    )
    from ._redis_events import RedisEventStore as RedisEventStore
    from ._redis_replay import RedisReplayCache as RedisReplayCache
    from ._redis_state import RedisState as RedisState
    from ._redis_tasks import RedisTaskStore as RedisTaskStore
    from ._state import shared_state_from_env as shared_state_from_env

install(globals())
