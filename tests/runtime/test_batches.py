"""JSON-RPC batches: refused where the revision has none, else bounded and answered as one array."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from mcpbind.runtime import SessionOptions
from runtime_helpers import raw_client_of
from stdio_raw import RawServer, call, raw_example
from test_saturation import Probe, is_busy, probe_server

pytestmark = pytest.mark.anyio

PING: dict[str, Any] = {"jsonrpc": "2.0", "id": "p", "method": "ping"}
NOTE: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/whatever"}


def refused_whole(reply: Any) -> bool:
    """One error for the whole batch: -32600 with id null, not an array."""
    return type(reply) is dict and reply["id"] is None and reply["error"]["code"] == -32600


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25"])
async def test_a_batch_is_refused_whole_where_the_revision_has_none(revision: str) -> None:
    probe = Probe()
    async with raw_client_of(probe_server(probe, SessionOptions()), revision) as peer:
        await peer.send([PING, call(1, "block")])
        reply = await peer.receive()
        assert refused_whole(reply) and revision in reply["error"]["data"]
        assert await peer.nothing_within(0.2)
        assert probe.started == []


async def test_initialize_must_not_be_batched() -> None:
    async with raw_client_of(probe_server(Probe(), SessionOptions()), None) as peer:
        initialize = {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
        await peer.send([initialize])
        reply = await peer.receive()
        assert refused_whole(reply) and "initialization" in reply["error"]["data"]
        # Not initialised by it: the same request alone still works.
        assert (await peer.request(initialize))["result"]["protocolVersion"] == "2025-03-26"


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26"])
async def test_a_batch_is_answered_with_one_array(revision: str) -> None:
    probe = Probe()
    probe.release.set()
    async with raw_client_of(probe_server(probe, SessionOptions()), revision) as peer:
        await peer.send([PING, NOTE, call("b", "block"), 7, {"jsonrpc": "2.0", "id": "m"}])
        reply = await peer.receive()
        assert type(reply) is list
        by_id = {item["id"]: item for item in reply}
        assert set(by_id) == {"p", "b", None, "m"}
        assert by_id["p"]["result"] == {}
        assert by_id["b"]["result"]["content"][0]["text"] == "block"
        assert by_id[None]["error"]["code"] == -32600
        assert by_id["m"]["error"]["code"] == -32600
        # Notifications only: nothing at all. Empty: one error.
        await peer.send([NOTE, NOTE])
        assert await peer.nothing_within(0.2)
        await peer.send([])
        assert refused_whole(await peer.receive())


async def test_batch_members_count_against_the_bounds() -> None:
    probe = Probe()
    options = SessionOptions(max_concurrent_handlers=1, spare_handlers=0, max_pending_requests=4)
    async with raw_client_of(probe_server(probe, options), "2025-03-26") as peer:
        await peer.send(call(0, "block"))
        await peer.send([call(i, "block") for i in range(1, 5)])
        await peer.send(PING)
        assert (await peer.receive())["id"] == "p"  # read on while the batch waits
        assert probe.started == [0] and probe.max_running == 1
        probe.release.set()
        assert (await peer.receive())["id"] == 0
        reply = await peer.receive()
        by_id = {item["id"]: item for item in reply}
        assert set(by_id) == {1, 2, 3, 4}
        assert is_busy(by_id[4])  # no room left for the fourth member
        assert all(by_id[i]["result"]["content"][0]["text"] == "block" for i in (1, 2, 3))
        assert probe.started == [0, 1, 2, 3] and probe.max_running == 1


async def test_a_batch_larger_than_the_pending_bound_is_refused_whole() -> None:
    probe = Probe()
    options = SessionOptions(max_pending_requests=3)
    async with raw_client_of(probe_server(probe, options), "2025-03-26") as peer:
        await peer.send([call(i, "block") for i in range(4)])
        reply = await peer.receive()
        assert refused_whole(reply) and "at most 3" in reply["error"]["data"]
        assert probe.started == []


async def test_a_cancelled_member_is_left_out_of_the_array() -> None:
    probe = Probe()
    async with raw_client_of(probe_server(probe, SessionOptions()), "2025-03-26") as peer:
        await peer.send([call(1, "block"), call(2, "block")])
        while len(probe.started) < 2:
            await anyio.sleep(0.01)
        await peer.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        )
        await peer.send(PING)
        assert (await peer.receive())["id"] == "p"
        probe.release.set()
        reply = await peer.receive()
        assert [item["id"] for item in reply] == [2]
        # Every member cancelled: no array at all.
        probe.release = anyio.Event()
        await peer.send([call(3, "block")])
        await peer.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}
        )
        assert await peer.nothing_within(0.2)


@pytest.mark.parametrize(("revision", "array"), [("2025-03-26", True), ("2025-06-18", False)])
async def test_a_batch_over_stdio(revision: str, array: bool) -> None:
    async with await raw_example() as process:
        server = RawServer(process)
        await server.initialize(revision)
        batch = [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            call(2, "echo", text="x"),
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
        ]
        await server.send(orjson.dumps(batch) + b"\n")
        reply = await server.message()
        if array:
            assert sorted(item["id"] for item in reply) == [1, 2, 3]
            assert all("result" in item for item in reply)
        else:
            assert refused_whole(reply)
        # One line answered the whole batch: the next line answers the next request.
        assert (await server.call({"jsonrpc": "2.0", "id": "after", "method": "ping"}))[
            "id"
        ] == "after"


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.mark.parametrize("revision", ["2025-03-26", "2025-06-18"])
async def test_a_huge_batch_line_is_refused_in_bounded_memory(revision: str) -> None:
    """Issue 10: 200,000 slow calls in one 24 MB line took the server to 798 MB. (That line
    is now over the stdio server's 16 MiB line limit: 120,000 calls, 14 MB, stay under it.)"""
    async with await raw_example() as process:
        server = RawServer(process)
        await server.initialize(revision)
        before = peak_rss_kib(process.pid)
        batch = [call(i, "slow", steps=1, delay=3600) for i in range(120_000)]
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.send, orjson.dumps(batch) + b"\n")
            reply = await server.message(timeout=60)
        assert refused_whole(reply), reply
        assert (await server.call({"jsonrpc": "2.0", "id": "after", "method": "ping"}))[
            "result"
        ] == {}
        growth_mib = (peak_rss_kib(process.pid) - before) / 1024
        print(
            f"peak RSS growth for a {len(orjson.dumps(batch)) >> 20} MiB batch: {growth_mib:.0f} MiB"
        )
        assert growth_mib < 256, f"the server's peak RSS grew by {growth_mib:.0f} MiB"
