"""The task form of a request sent to an endpoint that serves no tasks (``enable_tasks`` not
called, no task capability advertised for a handler of its own: ``test_task_form.py`` has that
case) is refused with -32601 before its handler runs, as a tool whose ``taskSupport`` forbids
it is (tasks.md, "Tool-Level Negotiation"); before, the handler ran and its plain result failed
the task form's validation (-32603). Found by ``bench/fuzz.py``."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, RequestContext, Server, memory_pair
from mcpbind.runtime.app import App
from runtime_helpers import RawPeer, given, raw_client_of

pytestmark = pytest.mark.anyio

CALL = {"name": "echo", "arguments": {"text": "hi"}}


def plain_server(ran: list[str]) -> Server:
    server = Server("untasked")

    @server.handler(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, context: RequestContext) -> Any:
        ran.append(params.name)
        return types.CallToolResult(content=[types.TextContent(text="hi")])

    return server


async def test_a_server_without_tasks_refuses_a_task_augmented_call_unrun() -> None:
    ran: list[str] = []
    async with raw_client_of(plain_server(ran)) as peer:
        params = {**CALL, "task": {"ttl": 8_652_286_148}}
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        reply = await peer.request(message)
        assert reply["error"]["code"] == -32601, reply
        assert "not served as a task" in reply["error"]["message"]
        assert ran == []
        plain = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": CALL}
        reply = await peer.request(plain)
        assert reply["result"]["content"][0]["text"] == "hi"
        assert ran == ["echo"]


async def test_an_app_without_tasks_refuses_a_task_augmented_call() -> None:
    app = App("untasked-app")

    @app.tool()
    def echo(text: str) -> str:
        return text

    async with raw_client_of(app.server) as peer:
        params = {**CALL, "task": {}}
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        reply = await peer.request(message)
        assert reply["error"]["code"] == -32601, reply


async def test_a_client_without_tasks_refuses_a_task_augmented_sampling_request() -> None:
    asked: list[Any] = []
    async with memory_pair() as (near, far):
        peer = RawPeer(far)

        async def serve() -> None:
            request = await peer.receive()
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "serverInfo": {"name": "raw", "version": "0"},
                    },
                }
            )
            await peer.receive()  # notifications/initialized
            params = {"messages": [], "maxTokens": 1, "task": {}}
            message = {"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage"}
            answers.append(await peer.request({**message, "params": params}))

        answers: list[Any] = []
        client = Client(given(near))

        @client.handler(methods.SAMPLING_CREATEMESSAGE)
        async def sample(params: Any, context: RequestContext) -> types.CreateMessageResult:
            asked.append(params)
            return types.CreateMessageResult(
                role="assistant", content=types.TextContent(text="x"), model="m"
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            async with client:
                with anyio.fail_after(5):
                    while not answers:
                        await anyio.sleep(0.01)
    assert answers[0]["error"]["code"] == -32601, answers
    assert asked == []
