"""Failures of a cluster on a real Redis: a dead owner gives 404, never a hang; Redis down gives
503 and the workers recover when it is back.

A worker killed outright (SIGKILL, a process of its own) leaves its sessions in Redis until their
TTL: another worker finds its heartbeat gone within seconds and answers the session's requests
404 (the client re-initialises); a request it was relaying when the owner died ends with a
JSON-RPC error on its stream. A worker stopped normally says goodbye, so 404 comes at once.
Redis stopped mid-run: what needs it gets 503 with a JSON-RPC error body; what does not (the
stateless era, a session on its own worker) goes on; once Redis restarts (empty), the workers
re-register their sessions and the bus, and everything works again; until each owner has
(its next heartbeat), a session or task Redis lost is answered 503, never 404 / not found.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from httpkit import (
    ACCEPT_BOTH,
    INITIALIZE,
    MODERN_META,
    answers,
    modern_headers,
    raw_initialize,
    session_headers,
)
from redis import Redis
from rediskit import RedisServer, WorkerProcess, workers
from tasks_app import build

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

#: The bound on any wait here: the dead owner's heartbeat TTL (5 s) and a little more.
BOUND = 20


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    yield server
    server.close()


def call(request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def recovering(redis: RedisServer, prefix: str) -> bool:
    """Whether Redis is in its restart window (``RedisState``'s marker)."""
    with Redis(unix_socket_path=str(redis.socket_path), socket_timeout=2) as client:
        return bool(client.exists(f"{prefix}:epoch:recovering"))


def tasks_app() -> Any:
    return build().server


TASKS_META = {
    **MODERN_META,
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}


def task_call(request_id: int) -> dict[str, Any]:
    """A 2026-07-28 call of ``tasks_app``'s ``slow`` that becomes a task (a minute long)."""
    body = call(request_id, "slow", seconds=60)
    body["params"]["_meta"] = TASKS_META
    return body


def task_get(request_id: int, task_id: str) -> dict[str, Any]:
    params = {"taskId": task_id, "_meta": TASKS_META}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tasks/get", "params": params}


def task_headers(task_id: str) -> dict[str, str]:
    return modern_headers("tasks/get", task_id)


def modern_call(request_id: int, text: str) -> dict[str, Any]:
    body = call(request_id, "echo", text=text)
    body["params"]["_meta"] = MODERN_META
    return body


async def test_a_killed_owner_gives_404_and_ends_what_was_in_flight(redis: RedisServer) -> None:
    owner = WorkerProcess(redis.url, "owner", "t-kill")
    try:
        async with (
            workers(redis.url, 1, "t-kill") as [b],
            httpx.AsyncClient(timeout=30) as http,
        ):
            sid = await raw_initialize(http, owner.url)
            headers = session_headers(sid)
            echoed = await http.post(b.url, json=call(1, "echo", text="x"), headers=headers)
            assert answers(echoed)[0]["result"]["content"][0]["text"] == "x"
            messages: list[Any] = []
            with anyio.fail_after(BOUND):
                async with http.stream(
                    "POST", b.url, json=call(2, "sleep", seconds=60), headers=headers
                ) as response:
                    assert response.headers["content-type"].startswith("text/event-stream")
                    lines = response.aiter_lines()
                    async for line in lines:
                        if line.startswith("id: "):
                            break  # the priming event: the call is in flight on the owner
                    owner.kill()
                    async for line in lines:
                        if line.startswith("data: {"):
                            messages.append(json.loads(line[6:]))
            assert [m["id"] for m in messages] == [2]
            assert messages[0]["error"]["code"] == -32000
            assert "stopped" in messages[0]["error"]["message"]
            with anyio.fail_after(BOUND):
                gone = await http.post(b.url, json=call(3, "echo"), headers=headers)
            assert gone.status_code == 404
            assert gone.json()["error"]["message"] == "Session not found"
            # Its GET stream, and DELETE, are 404 at once now (its heartbeat is gone).
            assert (await http.get(b.url, headers=headers)).status_code == 404
            assert (await http.delete(b.url, headers=headers)).status_code == 404
            # A new session works (on the live worker).
            assert await raw_initialize(http, b.url) in b.app.sessions
    finally:
        owner.kill()


async def test_a_worker_stopped_normally_leaves_404_at_once(redis: RedisServer) -> None:
    async with (
        workers(redis.url, 1, "t-stop", first=1) as [b],
        httpx.AsyncClient(timeout=30) as http,
    ):
        async with workers(redis.url, 1, "t-stop") as [a]:
            sid = await raw_initialize(http, a.url)
            ok = await http.post(b.url, json=call(1, "echo"), headers=session_headers(sid))
            assert ok.status_code == 200
        gone = await http.post(b.url, json=call(2, "echo"), headers=session_headers(sid))
        assert gone.status_code == 404
        assert b.app.stats["forwarded_out"] == 1  # the second was not forwarded: A said goodbye


async def test_redis_restarting_gives_503_meanwhile_then_recovers(redis: RedisServer) -> None:
    async with (
        workers(redis.url, 2, "t-restart") as (a, b),
        httpx.AsyncClient(timeout=30) as http,
    ):
        sid = await raw_initialize(http, a.url)
        headers = session_headers(sid)
        assert (await http.post(b.url, json=call(1, "echo"), headers=headers)).status_code == 200
        redis.stop()
        with anyio.fail_after(BOUND):
            refused = await http.post(b.url, json=call(2, "echo"), headers=headers)
            assert refused.status_code == 503, refused.text
            body = refused.json()
            assert body["error"]["code"] == -32000 and "Redis" in body["error"]["message"]
            assert refused.headers["retry-after"] == "1"
            opening = await http.post(a.url, json=INITIALIZE, headers=ACCEPT_BOTH)
            assert opening.status_code == 503, opening.text
            # What needs no shared state goes on: the stateless era, a session on its own worker.
            modern = await http.post(
                b.url, json=modern_call(3, "still"), headers=modern_headers("tools/call", "echo")
            )
            assert answers(modern)[0]["result"]["content"][0]["text"] == "still"
            local = await http.post(a.url, json=call(4, "echo", text="local"), headers=headers)
            assert answers(local)[0]["result"]["content"][0]["text"] == "local"
        redis.start()  # same port, empty: the workers re-register what they own
        with anyio.fail_after(BOUND):
            while (
                await http.post(b.url, json=call(5, "echo"), headers=headers)
            ).status_code != 200:
                await anyio.sleep(0.1)
            # The bus is back too: a change raised on A reaches a GET stream on B.
            other = await raw_initialize(http, b.url)
            async with http.stream("GET", b.url, headers=session_headers(other)) as stream:
                while b.app.sessions[other].standalone.consumer is None:
                    await anyio.sleep(0.02)
                seen: list[str] = []
                lines = stream.aiter_lines()
                while not seen:
                    await a.server.notify_tools_changed()
                    with anyio.move_on_after(0.5):
                        async for line in lines:
                            if line.startswith("data: {"):
                                seen.append(json.loads(line[6:])["method"])
                                break
        assert seen == ["notifications/tools/list_changed"]


async def test_after_redis_restarts_a_live_session_is_retried_never_404(
    redis: RedisServer,
) -> None:
    """Redis comes back empty: until the owners re-register (their next heartbeat), a session
    or task it does not know is answered 503 + Retry-After (retry), not 404 / not found."""
    recovery = 2.0
    async with (
        workers(redis.url, 2, "t-window", build=tasks_app, state={"recovery": recovery}) as (a, b),
        httpx.AsyncClient(timeout=30) as http,
    ):
        sid = await raw_initialize(http, a.url)  # never used through B: B has no owner cached
        headers = session_headers(sid)
        made = await http.post(
            a.url, json=task_call(1), headers=modern_headers("tools/call", "slow")
        )
        assert made.status_code == 200, made.text
        task_id = answers(made)[-1]["result"]["taskId"]
        redis.restart()  # same port, empty
        statuses: list[int] = []
        with anyio.fail_after(BOUND):
            while True:
                answered = await http.post(b.url, json=call(2, "slow", seconds=0), headers=headers)
                statuses.append(answered.status_code)
                if answered.status_code != 503:
                    break
                assert answered.headers["retry-after"] == "1"
                assert answered.json()["error"]["code"] == -32000
                await anyio.sleep(0.05)
        assert statuses[-1] == 200, (statuses, answers(answered))
        assert answers(answered)[0]["result"]["content"][0]["text"] == "slept 0.0"
        assert set(statuses) <= {503, 200}
        with anyio.fail_after(BOUND):
            while True:
                got = await http.post(
                    b.url, json=task_get(3, task_id), headers=task_headers(task_id)
                )
                if got.status_code != 503:
                    break
                assert answers(got)[0]["id"] == 3 and got.headers["retry-after"] == "1"
                await anyio.sleep(0.05)
        assert got.status_code == 200, got.text
        assert answers(got)[-1]["result"]["status"] == "working"
        # An id Redis never knew is 503 too while the window lasts, then 404 as ever.
        redis.restart()
        unknown = session_headers("never-issued")
        early = await http.post(b.url, json=call(4, "echo"), headers=unknown)
        assert early.status_code == 503, early.text
        assert early.headers["retry-after"] == "1" and early.json()["error"]["code"] == -32000
        with anyio.fail_after(BOUND):
            while recovering(redis, "t-window"):
                await anyio.sleep(0.1)
        late = await http.post(b.url, json=call(5, "echo"), headers=unknown)
        assert late.status_code == 404, late.text


async def test_a_heartbeat_noticing_the_restart_mid_check_does_not_end_the_window(
    redis: RedisServer,
) -> None:
    """The race CI hit: a request's check reads Redis before the heartbeat's marker lands, and
    the heartbeat moves the worker's epoch on before the check reads its answer. The check
    judges by the epoch it knew when it asked, so the window is open (and marked), not 404."""
    from mcpbind.runtime.cluster import RedisState

    state = RedisState.from_url(redis.url, worker_id="w0", prefix="t-race")
    try:
        state.epoch = "before-the-restart"
        with Redis(unix_socket_path=str(redis.socket_path), socket_timeout=2) as client:
            client.set("t-race:epoch:current", "after-the-restart")
        asking = state.call

        async def heartbeat_lands_meanwhile(op: Any, timeout: float | None = None) -> Any:
            answer = await asking(op, timeout)
            state.epoch = "after-the-restart"  # the heartbeat's marker is still on its way
            return answer

        state.call = heartbeat_lands_meanwhile  # type: ignore[method-assign]
        assert await state.recovering() is True
        assert recovering(redis, "t-race")
    finally:
        await state.aclose()
