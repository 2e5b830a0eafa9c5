"""A client that stops reading its GET stream: broadcasts go on, its stream is detached, and
what it missed is still there to resume (issue 10: "detaches a stream that stays full past a
timeout"). Over a real uvicorn on 127.0.0.1, with a raw socket as the client that never reads.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import anyio
import httpx
import pytest
from httpkit import raw_initialize, session_headers
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Server
from mcpbind.runtime.http import InMemoryEventStore, StreamableHTTPServer, serving
from mcpbind.runtime.transports.http._streams import BACKLOG

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

#: Enough notifications of this size to fill every buffer between the server and a client
#: that reads nothing (the kernel's take several MiB on loopback), all kept by the event store.
COUNT = 400
SIZE = 48 * 1024


def stuck_get(base: str, session_id: str) -> tuple[socket.socket, str]:
    """Open the GET stream on a raw socket, read up to its priming event's id, read no more."""
    host, port = base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.sendall(
        (
            f"GET /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n"
            f"Mcp-Session-Id: {session_id}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
        ).encode()
    )
    seen = b""
    while b"\n\n" not in seen.partition(b"\r\n\r\n")[2]:
        seen += sock.recv(1)
    event = seen.partition(b"\r\n\r\n")[2].decode()
    priming = next(line[4:] for line in event.splitlines() if line.startswith("id: "))
    return sock, priming


async def test_a_stream_not_read_is_detached_and_its_events_resume() -> None:
    server = Server("stuck", "1.0", capabilities={"logging": {}}, send_timeout=0.2)
    app = StreamableHTTPServer(
        server.serve,
        detach_stuck_after=0.5,
        event_store_factory=lambda: InMemoryEventStore(max_bytes=64 * 2**20),
    )
    async with serving(app) as base, httpx.AsyncClient(timeout=30) as http:
        url = f"{base}/mcp"
        session_id = await raw_initialize(http, url)
        sock, priming = await anyio.to_thread.run_sync(stuck_get, base, session_id)
        try:
            session = app.sessions[session_id]
            with anyio.fail_after(5):
                while session.standalone.consumer is None:
                    await anyio.sleep(0.01)
            for n in range(COUNT):
                params = types.LoggingMessageNotificationParams(
                    level="info", data={"n": n, "pad": "x" * SIZE}
                )
                with anyio.fail_after(5):  # never stalled by the client that does not read
                    await server.broadcast(methods.NOTIFICATIONS_MESSAGE, params)
            with anyio.fail_after(10):
                while session.standalone.consumer is not None:
                    await anyio.sleep(0.05)
            assert len(session.standalone.queue) <= BACKLOG
        finally:
            sock.close()
        # Everything the stuck client missed is replayed from the store, once, in order.
        got: list[Any] = []
        headers = {**session_headers(session_id), "last-event-id": priming}
        async with http.stream("GET", url, headers=headers) as response:
            assert response.status_code == 200
            with anyio.move_on_after(5):
                async for line in response.aiter_lines():
                    if line.startswith("data: ") and line != "data: ":
                        got.append(json.loads(line[6:])["params"]["data"]["n"])
                        if len(got) == COUNT:
                            break
    assert got == list(range(COUNT))
