"""Change notifications raised on one worker reach listeners on every worker, in both eras.

Three of our servers (``listen_server.make_server``: tool ``change`` raises a notification) share a
real ``redis-server``. A handshake-era session's GET stream on worker 3 (subscribed to a resource)
and a 2026-07-28 ``subscriptions/listen`` stream on worker 2 both get what a call on worker 1
raises; worker 1's own listener gets each notification exactly once.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from httpkit import MODERN_META, SUBSCRIPTION_ID, modern_headers, raw_initialize, session_headers
from listen_server import make_server
from rediskit import RedisServer, workers

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

URI = "file:///watched.txt"
TOOLS = "notifications/tools/list_changed"
UPDATED = "notifications/resources/updated"
RESOURCES = "notifications/resources/list_changed"


async def next_message(lines: AsyncIterator[str]) -> Any:
    async for line in lines:
        if line.startswith("data: {"):
            return json.loads(line[6:])
    raise AssertionError("the stream ended")


def change(request_id: int, what: str) -> dict[str, Any]:
    params = {"name": "change", "arguments": {"what": what}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def test_a_notification_raised_on_one_worker_reaches_every_listener(
    redis: RedisServer,
) -> None:
    async with (
        workers(redis.url, 3, "t-notify", make_server) as (w1, w2, w3),
        httpx.AsyncClient(timeout=15) as http,
    ):
        # Handshake era: a session on worker 3, subscribed to URI, its GET stream open there;
        # another on worker 1 (where the changes are raised).
        far = await raw_initialize(http, w3.url)
        near = await raw_initialize(http, w1.url)
        subscribe = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "resources/subscribe",
            "params": {"uri": URI},
        }
        assert (
            await http.post(w3.url, json=subscribe, headers=session_headers(far))
        ).status_code == 200
        listen = {
            "jsonrpc": "2.0",
            "id": "l1",
            "method": "subscriptions/listen",
            "params": {
                "_meta": MODERN_META,
                "notifications": {"toolsListChanged": True, "resourceSubscriptions": [URI]},
            },
        }
        async with (
            http.stream("GET", w3.url, headers=session_headers(far)) as far_stream,
            http.stream("GET", w1.url, headers=session_headers(near)) as near_stream,
            http.stream(
                "POST", w2.url, json=listen, headers=modern_headers("subscriptions/listen")
            ) as listening,
        ):
            far_lines, near_lines = far_stream.aiter_lines(), near_stream.aiter_lines()
            listen_lines = listening.aiter_lines()
            ack = await next_message(listen_lines)
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            with anyio.fail_after(10):
                while not all(
                    w.app.sessions[s].standalone.consumer is not None
                    for w, s in ((w3, far), (w1, near))
                ):
                    await anyio.sleep(0.02)
            assert w2.app.stats["listeners"] == 1
            raised = await http.post(w1.url, json=change(2, "tools"), headers=session_headers(near))
            assert raised.status_code == 200, raised.text
            for n, what in enumerate((URI, "resources"), 3):
                done = await http.post(w1.url, json=change(n, what), headers=session_headers(near))
                assert done.status_code == 200, done.text
            with anyio.fail_after(10):
                far_got = [await next_message(far_lines) for _ in range(3)]
                first, second = await next_message(listen_lines), await next_message(listen_lines)
                # Worker 1's own session (not subscribed to URI): each once, in order; its own
                # relay does not come back to it.
                near_got = [await next_message(near_lines) for _ in range(2)]
        assert [m["method"] for m in far_got] == [TOOLS, UPDATED, RESOURCES]
        assert far_got[1]["params"] == {"uri": URI}
        assert [m["method"] for m in near_got] == [TOOLS, RESOURCES]
        assert first["method"] == TOOLS and first["params"]["_meta"][SUBSCRIPTION_ID] == "l1"
        assert second["method"] == UPDATED and second["params"]["uri"] == URI
        assert w1.app.stats["forwarded_out"] == w2.app.stats["forwarded_in"] == 0
