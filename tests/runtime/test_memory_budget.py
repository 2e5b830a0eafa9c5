"""The memory budget's accounting: ``MemoryBudget`` itself, what a parsed value is charged, a
stdio line held as it is read, event stores, and the documented defaults.

The budget measured on real server processes: ``test_memory_budget_stdio.py``,
``test_memory_budget_http.py``, ``test_memory_budget_legacy_sse.py``; what uvicorn reads
ahead of the app: ``test_memory_budget_uvicorn.py``.
"""

from __future__ import annotations

import inspect
import os

import anyio
import orjson
import pytest
from budget_helpers import BUSY, MIB, REPO_ROOT
from mcpbind.runtime import DEFAULT_MEMORY_BUDGET, Malformed, MemoryBudget, process_budget
from mcpbind.runtime.core.budget import resident_size
from mcpbind.runtime.http import InMemoryEventStore
from mcpbind.runtime.transports._pipes import PipeReader
from mcpbind.runtime.transports.stdio import stdio_server

pytestmark = pytest.mark.anyio


def test_reserve_is_all_or_nothing_and_charge_goes_beyond() -> None:
    budget = MemoryBudget(100)
    assert budget.reserve(60) and budget.used == 60
    assert not budget.reserve(41) and budget.used == 60, "a refused reserve holds nothing"
    assert "60 of 100 bytes in use; 41 more" in budget.refusal(41)
    budget.charge(50)
    assert budget.used == 110 and budget.exceeded and budget.peak == 110
    budget.release(110)
    assert budget.used == 0 and not budget.exceeded and budget.peak == 110
    with pytest.raises(ValueError, match="number of bytes"):
        MemoryBudget(-1)


def test_resident_size_counts_what_a_parsed_value_takes() -> None:
    text = orjson.loads(b'{"a":"' + b"x" * 100_000 + b'"}')
    assert 100_000 < resident_size(text) < 101_000  # an ASCII string: about its JSON length
    emoji = orjson.loads(('{"a":"' + "x" * 100_000 + '\U0001f600"}').encode())
    assert resident_size(emoji) > 400_000  # one astral character: 4 bytes a character
    dense = b"[" + b"{}," * 30_000 + b"{}]"
    assert resident_size(orjson.loads(dense)) > 20 * len(dense)  # 64 bytes an empty object


async def test_a_stdio_line_is_held_as_it_streams_in_and_dropped_beyond_the_budget() -> None:
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    budget = MemoryBudget(300_000)
    reader = PipeReader(read_fd, 1 << 20, True, budget=budget)
    big = b"x" * 200_000  # held at twice that while read: more than the budget
    lines = [
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"a":"' + big + b'"}}',
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"a":"' + big + b'"}}',
        b'{"jsonrpc":"2.0","id":8,"result":{"a":"' + big + b'"}}',
        b'{"jsonrpc":"2.0","id":9,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"a":"' + big[:100_000] + b'"}}',
    ]

    def write() -> None:
        with os.fdopen(write_fd, "wb") as out:
            out.write(b"\n".join(lines) + b"\n")

    async with anyio.create_task_group() as tg:
        tg.start_soon(anyio.to_thread.run_sync, write)
        refused = (await reader.receive()).message
        assert isinstance(refused, Malformed) and refused.code == BUSY
        assert refused.request_id == 7 and "memory budget" in refused.reason
        assert budget.peak <= budget.limit, "dropped as it came, never held beyond"
        response = (await reader.receive()).message  # the notification was dropped unsaid
        assert response["id"] == 8 and budget.peak > budget.limit, "a response is never refused"
        assert (await reader.receive()).message["id"] == 9
        admitted = await reader.receive()
        assert admitted.message["id"] == 10 and admitted.size > 100_000  # its parsed size
    assert budget.used == 0, "what the reader held is given back as each line ends"
    reader.close()
    os.close(read_fd)


def test_the_documented_budget_defaults() -> None:
    assert DEFAULT_MEMORY_BUDGET == 256 * MIB
    assert process_budget().limit == DEFAULT_MEMORY_BUDGET  # nothing here changed it
    assert inspect.signature(stdio_server).parameters["max_message"].default == 16 * MIB
    page = (REPO_ROOT / "docs" / "security.md").read_text()
    for stated in (
        "together hold 256 MiB",
        "reads lines up to 16 MiB",
        "(`process_budget()`, 256 MiB",
    ):
        assert stated in page, stated


async def test_event_stores_hold_their_events_in_the_budget_and_give_way_first() -> None:
    budget = MemoryBudget(64 * 1024)
    first, second = InMemoryEventStore(budget=budget), InMemoryEventStore(budget=budget)
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x" * 1000}}
    kept = [await first.store_event("s", note) for _ in range(40)]
    assert budget.used == first.bytes > 40_000
    # The second store's events push the budget over: it drops its own oldest, never the
    # newest (an answer must still be recorded), so the total stays within the budget.
    for _ in range(60):
        await second.store_event("t", note)
    assert budget.used == first.bytes + second.bytes
    assert budget.used <= budget.limit
    assert len(second) < 60 and len(first) == 40
    assert await first.replay_events_after(kept[0]) is not None
    first.close()
    second.close()
    assert budget.used == 0
