"""A DPoP replay cache that every worker shares (``auth.server.ReplayCache`` on Redis).

Each worker's ``DPoPVerifier`` remembers the proofs it accepted; behind a balancer a proof
replayed to another worker would find that worker's memory empty. Here a proof is remembered
once for all of them: ``SET {p}:dpop:{digest} 1 NX PX lifetime``, which only the first of
any number of workers racing with the same proof succeeds at, and which Redis forgets when
the proof's ``iat`` window is over. The key is a digest of the key thumbprint and ``jti``, so
its length does not depend on what a client sent. Every call is bounded (``RedisState.call``);
one that fails raises, and the verifier refuses the proof (fails closed).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import redis.asyncio as aioredis

__all__ = ["RedisReplayCache", "ReplayState"]

T = TypeVar("T")


class ReplayState(Protocol):
    """What the cache uses of ``RedisState`` (named here: the state imports the cache)."""

    redis: aioredis.Redis

    def key(self, kind: str, name: str) -> str: ...

    async def call(self, op: Callable[[], Awaitable[T]], timeout: float | None = None) -> T: ...


class RedisReplayCache:
    """The proofs accepted by all the workers on ``state``'s Redis (``RedisState.replay_cache()``
    makes one): give it to each worker's ``DPoPVerifier(replay_cache=...)``."""

    def __init__(self, state: ReplayState) -> None:
        self.state = state

    async def seen(self, key: str, lifetime: float) -> bool:
        name = self.state.key("dpop", hashlib.sha256(key.encode()).hexdigest()[:40])
        redis = self.state.redis
        ms = max(1, int(lifetime * 1000))
        stored: Any = await self.state.call(lambda: redis.set(name, b"1", nx=True, px=ms))
        return not stored  # None: it was there already
