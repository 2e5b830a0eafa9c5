"""``RedisEventStore`` on a real ``redis-server``: the retention and caps of the in-memory store.

The same properties ``test_http_event_store`` checks of ``InMemoryEventStore`` (nothing lost over
an outage inside the window, the last events per stream kept beyond it, a response never dropped
for age or count, global caps, release on resume, any id answered), with a fake wall clock; then
two workers keeping their events in Redis, a stream cut on one resumed through the other, and
what the store does while Redis is down.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
import redis.asyncio as aioredis
from httpkit import answers, build_server, raw_initialize, session_headers
from mcpbind.runtime import MemoryBudget
from mcpbind.runtime.cluster import RedisEventStore, RedisState
from mcpbind.runtime.core.budget import READ_FACTOR
from mcpbind.runtime.http import StreamableHTTPServer, serving
from rediskit import RedisServer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


RESPONSE = {"jsonrpc": "2.0", "id": 7, "result": {"content": []}}


def notification(n: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": n}}


def progress_of(events: list[tuple[str, Any]]) -> list[int]:
    return [m["params"]["progress"] for _, m in events if "method" in m]


@pytest.fixture
async def client(redis: RedisServer) -> AsyncIterator[aioredis.Redis]:
    connection = aioredis.Redis.from_url(redis.url)
    yield connection
    await connection.aclose()


async def filled(store: RedisEventStore, stream: str = "s", count: int = 1000) -> list[str]:
    ids = [await store.store_event(stream, None)]
    for n in range(1, count + 1):
        ids.append(await store.store_event(stream, notification(n)))
    ids.append(await store.store_event(stream, RESPONSE))
    return ids


async def test_resumes_after_an_outage_inside_the_window(client: aioredis.Redis) -> None:
    clock = FakeClock()
    store = RedisEventStore(client, "t-ev", clock=clock)
    ids = await filled(store, count=600)
    assert ids[1] == "s/2" and ids[0] == "s/1"
    clock.now += 299.0
    replayed = await store.replay_events_after(ids[300])
    assert replayed is not None and replayed[0] == "s"
    assert progress_of(replayed[1]) == list(range(301, 601))
    assert replayed[1][-1] == (ids[-1], RESPONSE)


async def test_beyond_the_window_only_the_last_events_per_stream_are_kept(
    client: aioredis.Redis,
) -> None:
    clock = FakeClock()
    store = RedisEventStore(client, "t-ev", max_events_per_stream=100, window=300.0, clock=clock)
    ids = await filled(store, count=300)
    clock.now += 301.0
    await store.store_event("s", notification(301))  # storing trims the stream
    assert await store.replay_events_after(ids[100]) is None
    reason = store.unavailable_reason(ids[100])
    assert "no longer available" in reason and ids[100] in reason
    recent = await store.replay_events_after(ids[250])
    assert recent is not None
    assert progress_of(recent[1]) == [*range(251, 301), 301]
    assert recent[1][-2][1] == RESPONSE


async def test_a_response_is_not_dropped_for_age_or_count(client: aioredis.Redis) -> None:
    clock = FakeClock()
    store = RedisEventStore(client, "t-ev", max_events_per_stream=10, window=1.0, clock=clock)
    ids = await filled(store, count=50)
    clock.now += 3600.0
    for n in range(30):
        await store.store_event("other", notification(n))
    await store.store_event("s", notification(51))
    replayed = await store.replay_events_after(ids[-2])
    assert replayed is not None
    assert replayed[1][0] == (ids[-1], RESPONSE)


async def test_global_caps_bound_the_store(client: aioredis.Redis) -> None:
    store = RedisEventStore(client, "t-ev", max_bytes=20_000, clock=FakeClock())
    ids = await filled(store, count=400)
    meta = await client.hgetall(f"{store.base}:meta")
    assert int(meta[b"bytes"]) <= 20_000
    assert int(meta[b"events"]) == await client.xlen(f"{store.base}:s:s") < 402
    assert await store.replay_events_after(ids[10]) is None
    assert "no longer available" in store.unavailable_reason(ids[10])
    counted = RedisEventStore(client, "t-ev", max_events=50, clock=FakeClock())
    await filled(counted, count=200)
    assert await client.xlen(f"{counted.base}:s:s") == 50


async def test_resuming_releases_what_the_client_has(client: aioredis.Redis) -> None:
    store = RedisEventStore(client, "t-ev", clock=FakeClock())
    ids = await filled(store, count=100)
    first = await store.replay_events_after(ids[50])
    assert first is not None and progress_of(first[1]) == list(range(51, 101))
    assert await client.xlen(f"{store.base}:s:s") == 51
    assert await store.replay_events_after(ids[50]) == first  # the replay itself was lost
    assert await store.replay_events_after(ids[10]) is None


@pytest.mark.parametrize(
    "last_event_id",
    ["", "/", "s", "s/", "s/²", "s/" + "9" * 5000, "s/-1", "s/9999", "nope/1", "\x00/\n"],
)
async def test_malformed_or_foreign_ids_are_unknown(
    client: aioredis.Redis, last_event_id: str
) -> None:
    store = RedisEventStore(client, "t-ev", clock=FakeClock())
    await filled(store, count=5)
    assert await store.replay_events_after(last_event_id) is None
    assert store.unavailable_reason(last_event_id) == "unknown Last-Event-ID"


async def test_workers_keeping_events_in_redis_resume_through_another(redis: RedisServer) -> None:
    states = [
        RedisState.from_url(redis.url, worker_id=f"e{n}", prefix="t-evw", redis_events=True)
        for n in range(2)
    ]
    apps = [StreamableHTTPServer(build_server().serve, shared=state) for state in states]
    async with (
        serving(apps[0]) as base_a,
        serving(apps[1]) as base_b,
        httpx.AsyncClient(timeout=15) as http,
    ):
        a, b = f"{base_a}/mcp", f"{base_b}/mcp"
        sid = await raw_initialize(http, a)
        store = apps[0].sessions[sid].store
        assert isinstance(store, RedisEventStore)
        body = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "progress", "arguments": {"steps": 4, "delay": 0.1},
            "_meta": {"progressToken": "t"}}}  # fmt: skip
        ids: list[str] = []
        async with http.stream("POST", a, json=body, headers=session_headers(sid)) as response:
            async for line in response.aiter_lines():
                if line.startswith("id: "):
                    ids.append(line[4:])
                if line.startswith("data: {"):
                    break
        resumed = await http.get(b, headers={**session_headers(sid), "last-event-id": ids[-1]})
        got = answers(resumed)
        assert [m["params"]["progress"] for m in got[:-1]] == [2, 3, 4]
        assert got[-1]["id"] == 5
        stream_id = ids[-1].rpartition("/")[0]
        kept = await states[1].redis.xrange(f"{store.base}:s:{stream_id}")
        assert json.loads(kept[-1][1][b"m"])["id"] == 5  # the response, in Redis
    for state in states:
        await state.aclose()


async def test_redis_down_neither_raises_nor_hangs(redis: RedisServer) -> None:
    own = RedisServer()
    own.start()
    connection = aioredis.Redis.from_url(own.url, socket_connect_timeout=1.0)
    store = RedisEventStore(connection, "t-down", op_timeout=1.0, clock=FakeClock())
    ids = await filled(store, count=3)
    own.stop()
    assert await store.store_event("s", notification(4)) == "s/0"
    assert await store.replay_events_after(ids[1]) is None
    assert "unreachable" in store.unavailable_reason(ids[1])
    own.start()
    assert await store.replay_events_after("s/1") is None  # Redis came back empty: unknown
    assert (await store.store_event("s", notification(5))).startswith("s/")
    await connection.aclose()
    own.close()


# -- the memory budget ------------------------------------------------------------------------


async def test_a_replay_is_held_in_the_memory_budget_before_it_is_read(
    client: aioredis.Redis,
) -> None:
    budget = MemoryBudget(1 << 30)
    store = RedisEventStore(client, "t-ev", clock=FakeClock(), budget=budget)
    ids = await filled(store, count=100)
    replayed = await store.replay_events_after(ids[50])
    assert replayed is not None and progress_of(replayed[1]) == list(range(51, 101))
    kept = int(await client.hget(f"{store.base}:meta", "bytes") or 0)  # after the release
    # The entries, their parse and its result, held while read; given back once parsed.
    assert budget.peak == READ_FACTOR * kept and budget.used == 0
    # No room: refused before anything is read, said to be busy; with room again, served.
    budget.limit = READ_FACTOR * kept - 1
    assert await store.replay_events_after(ids[50]) is None
    reason = store.unavailable_reason(ids[50])
    assert reason.startswith("busy: ") and "memory budget" in reason, reason
    assert budget.used == 0
    budget.limit = READ_FACTOR * kept
    assert await store.replay_events_after(ids[50]) == replayed


class Recording(MemoryBudget):
    """A budget that keeps what was charged beyond the limit's checks (``charge``)."""

    __slots__ = ("charged",)

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.charged: list[int] = []

    def charge(self, size: int) -> None:
        self.charged.append(size)
        super().charge(size)


async def test_a_replay_with_no_room_is_answered_503_and_held_while_sent(
    client: aioredis.Redis,
) -> None:
    budget = Recording(1 << 30)
    app = StreamableHTTPServer(
        build_server().serve,
        event_store_factory=lambda: RedisEventStore(client, "t-evb", budget=budget),
    )
    async with serving(app) as base, httpx.AsyncClient(timeout=15) as http:
        url = f"{base}/mcp"
        sid = await raw_initialize(http, url)
        body = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "progress", "arguments": {"steps": 4, "delay": 0.05},
            "_meta": {"progressToken": "t"}}}  # fmt: skip
        ids: list[str] = []
        async with http.stream("POST", url, json=body, headers=session_headers(sid)) as response:
            async for line in response.aiter_lines():
                if line.startswith("id: "):
                    ids.append(line[4:])
                if line.startswith("data: {"):
                    break
        # The stream cut after its first progress: wait for the rest to be stored in Redis.
        meta = f"{app.sessions[sid].store.base}:meta"  # type: ignore[union-attr]
        with anyio.fail_after(10):
            while int(await client.hget(meta, "events") or 0) < 5:  # 3 progress, answer
                await anyio.sleep(0.05)
        resume = {**session_headers(sid), "last-event-id": ids[-1]}
        assert budget.reserve(budget.limit - budget.used)  # every byte held elsewhere
        busy = await http.get(url, headers=resume)
        assert busy.status_code == 503 and busy.headers["retry-after"] == "1", busy.text
        assert busy.json()["error"]["code"] == -31503, busy.text
        budget.release(budget.limit)
        peak = budget.peak
        budget.peak = 0
        resumed = await http.get(url, headers=resume)
        got = answers(resumed)
        assert [m["params"]["progress"] for m in got[:-1]] == [2, 3, 4] and got[-1]["id"] == 5
        # Held while read back (three times the store's bytes, below the peak with the budget
        # spent), then the events sent held until they were (the GET's body: all of them).
        assert 0 < budget.peak < peak and budget.used == 0
        assert budget.charged == [len(resumed.content)], budget.charged
