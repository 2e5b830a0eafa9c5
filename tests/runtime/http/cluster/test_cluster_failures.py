"""Failures in a cluster of 3 workers behind haproxy: clear errors, never a hang or a crash.

Redis going away mid-run: requests that need it get 503 with a JSON-RPC error body (never a
500, never a hang), and once it is back the workers serve again without being restarted (and
until they have re-registered what it lost, an unknown session is 503 too, not 404). A
worker killed mid-call (SIGKILL, as a crash): its in-flight stream ends, its session's next
request gets 404 from the workers left, the client initialises again and carries on, and the
supervisor reports the death. Redis first: the kill leaves the cluster a worker short.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from clusterkit import Cluster, open_session, running_cluster, sse_events
from httpkit import INITIALIZE, modern_call, modern_headers
from mcpbind.generated import v2025_11_25
from mcpbind.runtime import Client
from mcpbind.runtime.http import streamable_http_client
from redis import Redis
from rediskit import RedisServer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

SIMPLE = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
          "params": {"name": "test_simple_text", "arguments": {}}}  # fmt: skip


@pytest.fixture(scope="module")
def cluster(redis: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("cluster"), redis.url) as running:
        yield running
        assert running.process.poll() is None, "the supervisor died"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def clear_error(answer: httpx.Response) -> dict[str, Any]:
    """A 503 whose body is a JSON-RPC error: what a worker without its Redis answers."""
    assert answer.status_code == 503, (answer.status_code, answer.text)
    body: dict[str, Any] = answer.json()
    assert body["jsonrpc"] == "2.0" and isinstance(body["error"]["code"], int), body
    return body


def heartbeat(redis: RedisServer, worker: str) -> bool:
    """Whether ``worker`` has told Redis it is alive (``RedisState``'s heartbeat key)."""
    with Redis(unix_socket_path=str(redis.socket_path), socket_timeout=2) as client:
        return bool(client.exists(f"mcpbind:worker:{worker}"))


def recovering(redis: RedisServer) -> bool:
    """Whether Redis is in its restart window (a session it lacks may not be re-registered
    yet: 503, not 404)."""
    with Redis(unix_socket_path=str(redis.socket_path), socket_timeout=2) as client:
        return bool(client.exists("mcpbind:epoch:recovering"))


async def call_simple(url: str) -> str:
    async with Client(streamable_http_client(url), protocol_version="2025-11-25") as client:
        params = v2025_11_25.types.CallToolRequestParams(name="test_simple_text")
        result = await client.send_request(v2025_11_25.methods.TOOLS_CALL, params)
        return str(result.content[0].text)


async def test_redis_restarting_mid_run_is_survived(cluster: Cluster, redis: RedisServer) -> None:
    owner, other = cluster.workers[0], cluster.workers[1]
    async with httpx.AsyncClient(timeout=15) as http:
        headers = await open_session(http, owner.url)
        redis.stop()
        try:
            with anyio.fail_after(30):
                # A session's request on a worker that must ask Redis who owns it.
                clear_error(await http.post(other.url, json=SIMPLE, headers=headers))
                # A new session needs Redis too (its owner is recorded there).
                clear_error(await http.post(other.url, json=INITIALIZE, headers=headers))
                # Stateless-era calls need no shared state: served, or refused clearly.
                name = "test_simple_text"
                stateless = await http.post(
                    other.url, json=modern_call(4, name), headers=modern_headers("tools/call", name)
                )
                assert stateless.status_code == 200 or clear_error(stateless)
        finally:
            redis.start()
        with anyio.fail_after(30):  # every worker reconnects and writes its heartbeat again
            while not all(heartbeat(redis, worker.name) for worker in cluster.workers):
                await anyio.sleep(0.1)
            # and the restart window closes: from now on an unknown session is 404 again.
            while recovering(redis):
                await anyio.sleep(0.1)
        for _ in range(len(cluster.workers)):  # fresh sessions, spread over every worker
            assert "simple text" in (await call_simple(cluster.url)).lower()
    assert all(alive(worker.pid) for worker in cluster.workers)


async def test_a_worker_killed_mid_call_gives_404_then_a_new_session_works(
    cluster: Cluster,
) -> None:
    owner = cluster.workers[0]
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "test_sampling", "arguments": {"prompt": "hi"}}}  # fmt: skip
    sampling = {"sampling": {}}
    ended = False
    async with httpx.AsyncClient(timeout=15) as http:
        headers = await open_session(http, owner.url, sampling)
        with anyio.fail_after(20):
            try:
                async with http.stream("POST", owner.url, json=call, headers=headers) as stream:
                    async for _, message in sse_events(stream):
                        if (
                            message is not None
                            and message.get("method") == "sampling/createMessage"
                        ):
                            cluster.kill(0)  # the call is in flight, waiting for the client
            except httpx.HTTPError:
                pass  # the connection broke: the clear end of a stream whose worker died
            ended = True
        assert ended
        with anyio.fail_after(10):  # reaped (not merely signalled): reported by the supervisor
            while f"worker {owner.name} (pid {owner.pid}" not in cluster.stderr():
                await anyio.sleep(0.05)
        with anyio.fail_after(30):
            answers = [await http.post(cluster.url, json=SIMPLE, headers=headers) for _ in range(3)]
        assert [a.status_code for a in answers] == [404, 404, 404], [a.text for a in answers]
        assert all(a.json()["error"]["code"] for a in answers)
    with anyio.fail_after(30):
        assert "simple text" in (await call_simple(cluster.url)).lower()
    assert "exited with code -9" in cluster.stderr()
    assert all(alive(worker.pid) for worker in cluster.workers[1:])
