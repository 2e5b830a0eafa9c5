"""The body a worker reads to relay a request to the worker owning its session is held in that
worker's memory budget while it is forwarded: one that does not fit is refused at once (503,
``Retry-After``, -31503 busy) instead of being read whole, and the budget is back to nothing
once a relayed request was answered.

Two of our servers on uvicorn share a real ``redis-server``; the session lives on w0 (ample
budget) and the requests go to w1 (a 1 MiB budget).
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from clusterkit import open_session
from mcpbind.runtime import MemoryBudget
from mcpbind.runtime.core.admission import SERVER_UNAVAILABLE
from rediskit import RedisServer, workers

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

KIB = 1024


def padded_ping(size: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"_meta": {"pad": "x" * size}}}


async def test_a_relayed_body_is_held_in_the_budget_of_the_worker_reading_it(
    redis: RedisServer,
) -> None:
    small = MemoryBudget(1024 * KIB)
    async with (
        workers(redis.url, 1, "relay-budget", memory_budget=MemoryBudget()) as (owner,),
        workers(redis.url, 1, "relay-budget", first=1, memory_budget=small) as (relay,),
        httpx.AsyncClient(timeout=30) as http,
    ):
        headers = await open_session(http, owner.url)
        before = relay.app.stats["forwarded_out"]

        # 600 KiB read and parsed would hold 1.2 MiB: refused while being read, not relayed.
        refused = await http.post(relay.url, json=padded_ping(600 * KIB), headers=headers)
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"] == "1"
        assert refused.json()["error"]["code"] == SERVER_UNAVAILABLE
        assert refused.json()["error"]["data"] == {"reason": "busy"}
        assert relay.app.stats["forwarded_out"] == before
        assert small.used == 0

        # 200 KiB fits: relayed to the owner, answered, and given back.
        relayed = await http.post(relay.url, json=padded_ping(200 * KIB), headers=headers)
        assert relayed.status_code == 200, relayed.text
        assert relay.app.stats["forwarded_out"] == before + 1
        with anyio.fail_after(5):  # given back when the relay ends, just after the answer
            while small.used:
                await anyio.sleep(0.01)
        assert small.peak >= 400 * KIB  # it was held (bytes and parse) while relayed
