"""Tools as tasks between our client and our server, over stdio (a subprocess) and a real uvicorn:
create, poll, result, cancel, progress, input_required, and the spec's answers to bad input."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcpbind.generated.support import MethodSpec
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, McpError, RequestContext, StdioParameters
from mcpbind.runtime.http import serving, streamable_http_client
from mcpbind.runtime.tasks import TaskHandle
from tasks_server import build_app

pytestmark = pytest.mark.anyio

SERVER = str(Path(__file__).with_name("tasks_server.py"))
RELATED = "io.modelcontextprotocol/related-task"
Connect = Callable[[], AbstractAsyncContextManager[Client]]


def with_handlers(client: Client, asked: list[dict[str, Any]]) -> Client:
    """The client's elicitation (answers ``Ada``) and sampling handlers, noting the requests'
    ``_meta``; sampling may be task-augmented (``enable_tasks``)."""

    @client.handler(methods.ELICITATION_CREATE)
    async def elicit(params: Any, context: RequestContext) -> types.ElicitResult:
        asked.append(params.model_dump(by_alias=True, exclude_none=True).get("_meta", {}))
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    @client.handler(methods.SAMPLING_CREATEMESSAGE)
    async def sample(params: Any, context: RequestContext) -> types.CreateMessageResult:
        await anyio.sleep(0.05)
        return types.CreateMessageResult(
            role="assistant", model="m", content=types.TextContent(text="sampled")
        )

    client.enable_tasks()
    return client


@pytest.fixture(params=["stdio", "http"])
async def connect(request: pytest.FixtureRequest) -> AsyncIterator[Connect]:
    if request.param == "stdio":

        def by_stdio() -> AbstractAsyncContextManager[Client]:
            return Client(StdioParameters(sys.executable, [SERVER], stderr="devnull"))

        yield by_stdio
        return
    async with serving(build_app().http_app()) as url:

        def by_http() -> AbstractAsyncContextManager[Client]:
            return Client(streamable_http_client(f"{url}/mcp"))

        yield by_http


async def test_a_tool_runs_as_a_task(connect: Connect) -> None:
    async with connect() as client:
        caps = client.server_capabilities["tasks"]
        assert caps == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        listed = {tool.name: tool.execution for tool in await client.list_tools()}
        assert listed["slow"].taskSupport == "optional"
        assert listed["needs_task"].taskSupport == "required"
        assert listed["plain"] is None
        updates: list[tuple[float, str | None]] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            updates.append((value, message))

        handle: TaskHandle[Any] = await client.call_tool_as_task(
            "slow", {"seconds": 0.3}, ttl=60_000, progress=progress
        )
        assert handle.task["status"] == "working" and handle.task["ttl"] == 60_000
        assert (await handle.status())["status"] == "working"
        result = await handle.result(poll=True)
        assert isinstance(result, types.CallToolResult)
        assert result.structuredContent == {"result": "slept 0.3"}
        assert result.meta == {RELATED: {"taskId": handle.task_id}}
        assert updates == [(1.0, "started"), (2.0, "slept")]  # progress for the task's life
        done = await handle.status()
        assert done["status"] == "completed" and done["lastUpdatedAt"] >= done["createdAt"]
        again = await handle.result()  # fetched twice: the same result (tasks.md)
        assert again == result
        listed_tasks = await client.send_request(methods.TASKS_LIST, {})
        assert [t.taskId for t in listed_tasks.tasks] == [handle.task_id]
        # The same tool, called normally, is still a plain call.
        normal = await client.call_tool("slow", {"seconds": 0})
        assert normal.structuredContent == {"result": "slept 0.0"}


async def test_cancel_stops_the_task(connect: Connect) -> None:
    async with connect() as client:
        handle = await client.call_tool_as_task("slow", {"seconds": 30})
        cancelled = await handle.cancel()
        assert cancelled["status"] == "cancelled"
        assert (await handle.status())["status"] == "cancelled"
        with pytest.raises(McpError) as caught:
            await handle.result()
        assert caught.value.code == -32603 and "cancelled" in caught.value.message
        with pytest.raises(McpError) as again:
            await handle.cancel()
        assert again.value.code == -32602 and "terminal status 'cancelled'" in again.value.message


async def test_input_required_goes_through_the_clients_handler(connect: Connect) -> None:
    asked: list[dict[str, Any]] = []
    unentered = connect()  # handlers are registered before connecting
    assert isinstance(unentered, Client)
    with_handlers(unentered, asked)
    statuses: list[str] = []
    async with unentered as client:

        @client.notification_handler(methods.NOTIFICATIONS_TASKS_STATUS)
        async def on_status(params: Any, session: Any) -> None:
            statuses.append(params.status)

        handle = await client.call_tool_as_task("ask", {})
        result = await handle.result()
        assert result.structuredContent == {"result": "hello Ada"}
        assert asked[-1] == {RELATED: {"taskId": handle.task_id}}
        with anyio.fail_after(5):
            while "completed" not in statuses:
                await anyio.sleep(0.01)
        assert statuses == ["input_required", "working", "completed"]


async def test_the_client_runs_sampling_as_a_task(connect: Connect) -> None:
    client = connect()
    assert isinstance(client, Client)
    with_handlers(client, [])
    async with client:
        ours = client.capabilities_for(client.session.bindings)["tasks"]
        assert ours["requests"] == {
            "sampling": {"createMessage": {}},
            "elicitation": {"create": {}},
        }
        result = await client.call_tool("sample_task", {"prompt": "hi"})
        assert result.structuredContent == {"result": "working:sampled"}


async def test_bad_input_gets_the_specs_answers(connect: Connect) -> None:
    async with connect() as client:
        lookups: list[MethodSpec[Any, Any]] = [
            methods.TASKS_GET,
            methods.TASKS_RESULT,
            methods.TASKS_CANCEL,
        ]
        for method in lookups:
            with pytest.raises(McpError) as caught:
                await client.send_request(method, {"taskId": "no-such-task"})
            assert caught.value.code == -32602 and "not found" in caught.value.message
        with pytest.raises(McpError) as required:
            await client.call_tool("needs_task", {"text": "x"})
        assert required.value.code == -32601 and "requires task" in required.value.message
        with pytest.raises(McpError) as forbidden:
            await client.call_tool_as_task("plain", {"text": "x"})
        assert forbidden.value.code == -32601
        handle = await client.call_tool_as_task("needs_task", {"text": "x"})
        assert (await handle.result()).structuredContent == {"result": "X"}
        with pytest.raises(McpError) as late:
            await handle.cancel()  # cancel after completion
        assert late.value.code == -32602 and "'completed'" in late.value.message
        failed = await client.call_tool_as_task("fails", {})
        outcome = await failed.result()
        assert outcome.isError is True
        assert (await failed.status())["status"] == "failed"
        with pytest.raises(McpError) as cursor:
            await client.send_request(methods.TASKS_LIST, {"cursor": "bogus"})
        assert cursor.value.code == -32602


async def test_another_sessions_task_is_not_found(connect: Connect) -> None:
    async with connect() as first, connect() as second:
        handle = await first.call_tool_as_task("slow", {"seconds": 0.05})
        lookups: list[MethodSpec[Any, Any]] = [
            methods.TASKS_GET,
            methods.TASKS_RESULT,
            methods.TASKS_CANCEL,
        ]
        for method in lookups:
            with pytest.raises(McpError) as caught:
                await second.send_request(method, {"taskId": handle.task_id})
            assert caught.value.code == -32602
            assert caught.value.message == "Failed to retrieve task: Task not found"
            assert caught.value.data == {"taskId": handle.task_id}  # only what was sent
        assert (await second.send_request(methods.TASKS_LIST, {})).tasks == []
        assert (await handle.result()).structuredContent == {"result": "slept 0.05"}


async def test_an_expired_task_is_not_found(connect: Connect) -> None:
    async with connect() as client:
        handle = await client.call_tool_as_task("slow", {"seconds": 0}, ttl=50)
        assert handle.task["ttl"] == 50
        await anyio.sleep(0.2)
        with pytest.raises(McpError) as caught:
            await handle.status()
        assert caught.value.code == -32602
