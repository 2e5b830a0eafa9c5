"""How a session hands a request's answer to its transport (``core/_receiving.py``): to the
sink at once when it takes it, else awaited, and dropped quietly once the sink is closed; one
answer per request either way, whether the handler waited or not."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import RequestContext, Server
from mcpbind.runtime.core.revisions import ASSUME_INITIALIZED
from mcpbind.runtime.core.transport import Connection, Envelope

pytestmark = pytest.mark.anyio


class Sink:
    """An outgoing sink that is full for the first ``full`` answers (``send`` then waits a
    turn), or closed."""

    def __init__(self, full: int = 0, closed: bool = False) -> None:
        self.full = full
        self.closed = closed
        self.sent: list[Any] = []
        self.waited = 0

    def send_nowait(self, item: Envelope, /) -> None:
        if self.closed:
            raise anyio.ClosedResourceError
        if self.full:
            self.full -= 1
            raise anyio.WouldBlock
        self.sent.append(item.message)

    async def send(self, item: Envelope, /) -> None:
        self.waited += 1
        await anyio.sleep(0)
        if self.closed:
            raise anyio.ClosedResourceError
        self.sent.append(item.message)

    def close(self) -> None:
        pass


def make_server(ran: list[str]) -> Server:
    server = Server("answers-test")

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        ran.append(params.name)
        if params.name == "wait":
            await anyio.sleep(0.01)
        return types.CallToolResult(content=[types.TextContent(text=params.name)])

    return server


def request(request_id: int, name: str) -> Envelope:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name},
    }
    return Envelope(message, request=True)


async def serve(sink: Sink, names: list[str]) -> list[str]:
    """Serve one request per name on a session over ``sink``; the handlers that ran."""
    ran: list[str] = []
    send, receive = anyio.create_memory_object_stream[Envelope](16)
    connection = Connection(receive, sink, extra={ASSUME_INITIALIZED: "2025-11-25"})
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(make_server(ran).serve, connection)
            for number, name in enumerate(names, 1):
                await send.send(request(number, name))
            while len(ran) < len(names) or len(sink.sent) < (0 if sink.closed else len(names)):
                await anyio.sleep(0.005)
            await send.aclose()
    return ran


def answered(sink: Sink) -> list[tuple[Any, str]]:
    return sorted((m["id"], m["result"]["content"][0]["text"]) for m in sink.sent)


async def test_answers_a_full_sink_takes_later_are_awaited_once() -> None:
    sink = Sink(full=2)
    await serve(sink, ["quick", "wait", "after"])
    assert answered(sink) == [(1, "quick"), (2, "wait"), (3, "after")]
    assert sink.waited == 2  # the two the full sink refused at once, each sent once after


async def test_answers_to_a_closed_sink_are_dropped_and_reading_goes_on() -> None:
    sink = Sink(closed=True)
    ran = await serve(sink, ["quick", "wait", "after"])
    assert ran == ["quick", "wait", "after"]  # no answer failed the session's reading
    assert sink.sent == []
