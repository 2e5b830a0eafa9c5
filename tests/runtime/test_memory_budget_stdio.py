"""The memory budget over a stdio server process (``budget_server.py``), measured: 100 calls of
3 MiB held within a 32 MiB budget, cancelled and refused calls giving their bytes back, a line
beyond the budget refused as it streams in, and the 16 MiB line limit (``budget_helpers.py``
says how the bound is measured).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from anyio.abc import Process
from budget_helpers import (
    BUDGET_MIB,
    CALLS,
    MIB,
    MIN_HELD,
    PING,
    SIZE,
    TAIL,
    big_call,
    call_head,
    is_busy,
    rss_mib,
    server_process,
    small_call,
    tool_text,
    within_budget,
)
from stdio_raw import RawServer

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def stdio_session(budget_mib: int = BUDGET_MIB) -> AsyncIterator[tuple[Process, RawServer]]:
    """A budget server on stdio, its session initialized."""
    async with server_process("stdio", budget_mib) as (process, _):
        server = RawServer(process)
        await server.initialize()
        yield process, server


async def warm(server: RawServer) -> None:
    """The call the base is measured after: one of the same shape, served and released."""
    await server.send(b"".join(big_call("warm", "budget")) + b"\n")
    assert "used" in tool_text(await server.message(30))


async def budget_used(server: RawServer) -> int:
    """The bytes the server's budget holds, asked by a small call (held itself meanwhile)."""
    answer = await server.call(small_call("b", "budget"))
    return int(json.loads(tool_text(answer))["used"])


async def test_stdio_100_calls_of_3_mib_stay_within_the_budget() -> None:
    async with stdio_session() as (process, server):
        await warm(server)
        base = rss_mib(process.pid)
        for n in range(CALLS):
            await server.send(b"".join(big_call(n)) + b"\n")
        await server.send_json(PING)
        refused = []
        while (message := await server.message(30))["id"] != "ping":
            refused.append(message)
        assert message["result"] == {}, "ping answered while calls are held"
        assert all(is_busy(m) for m in refused), refused[:1]
        held = CALLS - len(refused)
        assert MIN_HELD <= held <= BUDGET_MIB * MIB // SIZE, held
        assert [m["id"] for m in refused] == list(range(held, CALLS)), "in order, at once"
        # 100 calls would hold 300 MiB; the line being read is held in the budget too.
        within_budget(process.pid, base, f"stdio, {held} calls held")
        # Released, the held calls answer, the budget is empty, and a big call is served.
        assert tool_text(await server.call(small_call("r", "release"))) == "released"
        answered = [await server.message() for _ in range(held)]
        assert sorted(m["id"] for m in answered) == list(range(held))
        assert {tool_text(m) for m in answered} == {f"held {SIZE}"}
        used = json.loads(tool_text(await server.call(small_call("b", "budget"))))
        assert used["used"] < 1024, used  # the asking call's own bytes
        await server.send(b"".join(big_call("again", "budget")) + b"\n")
        assert "used" in tool_text(await server.message())


async def test_cancelled_and_refused_calls_give_their_bytes_back() -> None:
    async with stdio_session() as (_, server):
        for n in range(15):  # some held, the rest refused
            await server.send(b"".join(big_call(n)) + b"\n")
        await server.send_json(PING)
        refused = []
        while (message := await server.message(30))["id"] != "ping":
            refused.append(message)
        assert refused and all(is_busy(m) for m in refused)
        held = 15 - len(refused)
        assert await budget_used(server) >= held * SIZE
        for n in range(held):
            cancel = {"requestId": n, "reason": "test"}
            await server.send_json(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
            )
        assert await budget_used(server) < 1024, (
            "cancelled calls hold nothing (the asking call is held)"
        )
        # Room for as many again, less one: with all of them back, what is left may be under
        # what the asking call's line is held at while read, and the question is refused busy.
        for n in range(held - 1):
            await server.send(b"".join(big_call(100 + n)) + b"\n")
        assert await budget_used(server) >= (held - 1) * SIZE


async def test_stdio_line_beyond_the_budget_is_refused_as_it_streams_in() -> None:
    async with stdio_session() as (process, server):
        await warm(server)
        for n in range(4):  # 12 MiB held of the 32
            await server.send(b"".join(big_call(n)) + b"\n")
        assert await budget_used(server) >= 4 * SIZE
        base = rss_mib(process.pid)  # with the 12 MiB held: 20 left
        # 15 MiB, within the line limit (16 MiB), but held at three times that while read: refused
        # once it no longer fits, its bytes dropped as they come, answered busy with its id.
        big = b"z" * (15 * MIB)
        await server.send(call_head("huge", "budget") + big + TAIL + b"\n")
        refused = await server.message(30)
        assert refused["id"] == "huge" and is_busy(refused), refused
        assert "memory budget" in refused["error"]["message"]
        # Never read whole: within what was left of the budget.
        within_budget(process.pid, base, "stdio, a huge line refused", BUDGET_MIB - 12)
        # A huge response (no method: it ends a request of ours) is never refused; dropped by
        # the session as unknown. A huge notification is dropped without an answer.
        response = b'{"jsonrpc":"2.0","id":"nobody","result":{"x":"' + big + b'"}}\n'
        await server.send(response)
        note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"x":"'
        await server.send(note + big + b'"}}\n')
        assert (await server.call(PING))["result"] == {}
        assert await budget_used(server) >= 4 * SIZE
        assert tool_text(await server.call(small_call("r", "release"))) == "released"
        assert sorted([(await server.message())["id"] for _ in range(4)]) == [0, 1, 2, 3]
        assert await budget_used(server) < 1024, "everything given back but the asking call"


async def test_stdio_line_over_16_mib_is_a_parse_error_and_the_session_goes_on() -> None:
    # A budget with room for a 16 MiB line read (three times its bytes): the line limit is
    # what stops this one.
    async with stdio_session(64) as (_, server):
        await server.send(call_head(1, "budget") + b"y" * (17 * MIB) + TAIL + b"\n")
        reply = await server.message(30)
        assert reply["id"] is None and reply["error"]["code"] == -32700, reply
        assert "larger than 16777216 bytes" in reply["error"]["message"] + str(
            reply["error"].get("data")
        )
        assert (await server.call(PING))["result"] == {}
        # A message under the limit is served.
        await server.send(call_head(2, "budget") + b"z" * (15 * MIB) + TAIL + b"\n")
        assert "used" in tool_text(await server.message(30))
