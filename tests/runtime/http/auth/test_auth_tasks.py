"""Tasks behind a resource server are bound to the caller's identity (tasks.md "Task Isolation
and Access Control"): another session of the same subject and client sees the task, another
subject gets "not found" and an empty list."""

from __future__ import annotations

import anyio
import pytest
from auth_server_kit import protected
from mcpbind.generated.v2025_11_25 import methods
from mcpbind.runtime import Client, McpError
from mcpbind.runtime.app import App
from mcpbind.runtime.http import streamable_http_client
from mcpbind.runtime.tasks import ExtensionTaskHandle

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def tasks_app() -> App:
    app = App("tasks")

    @app.tool(task_support="optional")
    async def nap(seconds: float) -> str:
        await anyio.sleep(seconds)
        return "rested"

    return app


async def test_tasks_belong_to_the_authenticated_identity() -> None:
    app = tasks_app()
    async with protected(asgi=lambda rs: app.http_app(auth=rs)) as setup:

        def client(subject: str) -> Client:
            token = setup.authorization.mint(setup.url, "mcp:tools", subject=subject)
            return Client(streamable_http_client(setup.url, headers=setup.bearer(token)))

        async with client("alice") as alice, client("alice") as again, client("mallory") as other:
            handle = await alice.call_tool_as_task("nap", {"seconds": 0.2})
            seen = await again.send_request(methods.TASKS_GET, {"taskId": handle.task_id})
            assert seen.taskId == handle.task_id  # the same identity, another session
            for method in (methods.TASKS_GET, methods.TASKS_CANCEL):
                with pytest.raises(McpError) as caught:
                    await other.send_request(method, {"taskId": handle.task_id})
                assert caught.value.code == -32602
                assert caught.value.message == "Failed to retrieve task: Task not found"
            assert (await other.send_request(methods.TASKS_LIST, {})).tasks == []
            listed = await again.send_request(methods.TASKS_LIST, {})
            assert [task.taskId for task in listed.tasks] == [handle.task_id]
            result = await handle.result()
            assert result.structuredContent == {"result": "rested"}


async def test_extension_tasks_belong_to_the_authenticated_identity() -> None:
    """The same in the 2026-07-28 tasks extension: another token's subject gets -32602 for
    ``tasks/get``, ``tasks/update`` and ``tasks/cancel``, and the task runs on untouched."""
    app = tasks_app()
    async with protected(asgi=lambda rs: app.http_app(auth=rs)) as setup:

        def client(subject: str) -> Client:
            token = setup.authorization.mint(setup.url, "mcp:tools", subject=subject)
            target = streamable_http_client(setup.url, headers=setup.bearer(token))
            return Client(target, protocol_version="2026-07-28")

        async with client("alice") as alice, client("alice") as again, client("mallory") as other:
            handle = await alice.call_tool_as_task("nap", {"seconds": 0.2})
            assert isinstance(handle, ExtensionTaskHandle) and handle.task is not None
            same = ExtensionTaskHandle(again, handle.result_type, dict(handle.task))
            assert (await same.status())["taskId"] == handle.task_id
            foreign = ExtensionTaskHandle(other, handle.result_type, dict(handle.task))
            for call in (foreign.status(), foreign.update({"k": {}}), foreign.cancel()):
                with pytest.raises(McpError) as caught:
                    await call
                assert caught.value.code == -32602
                assert caught.value.message == "Failed to retrieve task: Task not found"
            result = await handle.result()
            assert result.structuredContent == {"result": "rested"}
