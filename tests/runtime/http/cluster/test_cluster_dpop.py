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
from httpkit import ACCEPT_BOTH, INITIALIZE, answers, build_server, session_headers
from mcpbind.runtime.auth import DPoPKey
from mcpbind.runtime.auth.server import AccessToken, DPoPVerifier, ResourceServer
from mcpbind.runtime.cluster import RedisReplayCache, RedisState
from mcpbind.runtime.http import StreamableHTTPServer, serving
from rediskit import RedisServer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

RESOURCE = "https://mcp.example/mcp"
KEY = DPoPKey.generate()
TOKEN = "bound-token"
NONCE_SECRET = b"the same 32 bytes on every worker"


class Tokens:
    """One token, bound to ``KEY`` (``cnf.jkt``)."""

    async def verify(self, token: str) -> AccessToken | None:
        if token != TOKEN:
            return None
        claims = {"cnf": {"jkt": KEY.thumbprint}}
        return AccessToken("ada", "app", frozenset(), None, (RESOURCE,), "https://as", claims)


@asynccontextmanager
async def two_workers(
    redis_url: str, prefix: str, shared_cache: bool, nonces: bool = False, stateless: bool = False
) -> AsyncIterator[list[str]]:
    """The URLs of two workers on one Redis; each verifier has the Redis replay cache
    (``shared_cache``) or its own in-process one, and with ``nonces`` requires server nonces
    signed with the secret both share."""
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
                dpop=DPoPVerifier(
                    replay_cache=cache, require_nonce=nonces, nonce_secret=NONCE_SECRET
                ),
                dpop_required=True,
            )
            app = StreamableHTTPServer(
                build_server().serve, shared=state, auth=auth, stateless=stateless
            )
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


async def test_a_request_relayed_to_its_sessions_worker_gets_a_fresh_nonce(
    redis: RedisServer,
) -> None:
    """RFC 9449 8.2 on many workers: the answer to a request that landed on the worker not
    owning its session, and was relayed to the owner, carries a fresh ``DPoP-Nonce`` as a
    request served where it landed does, and that nonce is good on either worker."""
    async with (
        two_workers(redis.url, "dpop-relay", shared_cache=True, nonces=True) as (one, two),
        httpx.AsyncClient(timeout=15) as http,
    ):
        asked = await initialize(http, one, fresh_proof())
        assert (
            asked.status_code == 401
            and 'error="use_dpop_nonce"' in (asked.headers["www-authenticate"])
        )
        nonce = asked.headers["dpop-nonce"]

        def proof() -> str:
            return KEY.proof("POST", RESOURCE, access_token=TOKEN, nonce=nonce)

        opened = await initialize(http, one, proof())
        assert opened.status_code == 200, opened.text
        nonce = opened.headers["dpop-nonce"]
        session = opened.headers["mcp-session-id"]
        auth = {"authorization": f"DPoP {TOKEN}"}
        headers = {**session_headers(session), **auth}
        told = await http.post(
            one,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers={**headers, "dpop": proof()},
        )
        assert told.status_code == 202, told.text
        nonce = told.headers["dpop-nonce"]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        relayed = await http.post(two, json=ping, headers={**headers, "dpop": proof()})
        assert relayed.status_code == 200, relayed.text
        assert answers(relayed) == [{"jsonrpc": "2.0", "id": 2, "result": {}}]
        assert relayed.headers.get_list("dpop-nonce") == [relayed.headers["dpop-nonce"]]
        nonce = relayed.headers["dpop-nonce"]
        for url in (one, two):
            again = await http.post(url, json=ping, headers={**headers, "dpop": proof()})
            assert again.status_code == 200, again.text


async def test_a_request_read_to_find_its_task_and_served_here_gets_a_fresh_nonce(
    redis: RedisServer,
) -> None:
    """Without sessions, a handshake-era POST is read to see whether another worker runs the
    task it names; one that names none is served where it landed, with its fresh nonce too."""
    async with (
        two_workers(redis.url, "dpop-here", True, nonces=True, stateless=True) as (one, _),
        httpx.AsyncClient(timeout=15) as http,
    ):
        asked = await initialize(http, one, fresh_proof())
        assert asked.status_code == 401, asked.text
        proof = KEY.proof("POST", RESOURCE, access_token=TOKEN, nonce=asked.headers["dpop-nonce"])
        opened = await initialize(http, one, proof)
        assert opened.status_code == 200, opened.text
        assert opened.headers.get_list("dpop-nonce") == [opened.headers["dpop-nonce"]]
