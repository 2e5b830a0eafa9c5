"""``notifications/tasks`` of the 2026-07-28 tasks extension: a client that names task ids in a
``subscriptions/listen`` filter (and the extension in that request) gets each status change of
its tasks on that stream; ``handle.watch()`` is that, on the requestor's side. Over Streamable
HTTP (a real uvicorn server) and stdio (a real subprocess), with ``tasks_server.py``'s tools.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcpbind.generated.names import META_CLIENT_CAPABILITIES
from mcpbind.generated.v2026_07_28 import methods, types
from mcpbind.runtime import Client, McpError, RequestContext, StdioParameters
from mcpbind.runtime.http import serving, streamable_http_client
from mcpbind.runtime.tasks import (
    TASKS_EXTENSION,
    ExtensionTaskHandle,
    InMemoryTaskStore,
    TaskRecord,
    TaskStatus,
)
from tasks_server import build_app

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

SERVER = str(Path(__file__).with_name("tasks_server.py"))
MODERN = "2026-07-28"
Connect = Callable[[], AbstractAsyncContextManager[Client]]


@pytest.fixture(params=["stdio", "http"])
async def connect(request: pytest.FixtureRequest) -> AsyncIterator[Connect]:
    if request.param == "stdio":

        def by_stdio() -> AbstractAsyncContextManager[Client]:
            params = StdioParameters(sys.executable, [SERVER], stderr="devnull")
            return Client(params, protocol_version=MODERN)

        yield by_stdio
        return
    async with serving(build_app().http_app()) as url:

        def by_http() -> AbstractAsyncContextManager[Client]:
            return Client(streamable_http_client(f"{url}/mcp"), protocol_version=MODERN)

        yield by_http


async def handle_of(client: Client, name: str, arguments: dict[str, Any]) -> ExtensionTaskHandle:
    handle = await client.call_tool_as_task(name, arguments)
    assert isinstance(handle, ExtensionTaskHandle) and handle.task is not None
    return handle


def opted_in(client: Client) -> dict[str, Any]:
    """The ``_meta`` of a request whose capabilities name the extension."""
    meta = dict(client.lifecycle.meta(client, client.session.bindings))  # type: ignore[attr-defined]
    capabilities = dict(meta[META_CLIENT_CAPABILITIES])
    capabilities["extensions"] = {TASKS_EXTENSION: {}}
    return {META_CLIENT_CAPABILITIES: capabilities}


async def test_a_task_is_followed_by_its_notifications(connect: Connect) -> None:
    async with connect() as client:
        handle = await handle_of(client, "slow", {"seconds": 0.5})
        with anyio.fail_after(20):
            async with handle.watch() as states:
                seen = [state async for state in states]
        # The first state read once the stream is open, then the completion, announced.
        assert seen[0]["status"] == "working"
        assert seen[-1]["status"] == "completed"
        assert seen[-1]["result"]["structuredContent"] == {"result": "slept 0.5"}
        assert handle.task == seen[-1]


async def test_input_requests_and_answers_are_announced(connect: Connect) -> None:
    async with connect() as client:

        @client.handler(methods.ELICITATION_CREATE)  # declares the capability; not called here
        async def elicit(params: Any, context: RequestContext) -> types.ElicitResult:
            raise AssertionError("answered through tasks/update instead")

        handle = await handle_of(client, "ask", {})
        statuses: list[str] = []
        with anyio.fail_after(20):
            async with handle.watch() as states:
                async for state in states:
                    statuses.append(state["status"])
                    if state["status"] == "input_required":
                        [key] = state["inputRequests"]
                        await handle.update({key: {"action": "accept", "content": {"name": "Ada"}}})
        assert "input_required" in statuses
        # The answer moved it back to working, then it completed: both announced, in order.
        after = statuses[statuses.index("input_required") + 1 :]
        assert after == ["working", "completed"]
        assert handle.task is not None
        assert handle.task["result"]["structuredContent"] == {"result": "hello Ada"}


class SlowToWork(InMemoryTaskStore):
    """A store whose move to working takes a while, as a shared store's write does."""

    async def update(
        self, record: TaskRecord, status: TaskStatus, message: str | None = None
    ) -> bool:
        if status == "working":
            await anyio.sleep(0.3)
        return await super().update(record, status, message)


async def test_an_answer_is_announced_as_working_before_its_handler_goes_on() -> None:
    """The handler finishes at once once answered; the move back to working is written (and
    announced) before it wakes, so the listener hears working, then completed."""
    app = build_app()
    server = app.http_app()
    assert app.server.tasks is not None
    app.server.tasks.store = SlowToWork()
    async with (
        serving(server) as url,
        Client(streamable_http_client(f"{url}/mcp"), protocol_version=MODERN) as client,
    ):

        @client.handler(methods.ELICITATION_CREATE)
        async def elicit(params: Any, context: RequestContext) -> types.ElicitResult:
            raise AssertionError("answered through tasks/update instead")

        handle = await handle_of(client, "ask", {})
        statuses: list[str] = []
        with anyio.fail_after(20):
            async with handle.watch() as states:
                async for state in states:
                    statuses.append(state["status"])
                    if state["status"] == "input_required":
                        [key] = state["inputRequests"]
                        await handle.update({key: {"action": "accept", "content": {"name": "Ada"}}})
        after = statuses[statuses.index("input_required") + 1 :]
        assert after == ["working", "completed"]


async def test_a_cancel_is_announced_and_a_finished_task_needs_no_stream(
    connect: Connect,
) -> None:
    async with connect() as client:
        handle = await handle_of(client, "slow", {"seconds": 30})
        with anyio.fail_after(20):
            async with handle.watch() as states:
                async for state in states:
                    if state["status"] == "working":
                        await handle.cancel()
        assert handle.task is not None and handle.task["status"] == "cancelled"
        # Watching a terminal task: its state, read once, and the end.
        with anyio.fail_after(20):
            async with handle.watch() as states:
                assert [s["status"] async for s in states] == ["cancelled"]


async def test_bad_filters_get_the_specs_answers_and_foreign_ids_are_left_out(
    connect: Connect,
) -> None:
    async with connect() as client:
        handle = await handle_of(client, "slow", {"seconds": 30})
        assert handle.task_id is not None
        # The extension not named in the request: -32021, naming what is missing.
        with pytest.raises(McpError) as caught, anyio.fail_after(20):
            async with client.listen(task_ids=[handle.task_id]):
                pass
        assert caught.value.code == -32021
        assert caught.value.data == {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
        # Not a list of ids: -32602, before any stream opens.
        meta = {**client.lifecycle.meta(client, client.session.bindings), **opted_in(client)}  # type: ignore[attr-defined]
        listen = client.session.bindings.methods["subscriptions/listen"]
        for bad in ("one-id", [1, 2]):
            with pytest.raises(McpError) as refused, anyio.fail_after(20):
                await client.session.request_raw(
                    listen, {"notifications": {"taskIds": bad}, "_meta": meta}
                )
            assert refused.value.code == -32602 and "taskIds" in refused.value.message
        # Ids the server does not hold for this requestor are not acknowledged; the rest of
        # the filter is, and the stream works.
        with anyio.fail_after(20):
            async with client.listen(
                task_ids=["not-a-task", handle.task_id], tools_list_changed=True,
                meta=opted_in(client),
            ) as stream:  # fmt: skip
                assert stream.acknowledged["taskIds"] == [handle.task_id]
                assert stream.refused == ["taskIds:not-a-task"]
                assert stream.acknowledged.get("toolsListChanged") is True
                await handle.cancel()
                async for notification in stream:
                    assert notification.method == "notifications/tasks"
                    assert notification.params["taskId"] == handle.task_id
                    assert notification.params["status"] == "cancelled"
                    break
