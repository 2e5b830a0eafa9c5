"""The 2026-07-28 tasks extension end to end: our stateless-era client and our server, over
Streamable HTTP (a real uvicorn server) and stdio (a real subprocess), with the task tools of
``tasks_server.py`` (an ``App``, whose ``task_support`` is what the extension goes by).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcpbind.generated.v2025_11_25 import methods as v1_methods
from mcpbind.generated.v2026_07_28 import methods, types
from mcpbind.runtime import (
    CapabilityError,
    Client,
    McpError,
    RequestContext,
    Server,
    StdioParameters,
)
from mcpbind.runtime.http import StreamableHTTPServer, serving, streamable_http_client
from mcpbind.runtime.tasks import (
    TASKS_EXTENSION,
    ExtensionTaskHandle,
    InMemoryTaskStore,
    TaskHandle,
    TaskSupport,
)
from mcpbind.runtime.tasks._extension_client import SPECS
from tasks_server import build_app

pytestmark = pytest.mark.anyio

SERVER = str(Path(__file__).with_name("tasks_server.py"))
RELATED = "io.modelcontextprotocol/related-task"
MODERN = "2026-07-28"
Connect = Callable[[], AbstractAsyncContextManager[Client]]


def with_elicitation(client: Client, asked: list[str]) -> Client:
    """The client's elicitation handler: answers ``Ada``, noting each message."""

    @client.handler(methods.ELICITATION_CREATE)
    async def elicit(params: Any, context: RequestContext) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    return client


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
    assert isinstance(handle, ExtensionTaskHandle)
    return handle


async def test_a_tool_runs_as_a_task(connect: Connect) -> None:
    async with connect() as client:
        assert client.revision == MODERN
        capabilities = client.server_capabilities
        assert capabilities["extensions"][TASKS_EXTENSION] == {} and "tasks" not in capabilities
        handle = await handle_of(client, "slow", {"seconds": 0.3})
        task = handle.task
        assert task is not None and task["status"] == "working" and task["resultType"] == "task"
        assert type(task["ttlMs"]) is int and type(task["pollIntervalMs"]) is int
        assert "ttl" not in task and "pollInterval" not in task and "requestState" not in task
        assert (await handle.status())["status"] == "working"
        result = await handle.result()
        assert isinstance(result, types.CallToolResult)
        assert result.structuredContent == {"result": "slept 0.3"}
        assert RELATED not in (result.meta or {})  # the task id is at the root of tasks/get
        done = await handle.status()
        assert done["status"] == "completed" and done["result"]["structuredContent"]
        assert done["resultType"] == "complete"
        # The same tool called without the extension is an ordinary call.
        plain = await client.call_tool("slow", {"seconds": 0})
        assert plain.structuredContent == {"result": "slept 0.0"}


async def test_input_goes_through_the_clients_handler(connect: Connect) -> None:
    asked: list[str] = []
    async with connect() as client:
        with_elicitation(client, asked)
        handle = await handle_of(client, "ask", {})
        result = await handle.result()
        assert result.structuredContent == {"result": "hello Ada"}
        assert asked == ["Your name?"]


async def test_tool_errors_and_cancellation(connect: Connect) -> None:
    async with connect() as client:
        failing = await handle_of(client, "fails", {})
        outcome = await failing.result()
        assert outcome.isError is True  # completed with isError, not failed
        assert (await failing.status())["status"] == "completed"
        slow = await handle_of(client, "slow", {"seconds": 30})
        await slow.cancel()
        assert (await slow.status())["status"] == "cancelled"
        with pytest.raises(McpError) as caught:
            await slow.result()
        assert caught.value.code == -32603 and "cancelled" in caught.value.message
        await slow.cancel()  # cancel after the end: the same empty ack (idempotent)
        await failing.cancel()
        assert (await failing.status())["status"] == "completed"  # terminal stays terminal


async def test_a_required_tool_needs_the_extension(connect: Connect) -> None:
    async with connect() as client:
        with pytest.raises(McpError) as caught:
            await client.call_tool("needs_task", {"text": "x"})
        assert caught.value.code == -32021
        assert caught.value.data == {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
        handle = await handle_of(client, "needs_task", {"text": "x"})
        assert (await handle.result()).structuredContent == {"result": "X"}
        # A tool without task support is answered directly, through the same handle.
        direct = await handle_of(client, "plain", {"text": "y"})
        assert direct.task is None and direct.task_id is None
        assert (await direct.result()).structuredContent == {"result": "y"}


async def test_bad_input_gets_the_specs_answers(connect: Connect) -> None:
    async with connect() as client:
        session = client.session
        meta = dict(client.lifecycle.meta(client, session.bindings))  # type: ignore[attr-defined]
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):
            body = {"taskId": "nope", "inputResponses": {}, "_meta": meta}
            with pytest.raises(McpError) as gated:  # the extension not named in the request
                await session.request_raw(SPECS[method], body)
            assert gated.value.code == -32021, method
        unknown = ExtensionTaskHandle(client, types.CallToolResult, {"taskId": "no-such-task"})
        for call in (unknown.status(), unknown.cancel(), unknown.update({"k": {}})):
            with pytest.raises(McpError) as caught:
                await call
            assert caught.value.code == -32602 and caught.value.data == {"taskId": "no-such-task"}
        for removed in ("tasks/result", "tasks/list"):
            spec = v1_methods.TASKS_RESULT if removed == "tasks/result" else v1_methods.TASKS_LIST
            with pytest.raises(McpError) as gone:
                await session.request_raw(spec, {"taskId": "x", "_meta": meta})
            assert gone.value.code == -32601, removed
        # Answers to keys the task never asked for are acked and change nothing.
        handle = await handle_of(client, "slow", {"seconds": 30})
        await handle.update({"not-asked": {"action": "accept"}})
        assert (await handle.status())["status"] == "working"
        await handle.cancel()


def ttl_server(ttl_ms: int) -> Server:
    """A server whose tasks live ``ttl_ms``: one tool, ``quick``, optional task support."""
    server = Server("ttl", "1.0")
    store = InMemoryTaskStore(default_ttl=ttl_ms, max_ttl=ttl_ms, poll_interval=50)

    @server.handler(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, context: RequestContext) -> Any:
        return {"content": [{"type": "text", "text": "quick"}]}

    server.enable_tasks(TaskSupport(store, tools={"quick": "optional"}))
    return server


async def test_an_expired_task_is_not_found() -> None:
    server = ttl_server(600)
    async with (
        serving(StreamableHTTPServer(server.serve)) as url,
        Client(streamable_http_client(f"{url}/mcp"), protocol_version=MODERN) as client,
    ):
        handle = await handle_of(client, "quick", {})
        assert handle.task is not None and handle.task["ttlMs"] == 600
        assert (await handle.result()).content[0].text == "quick"  # type: ignore[union-attr]
        assert server.tasks is not None and len(server.tasks.extension) == 0  # nothing kept
        await anyio.sleep(0.7)
        with pytest.raises(McpError) as caught:
            await handle.status()
        assert caught.value.code == -32602


async def test_the_client_wants_the_servers_word_first() -> None:
    """No task form without the receiver's capability: a clear error, nothing sent."""
    server = Server("no-tasks", "1.0")

    @server.handler(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, context: RequestContext) -> Any:
        return {"content": [{"type": "text", "text": "ran"}]}

    async with serving(StreamableHTTPServer(server.serve)) as url:
        for revision in (MODERN, "2025-11-25"):
            target = streamable_http_client(f"{url}/mcp")
            async with Client(target, protocol_version=revision) as client:
                with pytest.raises(CapabilityError) as refused:
                    await client.call_tool_as_task("anything", {})
                assert "did not advertise" in str(refused.value), revision


async def test_handshake_era_tasks_outlive_their_post() -> None:
    """``StreamableHTTPServer(stateless=True)``: every 2025-11-25 POST has a session of its
    own, gone with its answer; the task's handler runs on, and a later POST finds it."""
    async with (
        serving(build_app().http_app(stateless=True)) as url,
        Client(streamable_http_client(f"{url}/mcp"), protocol_version="2025-11-25") as client,
    ):
        handle = await client.call_tool_as_task("slow", {"seconds": 0.3})
        assert isinstance(handle, TaskHandle)
        assert (await handle.status())["status"] == "working"
        result = await handle.result(poll=True)
        assert result.structuredContent == {"result": "slept 0.3"}
        assert (await handle.status())["status"] == "completed"
        long = await client.call_tool_as_task("slow", {"seconds": 30})
        assert isinstance(long, TaskHandle)
        assert (await long.cancel())["status"] == "cancelled"


async def test_a_client_receiving_tasks_still_calls_tools_plainly(connect: Connect) -> None:
    """``client.enable_tasks()`` (2025-11-25 tasks of its own) does not declare the extension
    for every request of the stateless era: a plain ``call_tool`` stays a plain call."""
    client = connect()
    assert isinstance(client, Client)
    with_elicitation(client, [])
    client.enable_tasks()
    async with client:
        result = await client.call_tool("slow", {"seconds": 0})
        assert result.structuredContent == {"result": "slept 0.0"}
        handle = await handle_of(client, "slow", {"seconds": 0})
        assert handle.task is not None  # the per-request opt-in still works
