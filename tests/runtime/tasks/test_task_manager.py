"""``TaskSupport`` on a plain ``Server`` (no app layer), in memory: the store's bound reaches the
requestor as an error, a handler's JSON-RPC error is what ``tasks/result`` answers, pages of
``tasks/list``, and a session of an older revision is served normally."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, McpError, RequestContext, Server
from mcpbind.runtime.tasks import InMemoryTaskStore, TaskSupport

pytestmark = pytest.mark.anyio


def build(store: InMemoryTaskStore, page_size: int = 50) -> Server:
    server = Server("plain")

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(params: types.CallToolRequestParams, context: Any) -> Any:
        if params.name == "refuse":
            raise McpError(-32042, "refused on purpose", {"why": "test"})
        await anyio.sleep(0)
        return types.CallToolResult(content=[types.TextContent(text=params.name)])

    tools = {"ok": "optional", "refuse": "required"}
    server.enable_tasks(TaskSupport(store, tools=tools, page_size=page_size))  # type: ignore[arg-type]
    return server


async def test_the_bound_is_a_clear_error() -> None:
    server = build(InMemoryTaskStore(max_tasks=2))
    async with Client(server.memory_transport()) as client:
        first = await client.call_tool_as_task("ok")
        await client.call_tool_as_task("ok")
        with pytest.raises(McpError) as caught:
            await client.call_tool_as_task("ok")
        assert caught.value.code == -32603 and "too many live tasks" in caught.value.message
        assert (await first.result()).content[0].text == "ok"


async def test_a_handlers_error_is_the_tasks_result() -> None:
    async with Client(build(InMemoryTaskStore()).memory_transport()) as client:
        handle = await client.call_tool_as_task("refuse")
        for _ in range(2):  # fetched twice: the same error
            with pytest.raises(McpError) as caught:
                await handle.result()
            assert (caught.value.code, caught.value.message) == (-32042, "refused on purpose")
            assert caught.value.data == {"why": "test"}
        status = await handle.status()
        assert status["status"] == "failed" and status["statusMessage"] == "refused on purpose"


async def test_tasks_list_pages() -> None:
    async with Client(build(InMemoryTaskStore(), page_size=2).memory_transport()) as client:
        made = [(await client.call_tool_as_task("ok")).task_id for _ in range(5)]
        listed = await client.list_all(methods.TASKS_LIST)
        assert [task.taskId for task in listed] == made
        first = await client.send_request(methods.TASKS_LIST, {})
        assert len(first.tasks) == 2 and first.nextCursor


async def test_an_older_revision_is_served_normally() -> None:
    server = build(InMemoryTaskStore())
    async with Client(server.memory_transport(), protocol_version="2025-06-18") as client:
        assert client.revision == "2025-06-18"
        assert "tasks" not in client.server_capabilities
        raw = await client.session.request_raw(
            client.session.bindings.methods["tools/call"],
            {"name": "ok", "task": {"ttl": 1000}},
        )
        assert raw["content"][0]["text"] == "ok"  # the task metadata was ignored


async def test_a_handler_context_reports_to_the_task() -> None:
    seen: list[str] = []
    server = Server("ctx")

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(params: types.CallToolRequestParams, context: RequestContext) -> Any:
        seen.append(type(context).__name__)
        return types.CallToolResult(content=[])

    server.enable_tasks(TaskSupport(tools=lambda name: "optional"))
    async with Client(server.memory_transport()) as client:
        await (await client.call_tool_as_task("any")).result()
    assert seen == ["TaskRequestContext"]
