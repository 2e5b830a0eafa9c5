"""What the Streamable HTTP server refuses: foreign Host/Origin, bad headers, bad bodies."""

from __future__ import annotations

import socket
from collections.abc import MutableMapping
from typing import Any

import anyio
import httpx
import pytest
from httpkit import ACCEPT_BOTH, INITIALIZE, build_server, raw_initialize, session_headers
from mcpbind.runtime.http import (
    HostGuard,
    InMemoryEventStore,
    StreamableHTTPServer,
    serve_forever,
    serving,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"host": "evil.example"}, 403),
        ({"host": "evil.example:8080"}, 403),
        ({"origin": "http://evil.example"}, 403),
        ({"origin": "null"}, 403),
        ({"origin": "http://localhost:3000"}, 200),
        ({"origin": "http://127.0.0.1"}, 200),
        ({"host": "localhost"}, 200),
        ({"host": "[::1]:9"}, 200),
    ],
)
async def test_dns_rebinding_protection(headers: dict[str, str], status: int) -> None:
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base, httpx.AsyncClient() as http:
        response = await http.post(
            f"{base}/mcp", json=INITIALIZE, headers={**ACCEPT_BOTH, **headers}
        )
        assert response.status_code == status
        if status == 403:
            assert response.json()["error"]["code"] == -32000
            assert app.sessions == {}


async def test_custom_allow_lists() -> None:
    app = StreamableHTTPServer(
        build_server().serve,
        allowed_hosts=["mcp.example:443", "127.0.0.1"],
        allowed_origins=["https://app.example"],
    )
    async with serving(app) as base, httpx.AsyncClient() as http:
        ok = await http.post(
            f"{base}/mcp", json=INITIALIZE, headers={**ACCEPT_BOTH, "origin": "https://app.example"}
        )
        assert ok.status_code == 200
        local_origin = await http.post(
            f"{base}/mcp", json=INITIALIZE, headers={**ACCEPT_BOTH, "origin": "http://localhost"}
        )
        assert local_origin.status_code == 403
        wrong_port = await http.post(
            f"{base}/mcp", json=INITIALIZE, headers={**ACCEPT_BOTH, "host": "mcp.example:80"}
        )
        assert wrong_port.status_code == 403


async def test_a_header_set_admitted_by_one_guard_is_checked_by_another() -> None:
    """Host and Origin verdicts are kept per exact header set (``HeaderView.admitted_by``) and
    per guard: the same headers a lenient endpoint admitted are refused by a strict one."""
    lenient = StreamableHTTPServer(build_server().serve, allowed_hosts=["*"])
    strict = StreamableHTTPServer(build_server().serve, allowed_hosts=["mcp.example"])
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-type", b"application/json"),
    ]
    body = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'

    async def post(app: StreamableHTTPServer) -> int:
        sent: list[MutableMapping[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
        await app({**scope, "query_string": b"", "client": ("127.0.0.1", 1)}, receive, send)
        status = sent[0]["status"]
        assert isinstance(status, int)
        return status

    for _ in range(2):
        assert await post(lenient) == 400  # admitted: then no session named
        assert await post(strict) == 403


def test_host_guard_parsing() -> None:
    guard = HostGuard()
    assert guard.host_ok("127.0.0.1:8000") and guard.host_ok("[::1]") and guard.host_ok("LOCALHOST")
    assert not guard.host_ok(None) and not guard.host_ok("127.0.0.1.evil.example")
    assert guard.origin_ok(None) and guard.origin_ok("https://localhost:1")
    assert not guard.origin_ok("http://localhost.evil.example") and not guard.origin_ok("file://")


async def test_request_validation() -> None:
    app = StreamableHTTPServer(build_server().serve, max_body_bytes=2048)
    async with serving(app) as base, httpx.AsyncClient() as http:
        url = f"{base}/mcp"
        session_id = await raw_initialize(http, url)
        headers = session_headers(session_id)

        async def post(body: bytes, **extra: str) -> httpx.Response:
            return await http.post(url, content=body, headers={**headers, **extra})

        malformed = await post(b'{"jsonrpc": "2.0", "id": 1, "method": ')
        assert malformed.status_code == 400 and malformed.json()["error"]["code"] == -32700
        not_rpc = await post(b'{"hello": "world"}')
        assert not_rpc.status_code == 400 and not_rpc.json()["error"]["code"] == -32600
        empty_batch = await post(b"[]")
        assert empty_batch.status_code == 400
        oversized = await post(
            b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "'
            + b"a" * 4096
            + b'"}}'
        )
        assert oversized.status_code == 413
        assert (await post(b"{}", **{"content-type": "text/plain"})).status_code == 415
        assert (await post(b"{}", accept="text/html")).status_code == 406
        bad_version = await http.post(
            url, json=PING, headers={**headers, "mcp-protocol-version": "1999-01-01"}
        )
        assert bad_version.status_code == 400
        no_session = await http.post(url, json=PING, headers=ACCEPT_BOTH)
        assert no_session.status_code == 400
        unknown = await http.post(
            url, json=PING, headers={**headers, "mcp-session-id": "not-a-session"}
        )
        assert unknown.status_code == 404
        assert (await http.put(url, headers=headers)).status_code == 405
        assert (await http.post(f"{base}/other", json=PING, headers=headers)).status_code == 404
        initialize_in_batch = await http.post(url, json=[INITIALIZE, PING], headers=ACCEPT_BOTH)
        assert initialize_in_batch.status_code == 400
        still_fine = await http.post(
            url, json=PING, headers={**headers, "accept": "application/json"}
        )
        assert still_fine.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


async def test_batches_answer_every_request() -> None:
    app = StreamableHTTPServer(build_server().serve, json_response=True)
    async with serving(app) as base, httpx.AsyncClient() as http:
        url = f"{base}/mcp"
        session_id = await raw_initialize(http, url)
        batch = [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": 0, "progress": 1},
            },
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ]
        response = await http.post(
            url,
            json=batch,
            headers={**session_headers(session_id), "mcp-protocol-version": "2025-03-26"},
        )
        assert sorted(item["id"] for item in response.json()) == [1, 2]


async def test_second_get_stream_conflicts() -> None:
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base, httpx.AsyncClient(timeout=5) as http:
        url = f"{base}/mcp"
        session_id = await raw_initialize(http, url)
        headers = {**session_headers(session_id), "accept": "text/event-stream"}
        async with http.stream("GET", url, headers=headers) as first:
            assert first.status_code == 200
            second = await http.get(url, headers=headers)
            assert second.status_code == 409
        with anyio.fail_after(5):
            while True:
                async with http.stream("GET", url, headers=headers) as again:
                    if again.status_code == 200:
                        break
                await anyio.sleep(0.05)
        unknown = await http.get(url, headers={**headers, "last-event-id": "nope/1"})
        assert unknown.status_code == 400


async def test_event_store_is_bounded() -> None:
    store = InMemoryEventStore(max_events_per_stream=3, max_streams=2, window=0)
    ids = [await store.store_event("a", {"n": n}) for n in range(5)]
    replay = await store.replay_events_after(ids[2])
    assert replay == ("a", [(ids[3], {"n": 3}), (ids[4], {"n": 4})])
    assert await store.replay_events_after(ids[0]) is None
    primed = await store.store_event("b", None)
    await store.store_event("b", {"n": "b"})
    assert await store.replay_events_after(primed) == ("b", [("b/2", {"n": "b"})])
    await store.store_event("c", {"n": "c"})
    assert await store.replay_events_after(ids[3]) is None
    assert await store.replay_events_after("garbage") is None


async def test_silent_streams_get_keepalive_comments() -> None:
    app = StreamableHTTPServer(build_server().serve, sse_keepalive=0.1)
    async with serving(app) as base, httpx.AsyncClient(timeout=5) as http:
        url = f"{base}/mcp"
        session_id = await raw_initialize(http, url)
        headers = {**session_headers(session_id), "accept": "text/event-stream"}
        comments = 0
        async with http.stream("GET", url, headers=headers) as stream:
            async for line in stream.aiter_lines():
                comments += line == ": keepalive"
                if comments == 2:
                    break
        assert comments == 2


async def test_serve_forever_serves_until_cancelled() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = StreamableHTTPServer(build_server().serve)
    async with anyio.create_task_group() as tg, httpx.AsyncClient() as http:
        tg.start_soon(serve_forever, app, "127.0.0.1", port)
        with anyio.fail_after(10):
            while True:
                try:
                    response = await http.post(
                        f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, headers=ACCEPT_BOTH
                    )
                    break
                except httpx.ConnectError:
                    await anyio.sleep(0.05)
        assert response.status_code == 200
        tg.cancel_scope.cancel()
