"""Handshake-era sessions across workers sharing a real Redis: any worker serves any request.

Two of our servers on uvicorn (127.0.0.1, their own ports) share one ``redis-server``; each test
picks the worker every request goes to. A session opened on worker A is used through worker B
(plain and SSE answers, a server-to-client request answered through B, the GET stream, DELETE),
a stream cut on A is resumed through B without loss, stateless-era requests are served anywhere,
and bad input gets through B exactly what one process answers.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx
import pytest
from httpkit import (
    ACCEPT_BOTH,
    INITIALIZE,
    MODERN_META,
    answers,
    build_server,
    modern_headers,
    raw_initialize,
    session_headers,
)
from mcpbind.runtime.http import StreamableHTTPServer, serving
from rediskit import RedisServer, workers

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]


@pytest.fixture
def prefix(request: pytest.FixtureRequest) -> str:
    return f"t-{request.node.name}"


def call(request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def read_until(
    lines: AsyncIterator[str], done: Callable[[Any], bool], ids: list[str] | None = None
) -> list[Any]:
    """The JSON messages of an SSE body's ``lines`` up to the first ``done`` one (event ids
    kept); the rest stays to be read."""
    seen: list[Any] = []
    async for line in lines:
        if line.startswith("id: ") and ids is not None:
            ids.append(line[4:])
        if line.startswith("data: {"):
            seen.append(json.loads(line[6:]))
            if done(seen[-1]):
                return seen
    raise AssertionError(f"the stream ended early after {seen}")


async def test_a_session_made_on_one_worker_is_served_by_another(
    redis: RedisServer, prefix: str
) -> None:
    async with workers(redis.url, 2, prefix) as (a, b), httpx.AsyncClient(timeout=15) as http:
        sid = await raw_initialize(http, a.url)
        assert sid in a.app.sessions and sid not in b.app.sessions
        headers = session_headers(sid)
        echoed = await http.post(b.url, json=call(1, "echo", text="via b"), headers=headers)
        assert echoed.status_code == 200, echoed.text
        assert echoed.headers["mcp-session-id"] == sid
        assert answers(echoed)[0]["result"]["content"][0]["text"] == "via b"
        # An SSE answer (progress first), relayed chunk by chunk.
        progress = call(2, "progress", steps=3)
        progress["params"]["_meta"] = {"progressToken": "p"}
        streamed = await http.post(b.url, json=progress, headers=headers)
        assert streamed.headers["content-type"].startswith("text/event-stream")
        got = answers(streamed)
        assert [m["params"]["progress"] for m in got[:-1]] == [1, 2, 3]
        assert got[-1]["result"]["content"][0]["text"] == "3 steps"
        # Listing through B is A's answer: the same as asking A.
        listed_b = await http.post(
            b.url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=headers
        )
        listed_a = await http.post(
            a.url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=headers
        )
        assert answers(listed_b) == answers(listed_a)
        assert b.app.stats["forwarded_out"] == 3 and a.app.stats["forwarded_in"] == 3
        assert a.app.stats["sessions"] == 1 and b.app.stats["sessions"] == 0
        # DELETE through B ends the session on A; then both workers say 404.
        deleted = await http.delete(b.url, headers=headers)
        assert deleted.status_code == 200
        for worker in (a, b):
            gone = await http.post(worker.url, json=call(4, "echo"), headers=headers)
            assert gone.status_code == 404, gone.text
            assert gone.json()["error"]["message"] == "Session not found"


async def test_a_server_to_client_request_is_answered_through_another_worker(
    redis: RedisServer, prefix: str
) -> None:
    async with workers(redis.url, 2, prefix) as (a, b), httpx.AsyncClient(timeout=15) as http:
        opening = {
            **INITIALIZE,
            "params": {**INITIALIZE["params"], "capabilities": {"sampling": {}}},
        }
        opened = await http.post(a.url, json=opening, headers=ACCEPT_BOTH)
        sid = opened.headers["mcp-session-id"]
        headers = session_headers(sid)
        ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(a.url, json=ready, headers=headers)).status_code == 202
        async with http.stream("POST", b.url, json=call(7, "ask_llm"), headers=headers) as response:
            assert response.status_code == 200
            lines = response.aiter_lines()
            asked = (
                await read_until(lines, lambda m: m.get("method") == "sampling/createMessage")
            )[-1]
            reply = {
                "jsonrpc": "2.0",
                "id": asked["id"],
                "result": {
                    "role": "assistant",
                    "content": {"type": "text", "text": "42"},
                    "model": "m",
                },
            }
            answered = await http.post(b.url, json=reply, headers=headers)
            assert answered.status_code == 202, answered.text
            result = (await read_until(lines, lambda m: m.get("id") == 7))[-1]
        assert result["result"]["content"][0]["text"] == "llm: 42"
        assert b.app.stats["forwarded_out"] == 2


async def test_a_stream_cut_on_one_worker_is_resumed_on_another(
    redis: RedisServer, prefix: str
) -> None:
    async with workers(redis.url, 2, prefix) as (a, b), httpx.AsyncClient(timeout=15) as http:
        sid = await raw_initialize(http, a.url)
        headers = session_headers(sid)
        progress = call(9, "progress", steps=5, delay=0.1)
        progress["params"]["_meta"] = {"progressToken": "t"}
        ids: list[str] = []
        async with http.stream("POST", a.url, json=progress, headers=headers) as response:
            first = await read_until(response.aiter_lines(), lambda m: True, ids)
        assert first[0]["params"]["progress"] == 1 and len(ids) == 2  # priming, then event 1
        resumed = await http.get(b.url, headers={**headers, "last-event-id": ids[-1]})
        assert resumed.status_code == 200, resumed.text
        rest = answers(resumed)
        assert [m["params"]["progress"] for m in rest[:-1]] == [2, 3, 4, 5]
        assert rest[-1]["id"] == 9 and rest[-1]["result"]["content"][0]["text"] == "5 steps"
        # A forged Last-Event-ID through B gets A's 400, as in one process.
        for forged in (f"{ids[-1]}9999", "nope", "x/1"):
            through_b = await http.get(b.url, headers={**headers, "last-event-id": forged})
            direct = await http.get(a.url, headers={**headers, "last-event-id": forged})
            assert through_b.status_code == direct.status_code == 400
            assert through_b.json() == direct.json()


async def test_the_get_stream_opened_through_another_worker_gets_notifications(
    redis: RedisServer, prefix: str
) -> None:
    async with workers(redis.url, 2, prefix) as (a, b), httpx.AsyncClient(timeout=15) as http:
        sid = await raw_initialize(http, a.url)
        headers = session_headers(sid)
        async with http.stream("GET", b.url, headers=headers) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            # A second GET stream is refused by the owner, through either worker.
            again = await http.get(a.url, headers=headers)
            assert again.status_code == 409
            with anyio.fail_after(10):
                while a.app.sessions[sid].standalone.consumer is None:
                    await anyio.sleep(0.02)
                await a.server.notify_tools_changed()
                got = await read_until(stream.aiter_lines(), lambda m: "method" in m)
        assert got[-1]["method"] == "notifications/tools/list_changed"


async def test_stateless_requests_are_served_anywhere(redis: RedisServer, prefix: str) -> None:
    async with workers(redis.url, 2, prefix) as (a, b), httpx.AsyncClient(timeout=15) as http:
        for n, worker in enumerate((a, b, a, b)):
            body = call(n, "echo", text=f"hi {n}")
            body["params"]["_meta"] = MODERN_META
            # A stale session id on a stateless-era request is ignored, as in one process.
            answer = await http.post(
                worker.url,
                json=body,
                headers=modern_headers("tools/call", "echo", **{"mcp-session-id": "gone"}),
            )
            assert answer.status_code == 200, answer.text
            assert answers(answer)[0]["result"]["content"][0]["text"] == f"hi {n}"
        for worker in (a, b):
            assert worker.app.stats["served"] == 2
            assert worker.app.stats["forwarded_out"] == worker.app.stats["forwarded_in"] == 0


async def test_bad_input_gets_what_one_process_answers(redis: RedisServer, prefix: str) -> None:
    """Unknown sessions, forged ids, missing headers: the same status and body as one worker."""
    single = StreamableHTTPServer(build_server().serve)
    async with (
        workers(redis.url, 2, prefix) as (a, b),
        serving(single) as base,
        httpx.AsyncClient(timeout=15) as http,
    ):
        sid = await raw_initialize(http, a.url)
        cases: list[tuple[str, dict[str, str], Any]] = [
            ("POST", session_headers("unknown-session"), call(1, "echo")),
            ("GET", session_headers("unknown-session"), None),
            ("DELETE", session_headers("unknown-session"), None),
            (
                "POST",
                {**session_headers(sid), "mcp-protocol-version": "1999-01-01"},
                call(1, "echo"),
            ),
            ("POST", {**session_headers(sid), "content-type": "text/plain"}, call(1, "echo")),
            ("POST", session_headers(sid), "{not json"),
            ("GET", {**session_headers("unknown-session"), "last-event-id": "x/1"}, None),
        ]
        for method, headers, body in cases:
            content = body if isinstance(body, str) else json.dumps(body) if body else None
            here = await http.request(method, b.url, headers=headers, content=content)
            expected = await http.request(method, f"{base}/mcp", headers=headers, content=content)
            if method == "POST" and headers["mcp-session-id"] == sid:
                expected = await http.request(method, a.url, headers=headers, content=content)
            assert (here.status_code, here.json()) == (expected.status_code, expected.json()), (
                method,
                headers,
            )
            assert here.status_code in (400, 404, 415)


async def test_a_long_json_answer_through_another_worker_is_waited_for(
    redis: RedisServer, prefix: str
) -> None:
    """Nothing flows while the owner computes a JSON answer; its pings keep the forwarder
    waiting past the point where it would give up on a lost request."""
    async with (
        workers(redis.url, 2, prefix, json_response=True) as (a, b),
        httpx.AsyncClient(timeout=30) as http,
    ):
        sid = await raw_initialize(http, a.url)
        slow = await http.post(
            b.url, json=call(1, "sleep", seconds=8), headers=session_headers(sid)
        )
        assert slow.status_code == 200, slow.text
        assert slow.json()["result"]["content"][0]["text"] == "slept"
