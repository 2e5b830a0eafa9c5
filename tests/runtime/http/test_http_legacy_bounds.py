"""The legacy HTTP+SSE endpoint under a client that sends more than it reads, or sends junk.

A POST is answered 202 only for what fits the session's byte budget; beyond it 429 with
``Retry-After``. Every header it parses is checked: junk gets a 4xx with a JSON-RPC error body,
never a 5xx (a hypothesis fuzz against a real uvicorn).
"""

from __future__ import annotations

import json
import logging
import resource
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import pytest
from anyio.from_thread import start_blocking_portal
from httpkit import build_server
from hypothesis import HealthCheck, given, settings, strategies as st
from mcpbind.runtime.http import LegacySSEServer, serving

pytestmark = [pytest.mark.timeout(120)]

JSON_HEADERS = {"content-type": "application/json"}


def echo_call(n: int, text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}},
    }


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2024-11-05",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


async def unread_session(base: str) -> tuple[anyio.abc.SocketStream, str]:
    """Open the SSE stream on a raw socket, read only its ``endpoint`` event, never more."""
    parts = urlsplit(base)
    assert parts.hostname is not None and parts.port is not None
    stream = await anyio.connect_tcp(parts.hostname, parts.port)
    await stream.send(b"GET /sse HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n\r\n")
    head = b""
    while b"session_id=" not in head or not head.split(b"session_id=", 1)[1].count(b"\n"):
        head += await stream.receive()
    session_id = head.split(b"session_id=", 1)[1].split(b"\n", 1)[0].strip().decode()
    return stream, f"{base}/messages/?session_id={session_id}"


def rss_mb() -> float:
    """This process's resident memory now (server and client both live here)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


@pytest.mark.anyio
async def test_large_posts_on_an_unread_session_stay_within_the_budget() -> None:
    app = LegacySSEServer(build_server().serve)
    budget = app.max_queued_bytes
    text = "x" * (3 * 1024 * 1024 - 200)
    async with serving(app) as base, httpx.AsyncClient(timeout=30) as http:
        stream, endpoint = await unread_session(base)
        init = await http.post(endpoint, json=INITIALIZE, headers=JSON_HEADERS)
        assert init.status_code == 202
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(endpoint, json=done, headers=JSON_HEADERS)).status_code == 202
        body = json.dumps(echo_call(1, text)).encode()
        before = rss_mb()
        statuses = []
        for n in range(60):
            response = await http.post(
                endpoint,
                content=body.replace(b'"id": 1', b'"id": %d' % (n + 1)),
                headers=JSON_HEADERS,
            )
            statuses.append(response.status_code)
            (session,) = app.sessions.values()
            assert session.budget.used <= budget
            assert app.queued.used <= app.queued.limit
            if response.status_code == 429:
                assert response.headers["retry-after"] == "1"
                error = response.json()["error"]
                assert error["code"] == -32000 and "Too Many Requests" in error["message"]
        grown = rss_mb() - before
        await stream.aclose()
    assert set(statuses) == {202, 429}
    assert statuses.count(202) < 20
    # Before the byte budget the same run grew the process by more than 1 GB.
    assert grown < 400, f"RSS grew by {grown:.0f} MB"


@pytest.mark.anyio
async def test_a_post_that_does_not_fit_gets_429_and_the_bytes_come_back() -> None:
    started = anyio.Event()

    async def never_reads(connection: Any) -> None:
        started.set()
        await anyio.sleep_forever()

    app = LegacySSEServer(never_reads, max_queued_bytes=10_000, max_queued_messages=3)
    async with serving(app) as base, httpx.AsyncClient(timeout=10) as http:
        stream, endpoint = await unread_session(base)
        await started.wait()
        note = {"jsonrpc": "2.0", "method": "notifications/x", "params": {"pad": "y" * 3000}}
        answers = [
            (await http.post(endpoint, json=note, headers=JSON_HEADERS)).status_code
            for _ in range(5)
        ]
        assert answers == [202, 202, 202, 429, 429]
        (session,) = app.sessions.values()
        assert 9000 < session.budget.used <= 10_000
        small = {"jsonrpc": "2.0", "method": "notifications/x"}
        assert (await http.post(endpoint, json=small, headers=JSON_HEADERS)).status_code == 429
        await stream.aclose()
        with anyio.fail_after(10):
            while app.sessions or app.queued.used:
                await anyio.sleep(0.02)


@pytest.mark.anyio
async def test_a_batch_is_accepted_and_answered_on_the_stream() -> None:
    app = LegacySSEServer(build_server().serve)
    async with (
        serving(app) as base,
        httpx.AsyncClient(timeout=10) as http,
        http.stream("GET", f"{base}/sse") as sse,
    ):
        lines = sse.aiter_lines()
        assert await anext(lines) == "event: endpoint"
        endpoint = base + (await anext(lines)).removeprefix("data: ")
        assert (await http.post(endpoint, json=INITIALIZE, headers=JSON_HEADERS)).status_code == 202
        batch = [echo_call(1, "a"), echo_call(2, "b")]
        assert (await http.post(endpoint, json=batch, headers=JSON_HEADERS)).status_code == 202
        seen: dict[int, Any] = {}
        with anyio.fail_after(10):
            async for line in lines:
                if line.startswith("data: "):
                    message = json.loads(line[6:])
                    for item in message if isinstance(message, list) else [message]:
                        seen[item["id"]] = item
                if 1 in seen and 2 in seen:
                    break
        assert seen[1]["result"]["content"][0]["text"] == "a"
        assert seen[2]["result"]["content"][0]["text"] == "b"
        (session,) = app.sessions.values()
        with anyio.fail_after(5):
            while session.budget.used:
                await anyio.sleep(0.02)


@pytest.mark.anyio
async def test_peer_strings_are_escaped_in_log_lines(caplog: pytest.LogCaptureFixture) -> None:
    app = LegacySSEServer(build_server().serve)
    caplog.set_level(logging.INFO, "mcpbind.runtime.http")
    async with serving(app) as base, httpx.AsyncClient() as http:
        forged = "abc%0aINFO forged line%0d%00"
        response = await http.post(
            f"{base}/messages/?session_id={forged}", json={}, headers=JSON_HEADERS
        )
        assert response.status_code == 400
    lines = [r.getMessage() for r in caplog.records if "session_id" in r.getMessage()]
    assert lines and all("\n" not in m and "\r" not in m and "\x00" not in m for m in lines)
    assert any("\\n" in m for m in lines)


# -- fuzz: whatever the headers, never a 5xx -----------------------------------------------------


class Live:
    """A legacy server on a background thread with one session whose stream is drained."""

    def __init__(self, base: str, endpoint: str) -> None:
        self.base = base
        self.endpoint = endpoint


@pytest.fixture(scope="module")
def live() -> Iterator[Live]:
    app = LegacySSEServer(build_server().serve, max_body_bytes=64 * 1024)
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(serving(app)) as base:
        found: list[str] = []
        ready = anyio.Event()

        async def drain() -> None:
            async with (
                httpx.AsyncClient(timeout=None) as http,
                http.stream("GET", f"{base}/sse") as sse,
            ):
                async for line in sse.aiter_lines():
                    if line.startswith("data: /messages/"):
                        found.append(base + line.removeprefix("data: "))
                        ready.set()

        future = portal.start_task_soon(drain)
        portal.call(ready.wait)
        yield Live(base, found[0])
        future.cancel()


HEADER_TEXT = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, blacklist_characters="\x7f"),
    max_size=40,
)
QUERY = st.one_of(
    st.just("valid"),
    st.text(alphabet="0123456789abcdefABCDEF%&=_-xyz/?\u00b2", max_size=70).map(
        lambda q: "session_id=" + q
    ),
    HEADER_TEXT.map(lambda q: q.replace("#", "").replace(" ", "+")),
)
BODIES = st.one_of(
    st.binary(max_size=200),
    st.just(b'{"jsonrpc":"2.0","method":"notifications/x"}'),
    st.just(b"[]"),
    st.just(b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]'),
    st.just(b"x" * 70_000),
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    query=QUERY,
    content_type=st.one_of(st.none(), st.just("application/json"), HEADER_TEXT),
    content_length=st.one_of(st.none(), HEADER_TEXT, st.just("99999999999999999999999")),
    accept=st.one_of(st.none(), HEADER_TEXT),
    body=BODIES,
    method=st.sampled_from(["POST", "GET", "PUT"]),
)
def test_fuzzed_headers_never_get_a_5xx(
    live: Live,
    query: str,
    content_type: str | None,
    content_length: str | None,
    accept: str | None,
    body: bytes,
    method: str,
) -> None:
    url = live.endpoint if query == "valid" else f"{live.base}/messages/?{query}"
    headers = {"host": b"127.0.0.1", "connection": b"close"}
    if content_type is not None:
        headers["content-type"] = content_type.encode("latin-1")
    if accept is not None:
        headers["accept"] = accept.encode("latin-1")
    if content_length is not None and not content_length.strip().isdigit():
        # malformed: the parser or we refuse it
        headers["content-length"] = content_length.encode("latin-1")
    if method == "GET":
        url = f"{live.base}/sse"
        body = b""
    with httpx.Client(timeout=10) as http:
        try:
            with http.stream(method, url, content=body, headers=headers) as response:
                if response.status_code == 200 and method == "GET":
                    return  # a session opened: its stream never ends
                response.read()
        except httpx.LocalProtocolError:
            return  # httpx would not send it
        except httpx.RemoteProtocolError:
            return  # uvicorn's parser dropped the connection: no answer, no 5xx
        assert response.status_code < 500, (response.status_code, response.text)
        if response.status_code >= 400 and response.text != "Invalid HTTP request received.":
            assert "error" in response.json(), response.text
