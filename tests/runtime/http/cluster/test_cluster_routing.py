"""Any worker serves any request: 3 workers sharing a real Redis, behind a real haproxy.

One cluster for the module (the project's own ``serve`` command). Requests through the
balancer spread over every worker, as each worker's own counters (``/_stats``) show; a
handshake-era request, or a client's answer to a server-to-client request, sent to a worker
that does not own the session is forwarded to the owner and answered as if it went there; a
stream cut on one worker resumes on another with nothing lost; a notification raised on one
worker reaches a listener on another.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from clusterkit import Cluster, open_session, running_cluster, sse_events
from httpkit import MODERN_META, modern_call, modern_headers
from mcpbind.generated import v2025_11_25, v2026_07_28
from mcpbind.runtime import Client
from mcpbind.runtime.http import streamable_http_client
from rediskit import RedisServer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

#: The counters of ``StreamableHTTPServer.stats`` these tests read.
SERVED, FORWARDED_OUT, FORWARDED_IN = "served", "forwarded_out", "forwarded_in"
CALLS = 12


@pytest.fixture(scope="module")
def cluster(redis: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(tmp_path_factory.mktemp("cluster"), redis.url) as running:
        yield running


def all_stats(cluster: Cluster) -> list[dict[str, int]]:
    return [worker.stats() for worker in cluster.workers]


def grew(before: list[dict[str, int]], after: list[dict[str, int]], key: str) -> list[int]:
    return [a.get(key, 0) - b.get(key, 0) for b, a in zip(before, after, strict=True)]


def text_of(result: Any) -> str:
    return str(result.content[0].text)


async def test_stateless_requests_spread_over_every_worker(cluster: Cluster) -> None:
    before = all_stats(cluster)
    async with Client(streamable_http_client(cluster.url), protocol_version="2026-07-28") as client:
        for _ in range(CALLS):
            params = v2026_07_28.types.CallToolRequestParams(name="test_simple_text")
            result = await client.send_request(v2026_07_28.methods.TOOLS_CALL, params)
            assert "simple text" in text_of(result).lower()
    served = grew(before, all_stats(cluster), SERVED)
    assert all(count > 0 for count in served), served
    assert sum(served) >= CALLS


async def test_a_session_is_served_through_any_worker(cluster: Cluster) -> None:
    """A handshake-era session through the balancer: its requests land everywhere; those
    not on the owner are forwarded to it, and every one is answered."""
    before = all_stats(cluster)
    async with Client(streamable_http_client(cluster.url), protocol_version="2025-11-25") as client:
        for _ in range(CALLS):
            params = v2025_11_25.types.CallToolRequestParams(name="test_simple_text")
            result = await client.send_request(v2025_11_25.methods.TOOLS_CALL, params)
            assert "simple text" in text_of(result).lower()
    after = all_stats(cluster)
    out, into = grew(before, after, FORWARDED_OUT), grew(before, after, FORWARDED_IN)
    landed = [s + o for s, o in zip(grew(before, after, SERVED), out, strict=True)]
    assert all(count > 0 for count in landed), (before, after)
    out, into = grew(before, after, FORWARDED_OUT), grew(before, after, FORWARDED_IN)
    assert sum(out) > 0 and sum(out) == sum(into), (out, into)
    assert sorted(count > 0 for count in into) == [False, False, True], into  # one owner


async def test_a_request_on_another_worker_is_forwarded_to_the_owner(cluster: Cluster) -> None:
    owner, other = cluster.workers[0], cluster.workers[1]
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, owner.url)
        before = all_stats(cluster)
        call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                "params": {"name": "test_simple_text", "arguments": {}}}  # fmt: skip
        answer = await http.post(other.url, json=call, headers=headers)
        assert answer.status_code == 200, answer.text
        messages = (
            [m async for _, m in sse_events(answer)]
            if "event-stream" in (answer.headers["content-type"])
            else [answer.json()]
        )
        results = [m for m in messages if m is not None and m.get("id") == 5]
        assert len(results) == 1 and "simple text" in str(results[0]["result"]).lower()
        after = all_stats(cluster)
        assert grew(before, after, FORWARDED_OUT)[1] == 1
        assert grew(before, after, FORWARDED_IN)[0] == 1


async def test_the_answer_to_a_server_request_reaches_the_owner_from_another_worker(
    cluster: Cluster,
) -> None:
    """``test_sampling`` on worker 1 waits for the client's LLM; the answer POSTed to worker 2
    is forwarded to worker 1, whose stream then carries the tool's result."""
    owner, other = cluster.workers[0], cluster.workers[1]
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "test_sampling", "arguments": {"prompt": "hi"}}}  # fmt: skip
    sampling = {"sampling": {}}
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, owner.url, sampling)
        with anyio.fail_after(20):
            async with http.stream("POST", owner.url, json=call, headers=headers) as stream:
                assert stream.status_code == 200
                result = None
                async for _, message in sse_events(stream):
                    if message is None:
                        continue
                    if message.get("method") == "sampling/createMessage":
                        reply = {"jsonrpc": "2.0", "id": message["id"], "result": {
                            "role": "assistant", "model": "m",
                            "content": {"type": "text", "text": "from another worker"}}}  # fmt: skip
                        posted = await http.post(other.url, json=reply, headers=headers)
                        assert posted.status_code == 202, posted.text
                    elif message.get("id") == 7:
                        result = message
                        break
    assert result is not None
    assert "LLM response: from another worker" in str(result["result"]), result


async def test_a_stream_cut_resumes_on_another_worker_with_nothing_lost(cluster: Cluster) -> None:
    first, third = cluster.workers[0], cluster.workers[2]
    call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "test_tool_with_progress", "arguments": {},
                       "_meta": {"progressToken": "p9"}}}  # fmt: skip
    seen: list[dict[str, Any]] = []
    last: str | None = None
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, first.url)
        with anyio.fail_after(20):
            async with http.stream("POST", first.url, json=call, headers=headers) as stream:
                assert stream.headers["content-type"].startswith("text/event-stream")
                async for event_id, message in sse_events(stream):
                    last = event_id or last
                    if message is not None:
                        seen.append(message)
                        if message.get("method") == "notifications/progress":
                            break  # the client goes away after the first progress
            assert last is not None
            resume = {**headers, "accept": "text/event-stream", "last-event-id": last}
            async with http.stream("GET", third.url, headers=resume) as stream:
                assert stream.status_code == 200
                async for _, message in sse_events(stream):
                    if message is not None:
                        seen.append(message)
                        if message.get("id") == 9:
                            break
    progress = [
        m["params"]["progress"] for m in seen if m.get("method") == "notifications/progress"
    ]
    assert progress == [0, 50, 100], seen
    results = [m for m in seen if m.get("id") == 9]
    assert len(results) == 1 and "result" in results[0], seen


async def test_a_notification_raised_on_one_worker_reaches_a_listener_on_another(
    cluster: Cluster,
) -> None:
    first, third = cluster.workers[0], cluster.workers[2]
    listen = {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
              "params": {"notifications": {"toolsListChanged": True}, "_meta": MODERN_META}}  # fmt: skip
    trigger = "test_trigger_tool_change"
    got: list[str] = []
    async with httpx.AsyncClient(timeout=10) as http:
        with anyio.fail_after(20):
            headers = modern_headers("subscriptions/listen")
            async with http.stream("POST", third.url, json=listen, headers=headers) as stream:
                assert stream.status_code == 200
                async for _, message in sse_events(stream):
                    if message is None:
                        continue
                    got.append(str(message.get("method")))
                    if message.get("method") == "notifications/subscriptions/acknowledged":
                        raised = await http.post(
                            first.url, json=modern_call(2, trigger),
                            headers=modern_headers("tools/call", trigger),
                        )  # fmt: skip
                        assert raised.status_code == 200, raised.text
                    elif message.get("method") == "notifications/tools/list_changed":
                        break
    assert got[-1] == "notifications/tools/list_changed", got
