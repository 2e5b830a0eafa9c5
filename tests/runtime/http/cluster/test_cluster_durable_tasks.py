"""Durable tasks: with ``RedisState(durable_tasks=True)`` a task's record lives in Redis
(``RedisTaskStore``), so any worker reads, lists, waits for and cancels it, a task whose worker
was SIGKILLed is ``failed`` with a message that says so (not gone), identities see only their
own tasks on every worker, and tasks survive Redis restarting empty.

Real ``redis-server`` (``rediskit``); our servers on uvicorn in this process, or the launcher's
worker processes behind a real haproxy (``clusterkit``) where a worker is killed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from clusterkit import Cluster, running_cluster
from httpkit import ACCEPT_BOTH, INITIALIZE, answers, modern_headers
from mcpbind.runtime import McpError
from mcpbind.runtime.auth.server import AccessToken, ResourceServer
from mcpbind.runtime.cluster import RedisTaskStore
from mcpbind.runtime.tasks import TaskLimitError
from rediskit import RedisServer, workers
from tasks_app import build

pytestmark = [pytest.mark.timeout(120)]
anyio_test = pytest.mark.anyio
HERE = Path(__file__).resolve().parent

EXTENSION = "io.modelcontextprotocol/tasks"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "elicitation": {"form": {}},
        "extensions": {EXTENSION: {}},
    },
}
HANDSHAKE = {**ACCEPT_BOTH, "mcp-protocol-version": "2025-11-25"}
DURABLE = {"durable_tasks": True}
RESOURCE = "https://mcp.example/mcp"
NOT_FOUND = "Failed to retrieve task: Task not found"


def servers() -> Any:
    return build().server


class Tokens:
    """A verifier of fixed tokens: ``alice-1`` and ``alice-2`` are one identity (two sessions,
    two tokens), ``bob`` another."""

    async def verify(self, token: str) -> AccessToken | None:
        subject = {"alice-1": "alice", "alice-2": "alice", "bob": "bob"}.get(token)
        if subject is None:
            return None
        return AccessToken(subject, "app", frozenset(), None, (RESOURCE,), "https://as.example")


def protected() -> ResourceServer:
    return ResourceServer(Tokens(), resource=RESOURCE, authorization_servers=["https://as.example"])


async def rpc(http: httpx.AsyncClient, url: str, headers: dict[str, str], method: str,
              request_id: int = 1, **params: Any) -> dict[str, Any]:  # fmt: skip
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    answered = await http.post(url, json=body, headers=headers)
    assert answered.status_code in (200, 400), answered.text
    message: dict[str, Any] = answers(answered)[-1]
    return message


async def open_session(http: httpx.AsyncClient, url: str, token: str) -> dict[str, str]:
    """A 2025-11-25 session at ``url`` under ``token``: the headers of its requests."""
    auth = {"authorization": f"Bearer {token}"}
    opened = await http.post(url, json=INITIALIZE, headers={**ACCEPT_BOTH, **auth})
    assert opened.status_code == 200, opened.text
    headers = {**HANDSHAKE, **auth, "mcp-session-id": opened.headers["mcp-session-id"]}
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=done, headers=headers)).status_code == 202
    return headers


@anyio_test
async def test_a_stateless_servers_tasks_are_listed_and_read_on_every_worker(
    redis: RedisServer,
) -> None:
    async with (
        workers(redis.url, 3, "d-v1", build=servers, state=DURABLE, stateless=True) as ws,
        httpx.AsyncClient(timeout=15) as http,
    ):
        a, b, c = ws
        assert isinstance(a.server.tasks.store, RedisTaskStore)

        async def call(url: str, seconds: float) -> str:
            made = await rpc(http, url, HANDSHAKE, "tools/call", name="slow",
                             arguments={"seconds": seconds}, task={"ttl": 60_000})  # fmt: skip
            task_id: str = made["result"]["task"]["taskId"]
            return task_id

        quick, long = await call(a.url, 0.3), await call(b.url, 60)
        # Listed on C, which runs neither: one list across the workers, oldest first.
        listed = (await rpc(http, c.url, HANDSHAKE, "tasks/list"))["result"]
        assert [t["taskId"] for t in listed["tasks"]] == [quick, long]
        assert {t["status"] for t in listed["tasks"]} <= {"working", "completed"}
        result = (await rpc(http, c.url, HANDSHAKE, "tasks/result", taskId=quick))["result"]
        assert result["structuredContent"] == {"result": "slept 0.3"}
        cancelled = await rpc(http, c.url, HANDSHAKE, "tasks/cancel", taskId=long)
        assert cancelled["result"]["status"] == "cancelled"
        with anyio.fail_after(5):
            while b.server.tasks._scopes:  # the handler on B was stopped
                await anyio.sleep(0.05)
        again = await rpc(http, a.url, HANDSHAKE, "tasks/get", taskId=long)
        assert again["result"]["status"] == "cancelled"
        assert len(c.server.tasks.store) == 0  # C created nothing: it only read Redis
        unknown = await rpc(http, c.url, HANDSHAKE, "tasks/get", taskId="nope")
        assert unknown["error"] == {"code": -32602, "message": NOT_FOUND,
                                    "data": {"taskId": "nope"}}  # fmt: skip


@anyio_test
async def test_an_identitys_tasks_are_found_from_its_other_sessions_on_other_workers(
    redis: RedisServer,
) -> None:
    async with (
        workers(redis.url, 3, "d-auth", build=servers, state=DURABLE, auth=protected()) as ws,
        httpx.AsyncClient(timeout=15) as http,
    ):
        a, b, c = ws
        first = await open_session(http, a.url, "alice-1")
        second = await open_session(http, c.url, "alice-2")
        other = await open_session(http, b.url, "bob")

        async def call(seconds: float) -> str:
            made = await rpc(http, a.url, first, "tools/call", name="slow",
                             arguments={"seconds": seconds}, task={})  # fmt: skip
            task_id: str = made["result"]["task"]["taskId"]
            return task_id

        quick, long = await call(0.3), await call(60)
        # Alice's second session, on C, sees both tasks of her first one, on A.
        got = await rpc(http, c.url, second, "tasks/get", taskId=long)
        assert got["result"]["status"] == "working"
        listed = (await rpc(http, c.url, second, "tasks/list"))["result"]["tasks"]
        assert [t["taskId"] for t in listed] == [quick, long]
        result = (await rpc(http, c.url, second, "tasks/result", taskId=quick))["result"]
        assert result["structuredContent"] == {"result": "slept 0.3"}
        # Bob, on B, finds neither: the spec's "not found", and his list is empty.
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            refused = await rpc(http, b.url, other, method, taskId=long)
            assert refused["error"]["code"] == -32602, method
            assert refused["error"]["message"] == NOT_FOUND
        assert (await rpc(http, b.url, other, "tasks/list"))["result"]["tasks"] == []
        # Cancelled from C: A hears of it and stops the handler; every session says so.
        cancelled = await rpc(http, c.url, second, "tasks/cancel", taskId=long)
        assert cancelled["result"]["status"] == "cancelled"
        with anyio.fail_after(5):
            while a.server.tasks._scopes:
                await anyio.sleep(0.05)
        mine = await rpc(http, a.url, first, "tasks/get", taskId=long)
        assert mine["result"]["status"] == "cancelled"
        twice = await rpc(http, c.url, second, "tasks/cancel", taskId=long)
        assert twice["error"]["code"] == -32602 and "terminal" in twice["error"]["message"]
        assert (await rpc(http, b.url, other, "tasks/get", taskId=quick))["error"]["code"] == (
            -32602
        )


async def post(http: httpx.AsyncClient, url: str, method: str, routed: str,
               **params: Any) -> httpx.Response:  # fmt: skip
    """A 2026-07-28 request with the tasks extension, ``routed`` its ``Mcp-Name``."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    return await http.post(url, json=body, headers=modern_headers(method, routed))


async def make_task(http: httpx.AsyncClient, url: str, tool: str, **arguments: Any) -> str:
    made = await post(http, url, "tools/call", tool, name=tool, arguments=arguments)
    assert made.status_code == 200, made.text
    task = answers(made)[-1]["result"]
    assert task["resultType"] == "task", task
    task_id: str = task["taskId"]
    return task_id


async def get_task(http: httpx.AsyncClient, url: str, task_id: str) -> httpx.Response:
    return await post(http, url, "tasks/get", task_id, taskId=task_id)


@anyio_test
async def test_tasks_outlive_redis_restarting_empty(redis: RedisServer) -> None:
    async with (
        workers(redis.url, 2, "d-restart", build=servers, state=DURABLE) as (a, b),
        httpx.AsyncClient(timeout=15) as http,
    ):
        done = await make_task(http, a.url, "slow", seconds=0)
        running = await make_task(http, a.url, "slow", seconds=4)
        redis.restart()
        # Until A has written its tasks back: a retry (503 or -32603), never "not found".
        with anyio.fail_after(30):
            while True:
                got = await get_task(http, b.url, done)
                if got.status_code == 200 and "result" in answers(got)[-1]:
                    break
                assert got.status_code in (200, 503), got.text
                error = answers(got)[-1]["error"]
                assert error["code"] != -32602, error
                await anyio.sleep(0.2)
        assert answers(got)[-1]["result"]["status"] == "completed"
        with anyio.fail_after(30):
            while (got := await get_task(http, b.url, running)).status_code != 200 or (
                answers(got)[-1]["result"]["status"] != "completed"
            ):
                await anyio.sleep(0.2)
        assert answers(got)[-1]["result"]["result"]["structuredContent"] == {"result": "slept 4.0"}


@pytest.fixture
def durable_cluster(tmp_path: Path, redis: RedisServer) -> Iterator[Cluster]:
    """Three launcher workers (``--durable-tasks``) behind haproxy, on a Redis database of
    their own."""
    url = redis.db_url(3)
    extra = ("--durable-tasks",)
    with running_cluster(tmp_path, url, target="tasks_app:build", extra=extra) as cluster:
        yield cluster


@pytest.mark.parametrize("command", ["mcpbind", "module"])
def test_durable_tasks_need_redis(command: str, tmp_path: Path) -> None:
    runner = ["mcpbind.codegen"] if command == "mcpbind" else ["mcpbind.runtime.cluster"]
    done = subprocess.run(
        [sys.executable, "-m", *runner, "serve", "tasks_app:build", "--durable-tasks",
         "--app-dir", str(HERE), "--port", "0"],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode != 0
    assert "--durable-tasks needs --redis URL" in done.stderr
    assert "Traceback" not in done.stderr and "worker" not in done.stdout


@anyio_test
async def test_a_task_whose_worker_was_killed_fails_with_a_clear_error(
    durable_cluster: Cluster,
) -> None:
    one, _, three = durable_cluster.workers
    async with httpx.AsyncClient(timeout=30) as http:
        task_id = await make_task(http, one.url, "slow", seconds=60)
        waiting = await make_task(http, one.url, "ask")
        seen = await get_task(http, three.url, task_id)
        assert answers(seen)[-1]["result"]["status"] == "working"
        durable_cluster.kill(0)
        # Once its heartbeat lapses (5 s), any worker (here through haproxy) fails the task.
        for url in (three.url, durable_cluster.url):
            with anyio.fail_after(30):
                while (got := await get_task(http, url, task_id)).status_code != 200 or (
                    answers(got)[-1]["result"]["status"] == "working"
                ):
                    await anyio.sleep(0.25)
            task = answers(got)[-1]["result"]
            assert task["status"] == "failed", task
            assert task["error"]["code"] == -32603
            assert f"worker running the task ({one.name}) stopped" in task["error"]["message"]
            assert task["statusMessage"] == task["error"]["message"]
        lost = answers(await get_task(http, durable_cluster.url, waiting))[-1]["result"]
        assert lost["status"] == "failed" and "inputRequests" not in lost
        # Cancelling a failed task is acknowledged, and changes nothing.
        cancel = await post(http, three.url, "tasks/cancel", task_id, taskId=task_id)
        assert answers(cancel)[-1]["result"] == {"resultType": "complete"}
        after = answers(await get_task(http, three.url, task_id))[-1]["result"]
        assert after["status"] == "failed"
        # The cluster serves on: a new task through the balancer completes.
        fresh = await make_task(http, durable_cluster.url, "slow", seconds=0)
        with anyio.fail_after(10):
            while (got := await get_task(http, durable_cluster.url, fresh)).status_code != 200 or (
                answers(got)[-1]["result"]["status"] != "completed"
            ):
                await anyio.sleep(0.1)


@anyio_test
async def test_input_requests_are_held_in_redis_and_answered_through_any_worker(
    redis: RedisServer,
) -> None:
    async with (
        workers(redis.url, 3, "d-input", build=servers, state=DURABLE) as (a, _, c),
        httpx.AsyncClient(timeout=15) as http,
    ):
        task_id = await make_task(http, a.url, "ask")
        with anyio.fail_after(10):
            while (task := answers(await get_task(http, c.url, task_id))[-1]["result"])[
                "status"
            ] != "input_required":
                await anyio.sleep(0.05)
        [(key, request)] = task["inputRequests"].items()
        assert request["params"]["message"] == "Your name?"
        # What any worker reads of Redis holds the same request.
        held = await c.server.tasks.store.get(("anyone",), task_id)
        assert held is not None and held.input_requests == {key: request}
        answer = {"action": "accept", "content": {"name": "Ada"}}
        updated = await post(
            http, c.url, "tasks/update", task_id, taskId=task_id, inputResponses={key: answer}
        )
        assert answers(updated)[-1]["result"] == {"resultType": "complete"}
        with anyio.fail_after(10):
            while (task := answers(await get_task(http, c.url, task_id))[-1]["result"])[
                "status"
            ] != "completed":
                await anyio.sleep(0.05)
        assert task["result"]["structuredContent"] == {"result": "hello Ada"}
        stored = await c.server.tasks.store.get(("anyone",), task_id)
        assert stored is not None and stored.input_requests is None


@anyio_test
async def test_the_store_keeps_the_specs_paths_across_workers(redis: RedisServer) -> None:
    """Two stores on one Redis, as two workers: a cancel by one is final for the other, whose
    handler is told to stop; owners, pages, cursors and ttl as ``InMemoryTaskStore``."""
    from mcpbind.runtime.cluster import RedisState

    one = RedisState.from_url(redis.url, worker_id="s1", prefix="d-store")
    two = RedisState.from_url(redis.url, worker_id="s2", prefix="d-store")
    try:
        for state in (one, two):  # their heartbeats, as attached workers keep them
            await state.redis.set(state.key("worker", state.worker_id), "1", px=60_000)
        first, second = RedisTaskStore(one, max_tasks=5), RedisTaskStore(two)
        stopped: list[str] = []
        first.bind(stopped.append)
        owner, other = ("auth", "alice", "app"), ("auth", "bob", "app")
        record = await first.create(owner, 60_000)
        assert record.ttl == 60_000 and record.status == "working"
        seen = await second.get(owner, record.task_id)
        assert seen is not None and seen.to_json() == record.to_json()
        assert await second.get(other, record.task_id) is None
        assert await first.update(record, "input_required", "waiting")
        # Worker two cancels; worker one learns of it when its handler next moves the task.
        seen = await second.get(owner, record.task_id)
        assert seen is not None and seen.status == "input_required"
        assert await second.finish(seen, "cancelled", None, None, "Cancelled by request.")
        assert not await first.update(record, "working")
        assert record.status == "cancelled" and record.done.is_set()
        assert stopped == [record.task_id]
        assert not await first.finish(record, "completed", {"content": []}, None)
        # Pages follow creation order across both stores; a cursor of nothing is refused.
        made = [record.task_id]
        for store in (first, second, first):
            made.append((await store.create(owner, None)).task_id)
        await second.create(other, None)
        page, cursor = await second.list(owner, None, 3)
        assert [r.task_id for r in page] == made[:3] and cursor == made[2]
        page, cursor = await first.list(owner, cursor, 3)
        assert [r.task_id for r in page] == made[3:] and cursor is None
        with pytest.raises(McpError) as caught:
            await first.list(owner, "no-such-cursor", 3)
        assert caught.value.code == -32602
        # Expired: gone from reads and lists, in Redis too.
        brief = await first.create(owner, 50)
        await anyio.sleep(0.2)
        assert await second.get(owner, brief.task_id) is None
        assert brief.task_id not in [r.task_id for r in (await second.list(owner, None, 50))[0]]
        # This worker's bound (the expired one made room): beyond it, -32603.
        for _ in range(2):
            await first.create(owner, None)
        assert len(first) == 5
        with pytest.raises(TaskLimitError):
            await first.create(owner, None)
        # Worker one's heartbeat gone: its unfinished tasks are failed when read, and say why.
        await one.redis.delete(one.key("worker", "s1"))
        orphan = await second.get(owner, made[1])
        assert orphan is not None and orphan.status == "failed" and orphan.error is not None
        assert orphan.error.code == -32603 and "(s1) stopped" in orphan.error.message
        assert (await second.get(owner, made[2])).status == "working"  # two's own: alive
    finally:
        await one.aclose()
        await two.aclose()


async def next_message(lines: AsyncIterator[str]) -> Any:
    async for line in lines:
        if line.startswith("data: {"):
            return json.loads(line[6:])
    raise AssertionError("the stream ended")


@anyio_test
async def test_status_notifications_reach_the_identitys_listener_on_another_worker(
    redis: RedisServer,
) -> None:
    """Alice's task runs on A; her ``subscriptions/listen`` on C gets its status changes (relayed
    between the workers); Bob, naming her task's id, is acknowledged nothing and finds nothing."""
    async with (
        workers(redis.url, 3, "d-notify", build=servers, state=DURABLE, auth=protected()) as ws,
        httpx.AsyncClient(timeout=15) as http,
    ):
        a, b, c = ws
        alice, bob = {"authorization": "Bearer alice-1"}, {"authorization": "Bearer bob"}

        async def call(url: str, who: dict[str, str], method: str, routed: str, /,
                       **params: Any) -> httpx.Response:  # fmt: skip
            body = {"jsonrpc": "2.0", "id": 1, "method": method,
                    "params": {**params, "_meta": META}}  # fmt: skip
            headers = {**modern_headers(method, routed), **who}
            return await http.post(url, json=body, headers=headers)

        made = await call(a.url, alice, "tools/call", "ask", name="ask", arguments={})
        task_id = answers(made)[-1]["result"]["taskId"]

        def listen(request_id: str) -> dict[str, Any]:
            params = {"_meta": META, "notifications": {"taskIds": [task_id, "not-a-task"]}}
            return {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen",
                    "params": params}  # fmt: skip

        headers = modern_headers("subscriptions/listen")
        async with (
            http.stream("POST", c.url, json=listen("l-alice"), headers={**headers, **alice}) as
            hers,
            http.stream("POST", b.url, json=listen("l-bob"), headers={**headers, **bob}) as his,
        ):  # fmt: skip
            her_lines, his_lines = hers.aiter_lines(), his.aiter_lines()
            with anyio.fail_after(10):
                her_ack, his_ack = await next_message(her_lines), await next_message(his_lines)
            assert her_ack["params"]["notifications"] == {"taskIds": [task_id]}
            assert his_ack["params"]["notifications"] == {}
            refused = await call(b.url, bob, "tasks/get", task_id, taskId=task_id)
            assert answers(refused)[-1]["error"]["code"] == -32602
            # The task waits for input (perhaps announced before Alice's stream opened): read
            # it, answer it through B, and Alice's stream on C hears the rest.
            with anyio.fail_after(10):
                while (
                    state := answers(
                        await call(c.url, alice, "tasks/get", task_id, taskId=task_id)
                    )[-1]["result"]
                )["status"] != "input_required":
                    await anyio.sleep(0.05)
            [key] = state["inputRequests"]
            answer = {"action": "accept", "content": {"name": "Ada"}}
            updated = await call(b.url, alice, "tasks/update", task_id, taskId=task_id,
                                 inputResponses={key: answer})  # fmt: skip
            assert answers(updated)[-1]["result"] == {"resultType": "complete"}
            heard: list[dict[str, Any]] = []
            with anyio.fail_after(10):
                while not heard or heard[-1]["params"]["status"] != "completed":
                    heard.append(await next_message(her_lines))
        assert {m["method"] for m in heard} == {"notifications/tasks"}
        assert all(m["params"]["taskId"] == task_id for m in heard)
        assert all(m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "l-alice"
                   for m in heard)  # fmt: skip
        assert heard[-1]["params"]["result"]["structuredContent"] == {"result": "hello Ada"}
        assert "working" in [m["params"]["status"] for m in heard]


@anyio_test
async def test_a_task_that_ends_while_redis_is_unreachable_is_written_back(
    redis: RedisServer,
) -> None:
    """Redis stops answering (``CLIENT PAUSE``) while a task runs: it ends on its worker all
    the same, and its outcome reaches Redis once Redis answers again."""
    import redis as redis_py

    async with (
        workers(redis.url, 2, "d-pause", build=servers, state=DURABLE) as (a, b),
        httpx.AsyncClient(timeout=15) as http,
    ):
        task_id = await make_task(http, a.url, "slow", seconds=0.5)
        with redis_py.Redis.from_url(redis.url) as raw:
            raw.client_pause(4000, all=True)
        held = a.server.tasks.store._local[task_id]
        with anyio.fail_after(10):  # it ends meanwhile; its write times out (2 s)
            while held.status != "completed":
                await anyio.sleep(0.05)
        assert task_id in a.server.tasks.store._unsaved
        with anyio.fail_after(30):
            while True:
                got = await get_task(http, b.url, task_id)
                answer = answers(got)[-1] if got.status_code == 200 else {}
                if answer.get("result", {}).get("status") == "completed":
                    break
                await anyio.sleep(0.2)
        result = answers(got)[-1]["result"]["result"]
        assert result["structuredContent"] == {"result": "slept 0.5"}
        assert not a.server.tasks.store._unsaved
