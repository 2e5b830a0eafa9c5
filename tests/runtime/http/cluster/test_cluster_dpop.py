"""DPoP proofs on many workers: with ``RedisState.replay_cache()`` a proof accepted by one
worker is refused by every other (its ``jti`` is remembered in Redis), and with Redis down a
proof is refused with 503 (fails closed), never taken unchecked, and the workers serve on once
Redis is back.

Two of our servers on uvicorn (127.0.0.1) sharing a real ``redis-server`` (``rediskit``), each
with a ``ResourceServer`` and a ``DPoPVerifier`` of its own, as separate processes would have.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
import httpx
import pytest
from httpkit import ACCEPT_BOTH, INITIALIZE, build_server
from mcpbind.runtime.auth import DPoPKey
from mcpbind.runtime.auth.server import AccessToken, DPoPVerifier, ResourceServer
from mcpbind.runtime.cluster import RedisReplayCache, RedisState
from mcpbind.runtime.http import StreamableHTTPServer, serving
from rediskit import RedisServer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

RESOURCE = "https://mcp.example/mcp"
KEY = DPoPKey.generate()
TOKEN = "bound-token"


class Tokens:
    """One token, bound to ``KEY`` (``cnf.jkt``)."""

    async def verify(self, token: str) -> AccessToken | None:
        if token != TOKEN:
            return None
        claims = {"cnf": {"jkt": KEY.thumbprint}}
        return AccessToken("ada", "app", frozenset(), None, (RESOURCE,), "https://as", claims)


@asynccontextmanager
async def two_workers(redis_url: str, prefix: str, shared_cache: bool) -> AsyncIterator[list[str]]:
    """The URLs of two workers on one Redis; each verifier has the Redis replay cache
    (``shared_cache``) or its own in-process one."""
    async with AsyncExitStack() as stack:
        urls = []
        for n in range(2):
            state = RedisState.from_url(redis_url, worker_id=f"p{n}", prefix=prefix)
            stack.push_async_callback(state.aclose)
            cache = state.replay_cache() if shared_cache else None
            if cache is not None:
                assert isinstance(cache, RedisReplayCache)
            auth = ResourceServer(
                Tokens(),
                resource=RESOURCE,
                authorization_servers=["https://as"],
                dpop=DPoPVerifier(replay_cache=cache),
                dpop_required=True,
            )
            app = StreamableHTTPServer(build_server().serve, shared=state, auth=auth)
            base = await stack.enter_async_context(serving(app))
            urls.append(f"{base}/mcp")
        yield urls


async def initialize(http: httpx.AsyncClient, url: str, proof: str) -> httpx.Response:
    headers = {**ACCEPT_BOTH, "authorization": f"DPoP {TOKEN}", "dpop": proof}
    return await http.post(url, json=INITIALIZE, headers=headers)


def fresh_proof() -> str:
    # Both workers are known by the resource's public URL (behind the balancer).
    return KEY.proof("POST", RESOURCE, access_token=TOKEN)


async def test_a_proof_used_on_one_worker_is_refused_on_another(redis: RedisServer) -> None:
    async with (
        two_workers(redis.url, "dpop-shared", shared_cache=True) as (one, two),
        httpx.AsyncClient(timeout=15) as http,
    ):
        proof = fresh_proof()
        first = await initialize(http, one, proof)
        assert first.status_code == 200, first.text
        again = await initialize(http, two, proof)
        assert again.status_code == 401, again.text
        assert again.headers["www-authenticate"].startswith("DPoP ")
        assert 'error="invalid_dpop_proof"' in again.headers["www-authenticate"]
        assert again.json()["error"]["data"]["error_description"] == (
            "the DPoP proof was used before (jti replayed)"
        )
        # ... and on the first worker too; a fresh proof passes on either.
        assert (await initialize(http, one, proof)).status_code == 401
        assert (await initialize(http, two, fresh_proof())).status_code == 200


async def test_without_the_shared_cache_each_worker_remembers_only_its_own(
    redis: RedisServer,
) -> None:
    """What the shared cache is for: per-process caches let a replay through elsewhere."""
    async with (
        two_workers(redis.url, "dpop-local", shared_cache=False) as (one, two),
        httpx.AsyncClient(timeout=15) as http,
    ):
        proof = fresh_proof()
        assert (await initialize(http, one, proof)).status_code == 200
        assert (await initialize(http, two, proof)).status_code == 200
        assert (await initialize(http, two, proof)).status_code == 401


async def test_with_redis_down_proofs_are_refused_with_503_then_taken_again(
    redis: RedisServer,
) -> None:
    async with (
        two_workers(redis.url, "dpop-down", shared_cache=True) as (one, two),
        httpx.AsyncClient(timeout=15) as http,
    ):
        assert (await initialize(http, one, fresh_proof())).status_code == 200
        redis.stop()
        try:
            for url in (one, two):
                refused = await initialize(http, url, fresh_proof())
                assert refused.status_code == 503, refused.text
                assert refused.headers["retry-after"] == "5"
                message = refused.json()["error"]["message"]
                assert message.startswith("Service Unavailable: the DPoP proof could not be")
                assert "replay cache is unreachable" in message
            # A bad proof is still told what is wrong with it.
            bad = await initialize(http, one, "not-a-proof")
            assert (
                bad.status_code == 401
                and 'error="invalid_dpop_proof"' in (bad.headers["www-authenticate"])
            )
        finally:
            redis.start()
        with anyio.fail_after(30):  # the workers reconnect on their own
            while (answered := await initialize(http, two, fresh_proof())).status_code != 200:
                assert answered.status_code == 503, answered.text
                await anyio.sleep(0.2)
        proof = fresh_proof()
        assert (await initialize(http, one, proof)).status_code == 200
        assert (await initialize(http, two, proof)).status_code == 401
