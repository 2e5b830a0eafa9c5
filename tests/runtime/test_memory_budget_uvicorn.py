"""What uvicorn reads of a request body ahead of the app, held in the memory budget: read ahead
only with room in it, dropped once a body is answered unread, and a pipelined request's body
kept when an earlier answer completes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import Any

import anyio
import httpx
import pytest
from budget_helpers import MIB
from mcpbind.runtime import MemoryBudget
from mcpbind.runtime.core.budget import REQUEST_BYTES
from mcpbind.runtime.transports.http.uvicorn import _READ_AHEAD, serving
from starlette.types import Receive, Scope, Send

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("http_impl", ["httptools", "h11"])
@pytest.mark.parametrize("room", [True, False])
async def test_uvicorn_reads_a_body_ahead_only_with_room_in_the_budget(
    room: bool, http_impl: str
) -> None:
    budget = MemoryBudget(8 * MIB)
    if not room:
        assert budget.reserve(budget.limit)  # every byte held elsewhere
    spent = budget.used
    go = anyio.Event()
    waiting = anyio.Event()
    read: list[int] = []
    ahead: list[int] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        waiting.set()
        await go.wait()  # the body streams in meanwhile, read ahead or left in the kernel
        cycle = getattr(receive, "__self__")  # noqa: B009 - uvicorn's request cycle
        ahead.append(len(cycle.body))  # what it buffered of the body
        more = True
        while more:
            message = await receive()
            read.append(len(message.get("body", b"")))
            more = message.get("more_body", False)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"%d" % sum(read)})

    size = 2 * MIB
    async with (
        serving(app, memory_budget=budget, http=http_impl) as base,
        httpx.AsyncClient(timeout=30) as http,
    ):

        async def slow_body() -> AsyncIterator[bytes]:
            yield b"a" * 1024  # with the head, most likely
            await anyio.sleep(0.1)  # the rest once the head is in
            yield b"b" * (size - 1024)

        async def post() -> httpx.Response:
            return await http.post(
                f"{base}/", content=slow_body(), headers={"content-length": str(size)}
            )

        async with anyio.create_task_group() as tg:
            answer: list[httpx.Response] = []
            tg.start_soon(lambda: _append(answer, post()))
            await waiting.wait()
            await anyio.sleep(0.3)
            # With room, what uvicorn may read ahead is held; without, it reads no more of the
            # body until the app asks for it, and what came with the head is held (charged).
            # The open request's own objects are held either way (charged: ``REQUEST_BYTES``).
            if room:
                assert budget.used == spent + REQUEST_BYTES + _READ_AHEAD, budget
            else:
                assert spent + REQUEST_BYTES <= budget.used <= spent + REQUEST_BYTES + 1024
            go.set()
        assert answer[0].status_code == 200 and answer[0].text == str(size)
        if room:  # uvicorn read on to its high-water mark (64 KiB)
            assert 64 * 1024 < ahead[0] <= _READ_AHEAD, ahead
        else:  # paused at the head: what came with it at most
            assert ahead[0] <= 1024, ahead
        assert budget.used == spent, "given back once the body has all come"


async def _append(into: list[httpx.Response], response: Awaitable[httpx.Response]) -> None:
    into.append(await response)


@pytest.mark.parametrize("http_impl", ["httptools", "h11"])
async def test_uvicorn_drops_what_it_read_of_a_body_answered_unread(http_impl: str) -> None:
    # A POST refused unread (503 busy) left what uvicorn had read of its body in the request
    # cycle until the connection's next request, after the budget had given it back: about
    # 100 KiB a refused 3 MiB POST, 10 MiB over the 100 of test_memory_budget_http.py.
    budget = MemoryBudget(8 * MIB)
    cycles: list[Any] = []
    buffered: list[int] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        cycle = getattr(receive, "__self__")  # noqa: B009 - uvicorn's request cycle
        cycles.append(cycle)
        with anyio.fail_after(10):
            while not cycle.body:  # read ahead of the app meanwhile
                await anyio.sleep(0.01)
        buffered.append(len(cycle.body))
        assert budget.used >= REQUEST_BYTES, budget  # the open request is held
        await send({"type": "http.response.start", "status": 503, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async with (
        serving(app, memory_budget=budget, http=http_impl) as base,
        httpx.AsyncClient(timeout=30) as http,
    ):
        response = await http.post(f"{base}/", content=b"a" * (2 * MIB))
        assert response.status_code == 503
        assert buffered[0] > 0
        assert len(cycles[0].body) == 0, "dropped once answered"
        assert budget.used == 0, "the request and its read-ahead given back"


@pytest.mark.parametrize("http_impl", ["httptools", "h11"])
async def test_uvicorn_keeps_a_pipelined_body_when_an_earlier_answer_completes(
    http_impl: str,
) -> None:
    # httptools makes a pipelined request's cycle the protocol's before the earlier response
    # completes: the body dropped then is the earlier request's, never the one waiting.
    budget = MemoryBudget(8 * MIB)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/first":
            await anyio.sleep(0.2)  # the second request has all come meanwhile
            body = b""
        else:
            body = (await receive())["body"]
        headers = [(b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    request = b"POST /%s HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n%s"
    async with serving(app, memory_budget=budget, http=http_impl) as base:
        host, port = base.removeprefix("http://").split(":")
        async with await anyio.connect_tcp(host, int(port)) as stream:
            await stream.send(
                request % (b"first", 5, b"first") + request % (b"second", 5, b"hello")
            )
            answer = b""
            with anyio.fail_after(10):
                while not answer.endswith(b"hello"):
                    answer += await stream.receive()
        assert answer.count(b"HTTP/1.1 200") == 2
    assert budget.used == 0
