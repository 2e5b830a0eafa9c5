"""Saturated handlers over real stdio servers: the session keeps reading, cheap requests and
cancellations are served at once, excess requests are refused as busy, never stalled."""

from __future__ import annotations

from typing import Any

import anyio
import orjson
import pytest
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import RequestContext, Server, SessionOptions
from runtime_helpers import raw_client_of
from stdio_raw import RawServer, call, raw_example, raw_saturation
from test_stdio import rss_kib

pytestmark = pytest.mark.anyio

BUSY = -31503
PING = {"jsonrpc": "2.0", "id": "ping", "method": "ping"}


def cancel(request_id: int | str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "test"},
    }


def is_busy(reply: dict[str, Any]) -> bool:
    error = reply.get("error") or {}
    return bool(error.get("code") == BUSY and error.get("data") == {"reason": "busy"})


async def replies_until(server: RawServer, last_id: str) -> list[dict[str, Any]]:
    """Every message the server writes up to and including the answer to ``last_id``."""
    seen = []
    while True:
        reply = await server.message()
        seen.append(reply)
        if reply.get("id") == last_id:
            return seen


async def test_tools_list_is_answered_while_70_slow_calls_are_in_flight() -> None:
    async with await raw_example() as process:
        server = RawServer(process)
        await server.initialize()
        for i in range(70):
            await server.send_json(call(i, "slow", steps=1, delay=3600))
        await server.send_json({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
        seen = await replies_until(server, "list")
        assert [reply["id"] for reply in seen] == ["list"], "no slow call finished"
        assert seen[0]["result"]["tools"][0]["name"] == "echo"
        assert (await server.call(PING))["result"] == {}


async def test_ping_is_answered_with_20000_slow_calls_queued() -> None:
    count = 20_000
    pending = SessionOptions().max_pending_requests
    async with await raw_example() as process:
        server = RawServer(process)
        await server.initialize()
        before = rss_kib(process.pid)
        flood = b"".join(
            orjson.dumps(message) + b"\n"
            for message in [*(call(i, "slow", steps=1, delay=3600) for i in range(count)), PING]
        )
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.send, flood)
            seen = await replies_until(server, "ping")
        assert seen[-1]["result"] == {}
        refused = seen[:-1]
        # The first ``pending`` calls were admitted (running or queued); every later one was
        # answered at once, in order, as busy.
        assert [reply["id"] for reply in refused] == list(range(pending, count))
        assert all(is_busy(reply) for reply in refused)
        growth_mib = (rss_kib(process.pid) - before) / 1024
        print(f"RSS growth with {pending} slow calls pending: {growth_mib:.1f} MiB")
        assert growth_mib < 128, f"server grew by {growth_mib:.0f} MiB"


async def test_a_cancel_frees_the_place_of_a_queued_request() -> None:
    bounds = ("max_concurrent_handlers=2", "spare_handlers=0", "max_pending_requests=4")
    async with await raw_saturation(*bounds) as process:
        server = RawServer(process)
        await server.initialize()
        for i in range(1, 5):
            await server.send_json(call(i, "hang"))  # 1 and 2 run, 3 and 4 wait
        await server.send_json(call(5, "hang"))  # no room: busy
        await server.send_json(cancel(3))  # leaves the queue, unanswered
        await server.send_json(call(6, "hang"))  # takes its place
        await server.send_json(call(7, "hang"))  # full again: busy
        await server.send_json(PING)
        seen = await replies_until(server, "ping")
        assert [reply["id"] for reply in seen] == [5, 7, "ping"]
        assert is_busy(seen[0]) and is_busy(seen[1])
        assert "pending" in seen[0]["error"]["message"]
        # A running one cancelled frees its place at once (its slot once its task has ended).
        await server.send_json(cancel(1))
        await server.send_json(call(8, "hang"))  # admitted
        await server.send_json(call(9, "hang"))  # busy
        await server.send_json(PING)
        assert [reply["id"] for reply in await replies_until(server, "ping")] == [9, "ping"]


async def test_the_byte_budget_refuses_what_would_exceed_it() -> None:
    async with await raw_saturation("max_pending_bytes=3000") as process:
        server = RawServer(process)
        await server.initialize()
        big = "x" * 2000
        await server.send_json(call(1, "hang", text=big))  # alone: admitted
        await server.send_json(call(2, "hang", text=big))  # 4000 bytes would be too many
        await server.send_json(call(3, "hang"))  # small: fits
        await server.send_json(PING)
        seen = await replies_until(server, "ping")
        assert [reply["id"] for reply in seen] == [2, "ping"]
        assert is_busy(seen[0]) and "bytes" in seen[0]["error"]["message"]
        await server.send_json(cancel(1))
        await server.send_json(call(4, "hang", text=big))  # room again
        await server.send_json(PING)
        assert [reply["id"] for reply in await replies_until(server, "ping")] == ["ping"]


class Probe:
    def __init__(self) -> None:
        self.running = 0
        self.max_running = 0
        self.started: list[int | str] = []
        self.release = anyio.Event()


def probe_server(probe: Probe, options: SessionOptions) -> Server:
    server = Server("probe", options=options)

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        probe.started.append(context.request_id)
        probe.running += 1
        probe.max_running = max(probe.max_running, probe.running)
        try:
            await probe.release.wait()
        finally:
            probe.running -= 1
        return types.CallToolResult(content=[types.TextContent(text=params.name)])

    @server.handler(methods.TOOLS_LIST)
    async def list_tools(
        params: types.PaginatedRequestParams, context: RequestContext
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])

    return server


async def test_queued_requests_start_first_in_first_out_and_other_methods_skip_the_queue() -> None:
    probe = Probe()
    server = probe_server(probe, SessionOptions(max_concurrent_handlers=2, spare_handlers=1))
    async with raw_client_of(server) as peer:
        for i in range(1, 7):
            await peer.send(call(i, "block"))
        reply = await peer.request({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
        assert reply["result"] == {"tools": []}
        assert probe.started == [1, 2]
        probe.release.set()
        ids = {(await peer.receive())["id"] for _ in range(6)}
        assert ids == set(range(1, 7))
        assert probe.started == [1, 2, 3, 4, 5, 6] and probe.max_running == 2


async def test_the_byte_budget_holds_in_memory_too() -> None:
    probe = Probe()
    server = probe_server(probe, SessionOptions(max_pending_bytes=3000))
    async with raw_client_of(server) as peer:
        big = "x" * 2000
        await peer.send(call(1, "block", text=big))
        reply = await peer.request(call(2, "block", text=big))
        assert is_busy(reply) and "bytes" in reply["error"]["message"]
        probe.release.set()
        assert (await peer.receive())["id"] == 1


async def test_responses_to_our_own_requests_are_read_while_handlers_are_saturated() -> None:
    server = Server(
        "asks", options=SessionOptions(max_concurrent_handlers=1, max_pending_requests=2)
    )

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        roots = await context.peer.list_roots()  # answered by the peer, read by the session
        return types.CallToolResult(content=[types.TextContent(text=roots.roots[0].uri)])

    async with raw_client_of(server, None) as peer:
        initialize = {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"roots": {}},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
        assert "result" in await peer.request(initialize)
        await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await peer.send(call(1, "ask"))  # takes the only handler slot, then asks us
        await peer.send(call(2, "ask"))  # waits for the slot: the pending bound is reached
        asked = await peer.receive()
        assert asked["method"] == "roots/list"
        await peer.send(
            {"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [{"uri": "file:///a"}]}}
        )
        first = await peer.receive()
        assert first["id"] == 1 and first["result"]["content"][0]["text"] == "file:///a"
        asked = await peer.receive()  # 2 got the slot and asks in turn
        await peer.send(
            {"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [{"uri": "file:///b"}]}}
        )
        assert (await peer.receive())["id"] == 2
