"""A durable task whose worker died is failed and announced without anyone reading it: every
live worker sweeps the dead workers' unfinished tasks (``RedisTaskStore.sweep``, a bounded
number at a time), and ``notifications/tasks`` reaches the task's listeners on any worker.

Real ``redis-server`` (``rediskit``); the launcher's worker processes behind a real haproxy
(``clusterkit``), one of them SIGKILLed.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from clusterkit import Cluster, running_cluster
from httpkit import answers, modern_headers
from mcpbind.runtime.cluster import RedisState, RedisTaskStore
from mcpbind.runtime.tasks import TaskRecord
from rediskit import RedisServer

pytestmark = [pytest.mark.timeout(120)]

EXTENSION = "io.modelcontextprotocol/tasks"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: {}}},
}
OWNER = ("anyone",)


@pytest.mark.anyio
async def test_a_sweep_fails_and_announces_a_dead_workers_tasks_once(redis: RedisServer) -> None:
    one = RedisState.from_url(redis.url, worker_id="s1", prefix="sweep")
    two = RedisState.from_url(redis.url, worker_id="s2", prefix="sweep")
    three = RedisState.from_url(redis.url, worker_id="s3", prefix="sweep")
    try:
        for state in (one, two, three):  # their heartbeats, as attached workers keep them
            await state.redis.set(state.key("worker", state.worker_id), "1", px=60_000)
        first, second, third = RedisTaskStore(one), RedisTaskStore(two), RedisTaskStore(three)
        heard: list[tuple[str, str, str]] = []

        def hearing(who: str) -> Any:
            async def announce(record: TaskRecord) -> None:
                assert record.error is not None
                heard.append((who, record.task_id, record.error.message))

            return announce

        second.announce, third.announce = hearing("s2"), hearing("s3")
        orphans = [(await first.create(OWNER, None)).task_id for _ in range(5)]
        done = await first.create(OWNER, None)
        assert await first.finish(done, "completed", {"content": []}, None)
        mine = await second.create(OWNER, None)
        # All alive: nothing to do.
        assert await second.sweep() == 0 and heard == []
        await one.redis.delete(one.key("worker", "s1"))
        # Bounded: two tasks looked at per sweep.
        assert await second.sweep(limit=2) == 2
        assert len(heard) == 2
        while await third.sweep(limit=2) or await second.sweep(limit=2):
            pass
        assert sorted(task_id for _, task_id, _ in heard) == sorted(orphans)  # each once
        assert {who for who, _, _ in heard} <= {"s2", "s3"}
        assert all("worker running the task (s1) stopped" in why for _, _, why in heard)
        for task_id in orphans:
            record = await third.get(OWNER, task_id)
            assert record is not None and record.status == "failed"
        assert (await third.get(OWNER, done.task_id)).status == "completed"  # type: ignore[union-attr]
        assert (await third.get(OWNER, mine.task_id)).status == "working"  # type: ignore[union-attr]
        # The dead worker's set is gone, and it left the runners; the live one stays.
        assert not await two.redis.exists(two.key("running", "s1"))
        assert await two.redis.smembers(two.key("runners", "all")) == {b"s2"}
        assert await two.redis.smembers(two.key("running", "s2")) == {mine.task_id.encode()}
        # Ending a task takes it out of its worker's running set.
        assert await third.finish(mine, "cancelled", None, None, "Cancelled by request.")
        assert not await two.redis.exists(two.key("running", "s2"))
    finally:
        for state in (one, two, three):
            await state.aclose()


@pytest.fixture
def durable_cluster(tmp_path: Path, redis: RedisServer) -> Iterator[Cluster]:
    """Three launcher workers (``--durable-tasks``) behind haproxy, on a Redis database of
    their own."""
    url = redis.db_url(4)
    extra = ("--durable-tasks",)
    with running_cluster(tmp_path, url, target="tasks_app:build", extra=extra) as cluster:
        yield cluster


async def next_message(lines: AsyncIterator[str]) -> Any:
    async for line in lines:
        if line.startswith("data: {"):
            return json.loads(line[6:])
    raise AssertionError("the stream ended")


@pytest.mark.anyio
async def test_a_listener_on_another_worker_hears_the_task_of_a_killed_worker_fail(
    durable_cluster: Cluster,
) -> None:
    one, _, three = durable_cluster.workers

    async def post(url: str, method: str, routed: str, **params: Any) -> httpx.Response:
        body = {"jsonrpc": "2.0", "id": 1, "method": method,
                "params": {**params, "_meta": META}}  # fmt: skip
        return await http.post(url, json=body, headers=modern_headers(method, routed))

    async with httpx.AsyncClient(timeout=30) as http:
        made = await post(one.url, "tools/call", "slow", name="slow", arguments={"seconds": 60})
        task = answers(made)[-1]["result"]
        assert task["resultType"] == "task", task
        task_id = task["taskId"]
        listen = {"jsonrpc": "2.0", "id": "l-3", "method": "subscriptions/listen",
                  "params": {"_meta": META, "notifications": {"taskIds": [task_id]}}}  # fmt: skip
        headers = modern_headers("subscriptions/listen")
        async with http.stream("POST", three.url, json=listen, headers=headers) as stream:
            lines = stream.aiter_lines()
            with anyio.fail_after(10):
                ack = await next_message(lines)
            assert ack["params"]["notifications"] == {"taskIds": [task_id]}
            durable_cluster.kill(0)
            # Nobody reads the task: the sweep of a live worker fails it, and says so here.
            with anyio.fail_after(30):
                heard = await next_message(lines)
        # A response here ends the listen: the message, and what the cluster said, tell why.
        assert heard.get("method") == "notifications/tasks", (heard, durable_cluster.stderr())
        params = heard["params"]
        assert (params["taskId"], params["status"]) == (task_id, "failed")
        assert params["error"]["code"] == -32603
        assert f"worker running the task ({one.name}) stopped" in params["error"]["message"]
        assert params["_meta"]["io.modelcontextprotocol/subscriptionId"] == "l-3"
        # What a read finds agrees.
        got = answers(await post(three.url, "tasks/get", task_id, taskId=task_id))[-1]
        assert got["result"]["status"] == "failed"
