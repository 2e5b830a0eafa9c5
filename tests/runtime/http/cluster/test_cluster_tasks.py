"""Tasks on any worker: a task made on one worker is polled, given input, fetched and cancelled
through another, which forwards each ``tasks/*`` request to the worker running the task.

Two of our servers (``tasks_app``) on uvicorn share a real ``redis-server``; each request goes
to the worker the test names. The 2026-07-28 extension's requests name their task in the
``Mcp-Name`` routing header; a ``stateless=True`` server's 2025-11-25 ``tasks/*`` only in the
body. A task whose worker was killed is answered as any task that does not exist (-32602).
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from httpkit import ACCEPT_BOTH, answers, modern_headers
from rediskit import RedisServer, WorkerProcess, workers
from tasks_app import build

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

EXTENSION = "io.modelcontextprotocol/tasks"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "elicitation": {"form": {}},
        "extensions": {EXTENSION: {}},
    },
}
HANDSHAKE = {**ACCEPT_BOTH, "mcp-protocol-version": "2025-11-25"}
#: Bounds a request to a killed worker: its heartbeat lapses (5 s), then the answer.
BOUND = 20.0


def servers() -> Any:
    return build().server


async def post(
    http: httpx.AsyncClient, url: str, request_id: int, method: str, routed: str, /, **params: Any
) -> httpx.Response:
    """A 2026-07-28 request (with the tasks extension), ``routed`` its ``Mcp-Name``."""
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**params, "_meta": META},
    }
    return await http.post(url, json=body, headers=modern_headers(method, routed))


async def make_task(http: httpx.AsyncClient, url: str, tool: str, **arguments: Any) -> str:
    made = await post(http, url, 1, "tools/call", tool, name=tool, arguments=arguments)
    assert made.status_code == 200, made.text
    task = answers(made)[-1]["result"]
    assert task["resultType"] == "task" and task["status"] == "working", task
    task_id: str = task["taskId"]
    return task_id


async def get_task(http: httpx.AsyncClient, url: str, task_id: str) -> dict[str, Any]:
    got = await post(http, url, 2, "tasks/get", task_id, taskId=task_id)
    assert got.status_code == 200, got.text
    result: dict[str, Any] = answers(got)[-1]["result"]
    assert result["taskId"] == task_id
    return result


async def until(
    http: httpx.AsyncClient, url: str, task_id: str, status: str, limit: float = 10.0
) -> dict[str, Any]:
    with anyio.fail_after(limit):
        while (task := await get_task(http, url, task_id))["status"] != status:
            await anyio.sleep(0.05)
    return task


async def test_an_extension_task_is_served_through_any_worker(
    redis: RedisServer,
) -> None:
    async with (
        workers(redis.url, 2, "t-ext", build=servers) as (a, b),
        httpx.AsyncClient(timeout=15) as http,
    ):
        task_id = await make_task(http, a.url, "ask")
        # Polled through B: the task waits for its input there too.
        waiting = await until(http, b.url, task_id, "input_required")
        [(key, request)] = waiting["inputRequests"].items()
        assert request["method"] == "elicitation/create"
        assert request["params"]["message"] == "Your name?"
        # The answer goes through B to the worker running the task, which goes on.
        answer = {"action": "accept", "content": {"name": "Ada"}}
        updated = await post(
            http, b.url, 3, "tasks/update", task_id, taskId=task_id, inputResponses={key: answer}
        )
        assert updated.status_code == 200, updated.text
        assert answers(updated)[-1]["result"] == {"resultType": "complete"}
        done = await until(http, b.url, task_id, "completed")
        assert done["result"]["structuredContent"] == {"result": "hello Ada"}
        # Cancelled through B: stopped on A, and A says so too.
        slow = await make_task(http, a.url, "slow", seconds=60)
        cancelled = await post(http, b.url, 4, "tasks/cancel", slow, taskId=slow)
        assert answers(cancelled)[-1]["result"] == {"resultType": "complete"}
        assert (await get_task(http, b.url, slow))["status"] == "cancelled"
        assert (await get_task(http, a.url, slow))["status"] == "cancelled"
        assert len(a.server.tasks.extension) == 0  # no handler left running on A
        assert a.app.stats["forwarded_in"] >= 5 and b.app.stats["forwarded_out"] >= 5
        assert b.app.stats["forwarded_in"] == 0 and len(b.server.tasks.store) == 0
        # An id no worker holds gets, through either, what one process answers.
        for worker in (a, b):
            unknown = await post(http, worker.url, 5, "tasks/get", "nope", taskId="nope")
            assert unknown.status_code == 400
            assert unknown.json()["error"]["code"] == -32602
            assert unknown.json()["error"]["message"] == "Failed to retrieve task: Task not found"
        # The routing header and the body disagree: refused by the worker holding the task.
        lying = {"jsonrpc": "2.0", "id": 6, "method": "tasks/get",
                 "params": {"taskId": "other", "_meta": META}}  # fmt: skip
        refused = await http.post(b.url, json=lying, headers=modern_headers("tasks/get", slow))
        assert refused.status_code == 400 and refused.json()["error"]["code"] == -32020


async def test_a_stateless_servers_handshake_era_tasks_are_served_through_any_worker(
    redis: RedisServer,
) -> None:
    async with (
        workers(redis.url, 2, "t-v1", build=servers, stateless=True) as (a, b),
        httpx.AsyncClient(timeout=15) as http,
    ):

        async def rpc(url: str, request_id: int, method: str, **params: Any) -> Any:
            body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            answered = await http.post(url, json=body, headers=HANDSHAKE)
            [message] = answers(answered)
            return message

        made = await rpc(a.url, 1, "tools/call", name="slow", arguments={"seconds": 0.5},
                         task={"ttl": 60_000})  # fmt: skip
        task = made["result"]["task"]
        assert task["status"] == "working" and task["ttl"] == 60_000
        task_id = task["taskId"]
        assert (await rpc(b.url, 2, "tasks/get", taskId=task_id))["result"]["status"] in (
            "working",
            "completed",
        )
        # tasks/result blocks (through B) until the task ends on A.
        result = (await rpc(b.url, 3, "tasks/result", taskId=task_id))["result"]
        assert result["structuredContent"] == {"result": "slept 0.5"}
        assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
        long = (await rpc(a.url, 4, "tools/call", name="slow", arguments={"seconds": 60},
                          task={}))["result"]["task"]["taskId"]  # fmt: skip
        cancelled = await rpc(b.url, 5, "tasks/cancel", taskId=long)
        assert cancelled["result"]["status"] == "cancelled"
        assert (await rpc(a.url, 6, "tasks/get", taskId=long))["result"]["status"] == "cancelled"
        assert a.app.stats["forwarded_in"] == 3 and b.app.stats["forwarded_out"] == 3
        # Other requests through B stay on B (their bodies read once, handed back).
        listed = await rpc(b.url, 7, "tools/list")
        assert {tool["name"] for tool in listed["result"]["tools"]} == {"slow", "ask"}
        unknown = await rpc(b.url, 8, "tasks/get", taskId="nope")
        assert unknown["error"]["code"] == -32602
        assert b.app.stats["forwarded_out"] == 3


async def test_a_task_whose_worker_died_is_not_found_not_a_hang(redis: RedisServer) -> None:
    owner = WorkerProcess(redis.url, "owner", "t-dead", build="tasks_app:build")
    try:
        async with (
            workers(redis.url, 1, "t-dead", build=servers) as [b],
            httpx.AsyncClient(timeout=30) as http,
        ):
            task_id = await make_task(http, owner.url, "slow", seconds=60)
            assert (await get_task(http, b.url, task_id))["status"] == "working"
            owner.kill()
            for request_id in (7, 8):  # the first waits out the heartbeat, the next is at once
                with anyio.fail_after(BOUND):
                    lost = await post(http, b.url, request_id, "tasks/get", task_id, taskId=task_id)
                assert lost.status_code == 400, lost.text
                error = lost.json()["error"]
                assert lost.json()["id"] == request_id
                assert error["code"] == -32602
                assert error["message"] == "Failed to retrieve task: Task not found"
                assert error["data"] == {"taskId": task_id}
            with anyio.fail_after(BOUND):
                cancel = await post(http, b.url, 9, "tasks/cancel", task_id, taskId=task_id)
            assert cancel.status_code == 400 and cancel.json()["error"]["code"] == -32602
    finally:
        owner.kill()
