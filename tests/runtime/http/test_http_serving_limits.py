"""``serving()`` bounds what idle peers can hold: a request-head timeout and a connection cap.

Peers here are raw sockets that send half a request line and stall (a slowloris), next to a
normal client that must still be served; the stalled ones must all end up closed.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import anyio
import httpx
import pytest
from anyio.abc import SocketStream
from mcpbind.runtime.http import serving
from starlette.types import Receive, Scope, Send

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

PROTOCOLS = ["httptools", "h11"]


class App:
    """``/slow`` answers when ``release`` is set; anything else answers at once."""

    def __init__(self) -> None:
        self.release = anyio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await receive()
            await send({"type": "lifespan.startup.complete"})
            await receive()
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["path"] == "/slow":
            await self.release.wait()
        headers = [(b"content-length", b"2")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"ok"})


async def connect(base: str) -> SocketStream:
    parts = urlsplit(base)
    assert parts.hostname is not None and parts.port is not None
    return await anyio.connect_tcp(parts.hostname, parts.port)


async def closed_by_server(stream: SocketStream) -> bytes:
    """Everything the server sent before closing (it must close)."""
    received = b""
    while True:
        try:
            received += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
            return received


@pytest.mark.parametrize("http", PROTOCOLS)
async def test_stalled_heads_do_not_deny_service_and_are_closed(http: str) -> None:
    async with serving(App(), http=http, max_connections=50, header_timeout=1.5) as base:
        stalled = []
        for _ in range(300):
            stream = await connect(base)
            await stream.send(b"POST /mcp HTT")
            stalled.append(stream)
        async with httpx.AsyncClient(timeout=10) as http_client:
            response = await http_client.get(f"{base}/")
            assert response.status_code == 200 and response.text == "ok"
        with anyio.fail_after(30):
            leftovers = [await closed_by_server(stream) for stream in stalled]
        assert all(not data or data.startswith(b"HTTP/1.1 503") for data in leftovers)
        for stream in stalled:
            await stream.aclose()
        async with httpx.AsyncClient(timeout=10) as http_client:
            assert (await http_client.get(f"{base}/")).status_code == 200


@pytest.mark.parametrize("http", PROTOCOLS)
async def test_a_silent_or_half_sent_head_is_closed_after_the_timeout(http: str) -> None:
    async with serving(App(), http=http, header_timeout=0.5) as base:
        silent = await connect(base)
        keep_alive = await connect(base)
        await keep_alive.send(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        first = b""
        while not first.endswith(b"ok"):
            first += await keep_alive.receive()
        assert first.startswith(b"HTTP/1.1 200")
        await keep_alive.send(b"GET / HTTP/1.1\r\nhost: 127.")  # the next head never ends
        with anyio.fail_after(20):
            assert await closed_by_server(silent) == b""
            assert await closed_by_server(keep_alive) == b""


async def test_when_every_connection_is_busy_a_newcomer_gets_503() -> None:
    app = App()
    async with (
        serving(app, max_connections=3, header_timeout=5) as base,
        httpx.AsyncClient(timeout=10, limits=httpx.Limits(max_connections=10)) as client,
        anyio.create_task_group() as tg,
    ):
        answers: list[int] = []

        async def slow() -> None:
            answers.append((await client.get(f"{base}/slow")).status_code)

        for _ in range(3):
            tg.start_soon(slow)
        with anyio.fail_after(10):
            while True:  # until the three are in the app (an idle one would be evicted)
                newcomer = await connect(base)
                await newcomer.send(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
                refused = await closed_by_server(newcomer)
                await newcomer.aclose()
                if refused.startswith(b"HTTP/1.1 503"):
                    break
                await anyio.sleep(0.05)
        assert b"retry-after: 1" in refused
        assert b'"code":-32000' in refused
        app.release.set()
    assert answers == [200, 200, 200]


@pytest.mark.parametrize("http", PROTOCOLS)
async def test_an_endless_head_is_refused_with_431(http: str) -> None:
    async with serving(App(), http=http, max_head_bytes=8192) as base:
        stream = await connect(base)
        await stream.send(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        answer = b""
        with anyio.fail_after(20):
            for n in range(2000):
                try:
                    await stream.send(b"x-junk-%d: %s\r\n" % (n, b"y" * 64))
                except (anyio.BrokenResourceError, ConnectionResetError):
                    break
            answer = await closed_by_server(stream)
        assert answer.startswith((b"HTTP/1.1 431", b"HTTP/1.1 400")) or answer == b""
        async with httpx.AsyncClient(timeout=10) as client:
            assert (await client.get(f"{base}/")).status_code == 200


@pytest.mark.parametrize("together", [False, True])
@pytest.mark.parametrize("http", PROTOCOLS)
async def test_a_body_answered_before_it_is_read_is_not_taken_for_a_head(
    http: str, together: bool
) -> None:
    """The app answers without reading the body (as a 405, 413 or 429 does); the body, sent
    after the head or in the same chunk, is not counted as a head, and the next request on
    the connection is served."""
    async with serving(App(), http=http, max_head_bytes=8192, header_timeout=5) as base:
        stream = await connect(base)
        body = b"z" * 200_000
        head = b"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n" % len(body)
        await stream.send(head + body if together else head)
        answer = b""
        while not answer.endswith(b"ok"):
            answer += await stream.receive()
        assert answer.startswith(b"HTTP/1.1 200")
        if not together:
            await stream.send(body)
        await stream.send(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        with anyio.fail_after(10):
            second = await closed_by_server(stream)
        assert second.startswith(b"HTTP/1.1 200"), second[:100]
