"""Broadcast never stalls (issue 10): a peer that stops reading is skipped after ``send_timeout``
for that message, counted and logged, while everyone else gets it and the caller goes on."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from mcpbind.generated.v2025_11_25 import methods
from mcpbind.runtime import Server, memory_pair
from mcpbind.runtime.eras.stateless import CLIENT_CAPABILITIES, PROTOCOL_VERSION
from runtime_helpers import RawPeer, raw_client_of

pytestmark = pytest.mark.anyio

TOOLS_CHANGED = "notifications/tools/list_changed"
INIT = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "stuck", "version": "0"},
    },
}


def make_server(timeout: float = 0.2) -> Server:
    return Server("fan-out", capabilities={"tools": {"listChanged": True}}, send_timeout=timeout)


@asynccontextmanager
async def stuck_peer(server: Server, stateless: bool = False) -> AsyncIterator[RawPeer]:
    """A session whose client stops reading once it is set up: streams without a buffer, so
    the server's next message waits for a reader that never comes."""
    async with memory_pair(0) as (near, far), anyio.create_task_group() as tg:
        tg.start_soon(server.serve, far)
        peer = RawPeer(near)
        if stateless:
            meta = {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}}
            params = {"_meta": meta, "notifications": {"toolsListChanged": True}}
            await peer.send(
                {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params}
            )
            assert (await peer.receive())["method"] == "notifications/subscriptions/acknowledged"
        else:
            assert "result" in await peer.request(INIT)
            await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield peer
        tg.cancel_scope.cancel()


async def operating(server: Server, count: int) -> None:
    """Wait until ``count`` sessions have taken ``notifications/initialized`` or a request."""
    with anyio.fail_after(5):
        while sum(s.peer.phase == "operating" for s in server.sessions) < count:
            await anyio.sleep(0)


async def test_a_stuck_session_is_skipped_and_the_others_get_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = make_server()
    async with (
        raw_client_of(server) as first,
        stuck_peer(server) as stuck,
        stuck_peer(server, stateless=True) as stuck_listener,
        raw_client_of(server) as last,
    ):
        await operating(server, 4)
        with caplog.at_level(logging.WARNING, logger="mcpbind.runtime"):
            sent = await server.broadcast(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)
        assert sent == 2
        assert (server.delivery.sent, server.delivery.skipped) == (2, 2)
        # Both healthy peers had it by the time the call returned: it is already queued.
        for peer in (first, last):
            assert peer.connection.incoming.receive_nowait().message["method"] == TOOLS_CHANGED
        assert "2 recipient(s) still full" in caplog.text

        # The next message is not held up by the stuck ones either.
        assert await server.notify_tools_changed() == 2
        assert server.delivery.skipped == 4
        for peer in (first, last):
            assert (await peer.receive())["method"] == TOOLS_CHANGED
        # A skipped message is dropped, not delivered late when the peer reads again.
        assert await stuck.nothing_within(0.05)
        assert await stuck_listener.nothing_within(0.05)


async def test_a_slow_reader_within_the_timeout_still_gets_it() -> None:
    server = make_server(timeout=30)
    async with stuck_peer(server) as slow, raw_client_of(server) as quick:
        await operating(server, 2)
        got: list[str] = []

        async def read_later() -> None:
            await anyio.sleep(0.05)
            got.append((await slow.receive())["method"])

        async with anyio.create_task_group() as tg:
            tg.start_soon(read_later)
            assert await server.notify_tools_changed() == 2
        assert got == [TOOLS_CHANGED]
        assert (await quick.receive())["method"] == TOOLS_CHANGED
        assert server.delivery.skipped == 0


async def test_sessions_that_ended_are_counted_as_closed_not_errors() -> None:
    server = make_server()
    async with raw_client_of(server) as peer:
        await operating(server, 1)
        (session,) = server.sessions
        session.close("gone")
        await session.wait_closed()
        assert await server.notify_tools_changed() == 0
        assert await peer.nothing_within(0.01)
