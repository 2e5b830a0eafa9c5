"""Handlers started in the task that read their request (``runtime/_eager.py``): what a task per
request gave must still hold, over a real stdio pipe and in memory.

A handler that never waits is answered in the reading task; one that waits keeps that task and
a new one reads on. So: a handler's context variables never reach the next request; whatever a
handler binds to its task (a cancel scope, a lock) works across its waits; a waiting handler
never holds up the requests after it; a waiting handler can be cancelled by the peer.
"""

from __future__ import annotations

import contextvars
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, RequestContext, Server, StdioParameters, stdio_client

pytestmark = pytest.mark.anyio

SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("SEEN", default="unset")


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


def make_server() -> Server:
    server = Server("eager-test")
    gate = anyio.Event()
    lock = anyio.Lock()

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        name = params.name
        if name == "set":  # never waits: runs to its end in the reading task
            before = SEEN.get()
            SEEN.set("leaked")
            return text(before)
        if name == "get":
            return text(SEEN.get())
        if name == "scoped":  # waits inside a cancel scope and a lock, both bound to its task
            async with lock:
                with anyio.fail_after(5):
                    await anyio.sleep(0.01)
                    await anyio.sleep(0)
            return text(f"scoped {SEEN.get()}")
        if name == "wait":  # waits for a later request of the same session
            with anyio.fail_after(5):
                await gate.wait()
            return text("released")
        if name == "release":
            gate.set()
            return text("done")
        if name == "forever":
            await anyio.sleep_forever()
        raise AssertionError(name)

    return server


def call(name: str) -> types.CallToolRequestParams:
    return types.CallToolRequestParams(name=name)


async def first_text(client: Client[Any, Any, Any], name: str) -> str:
    result = await client.stub.call_tool(call(name))
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_a_handlers_context_variables_stay_its_own() -> None:
    async with Client(make_server().memory_transport()) as client:
        assert await first_text(client, "set") == "unset"
        assert await first_text(client, "set") == "unset"
        assert await first_text(client, "get") == "unset"
        assert await first_text(client, "scoped") == "scoped unset"


async def test_a_waiting_handler_keeps_its_cancel_scope_and_lock() -> None:
    async with Client(make_server().memory_transport()) as client:
        results: list[str] = []

        async def one() -> None:
            results.append(await first_text(client, "scoped"))

        async with anyio.create_task_group() as tg:
            for _ in range(10):
                tg.start_soon(one)
    assert results == ["scoped unset"] * 10


async def test_a_waiting_handler_does_not_hold_up_later_requests() -> None:
    async with Client(make_server().memory_transport()) as client:
        async with anyio.create_task_group() as tg:
            waited: list[str] = []

            async def wait() -> None:
                waited.append(await first_text(client, "wait"))

            tg.start_soon(wait)
            await anyio.sleep(0.05)
            assert waited == []
            assert await first_text(client, "release") == "done"
        assert waited == ["released"]
        assert await first_text(client, "get") == "unset"


async def test_a_waiting_handler_is_cancelled_when_its_caller_gives_up() -> None:
    server = make_server()
    async with Client(server.memory_transport()) as client:
        with anyio.move_on_after(0.1) as scope:
            await first_text(client, "forever")
        assert scope.cancelled_caught
        session = next(iter(server.sessions))
        with anyio.fail_after(5):  # the peer's cancellation ends the handler's task
            while session.handling:
                await anyio.sleep(0.01)
        assert await first_text(client, "set") == "unset"


async def test_over_stdio_quick_and_waiting_handlers_interleave(tmp_path: Path) -> None:
    script = tmp_path / "eager_server.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from test_eager_handlers import make_server\n"
        "make_server().run_stdio()\n"
    )
    params = StdioParameters(sys.executable, [str(script)])
    async with Client(stdio_client(params)) as client:
        async with anyio.create_task_group() as tg:
            waited: list[str] = []

            async def wait() -> None:
                waited.append(await first_text(client, "wait"))

            tg.start_soon(wait)
            for _ in range(20):
                assert await first_text(client, "set") == "unset"
            assert waited == []
            assert await first_text(client, "release") == "done"
        assert waited == ["released"]
