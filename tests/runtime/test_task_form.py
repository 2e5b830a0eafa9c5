"""The task form of a request (2025-11-25): params carrying ``task`` are answered with a
``CreateTaskResult``, and the runtime validates the answer as that, on both sides.

Against the TypeScript reference server (its ``simulate-research-query`` tool has
``execution.taskSupport: "required"``), then against our own server over the in-memory transport.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import (
    Client,
    InvalidResultError,
    RequestContext,
    Server,
    StdioParameters,
    stdio_client,
)
from runtime_helpers import raw_client_of
from test_everything import everything

__all__ = ["everything"]

pytestmark = pytest.mark.anyio

TASK_TOOL = "simulate-research-query"
TASKS_CAPABILITY = {"tasks": {"requests": {"tools": {"call": {}}}}}


async def test_tool_as_task_against_server_everything(everything: Path) -> None:
    client = Client(
        stdio_client(StdioParameters("node", [str(everything), "stdio"], stderr="devnull"))
    )
    async with client:
        assert "call" in client.server_capabilities["tasks"]["requests"]["tools"]
        support = {
            tool.name: tool.execution.taskSupport if tool.execution else None
            for tool in await client.list_all(methods.TOOLS_LIST)
        }
        assert support[TASK_TOOL] == "required" and support["echo"] == "forbidden"
        created = await client.stub.call_tool_as_task(
            types.CallToolRequestParams(
                name=TASK_TOOL, arguments={"topic": "tides"}, task=types.TaskMetadata(ttl=60000)
            )
        )
        assert isinstance(created, types.CreateTaskResult)
        task_id = created.task.taskId
        assert task_id and created.task.status in ("working", "completed")
        status = await client.stub.get_task(types.GetTaskRequestParams(taskId=task_id))
        assert status.taskId == task_id
        # tasks/result blocks until the task is terminal, then gives the tool's own result.
        payload = await client.stub.get_task_payload(
            types.GetTaskPayloadRequestParams(taskId=task_id)
        )
        result = types.CallToolResult.model_validate(payload.model_dump(by_alias=True))
        text = result.content[0]
        assert isinstance(text, types.TextContent) and "tides" in text.text
        done = await client.stub.get_task(types.GetTaskRequestParams(taskId=task_id))
        assert done.status == "completed"
        # The plain form still validates as CallToolResult.
        echo = await client.stub.call_tool(
            types.CallToolRequestParams(name="echo", arguments={"message": "hi"})
        )
        assert isinstance(echo, types.CallToolResult)


def _task(task_id: str) -> dict[str, Any]:
    return {
        "taskId": task_id,
        "status": "working",
        "createdAt": "2025-11-25T00:00:00Z",
        "lastUpdatedAt": "2025-11-25T00:00:00Z",
        "ttl": 60000,
        "pollInterval": 500,
    }


def task_server() -> Server:
    """A tools/call handler that answers a task-augmented call as a task, in the form the
    tool's name asks: a model, a plain dict, or (wrongly) the plain result."""
    server = Server("tasks", capabilities=TASKS_CAPABILITY)

    @server.handler(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, context: RequestContext) -> Any:
        if params.name == "model" and params.task is not None:
            return types.CreateTaskResult(task=types.Task.model_validate(_task("t-model")))
        if params.name == "dict":
            return {"task": _task("t-dict")}
        if params.name == "plain-model":
            return types.CallToolResult(content=[types.TextContent(text="not a task")])
        return {"content": [{"type": "text", "text": "plain"}]}

    return server


async def test_our_server_answers_the_task_form_and_our_client_reads_it() -> None:
    server = task_server()
    async with Client(server.memory_transport(), protocol_version="2025-11-25") as client:
        assert client.server_capabilities["tasks"] == TASKS_CAPABILITY["tasks"]
        for name in ("model", "dict"):
            created = await client.stub.call_tool_as_task(
                types.CallToolRequestParams(name=name, task=types.TaskMetadata(ttl=60000))
            )
            assert isinstance(created, types.CreateTaskResult)
            assert created.task.taskId == f"t-{name}" and created.task.pollInterval == 500
        plain = await client.stub.call_tool(types.CallToolRequestParams(name="plain"))
        assert isinstance(plain, types.CallToolResult)
        # A task-form request answered with the plain result is refused by the sender.
        with pytest.raises(InvalidResultError, match="tools/call"):
            await client.stub.call_tool_as_task(
                types.CallToolRequestParams(name="plain-model", task=types.TaskMetadata())
            )


async def test_the_task_form_is_sent_as_is_and_chosen_by_the_params() -> None:
    """On the wire: the CreateTaskResult goes out untouched for a call with ``task``; a handler's
    dict is validated as the form its request asked for, so a task answer to a plain call (and
    a plain answer to a task call) is an internal error, never a malformed result."""
    async with raw_client_of(task_server()) as peer:
        call = {"jsonrpc": "2.0", "method": "tools/call"}
        reply = await peer.request(
            {**call, "id": 1, "params": {"name": "dict", "task": {"ttl": 60000}}}
        )
        assert reply["result"] == {"task": _task("t-dict")}
        reply = await peer.request({**call, "id": 2, "params": {"name": "model", "task": {}}})
        assert reply["result"] == {"task": _task("t-model")}
        reply = await peer.request({**call, "id": 3, "params": {"name": "dict"}})
        assert reply["error"]["code"] == -32603 and "result" not in reply
        reply = await peer.request({**call, "id": 4, "params": {"name": "plain", "task": {}}})
        assert reply["error"]["code"] == -32603 and "result" not in reply
        reply = await peer.request({**call, "id": 5, "params": {"name": "plain"}})
        assert reply["result"]["content"] == [{"type": "text", "text": "plain"}]
