"""Our client's tasks against ``@modelcontextprotocol/server-everything``'s task tool
(``simulate-research-query``, the TypeScript SDK's tasks) over stdio: polling at its
``pollInterval``, the result, and ``input_required`` answered by our elicitation handler when
its ``tasks/result`` stream delivers the server's question."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, McpError, RequestContext, StdioParameters, stdio_client
from test_everything import everything

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

__all__ = ["everything"]
RELATED = "io.modelcontextprotocol/related-task"


def reference_client(entry: Path, asked: list[dict[str, Any]]) -> Client:
    client = Client(stdio_client(StdioParameters("node", [str(entry), "stdio"], stderr="devnull")))

    @client.handler(methods.ELICITATION_CREATE)
    async def elicit(params: Any, context: RequestContext) -> types.ElicitResult:
        asked.append(params.model_dump(by_alias=True, exclude_none=True))
        return types.ElicitResult(action="accept", content={"interpretation": "historical"})

    return client


async def test_a_reference_task_tool_polled_to_its_result(everything: Path) -> None:
    asked: list[dict[str, Any]] = []
    async with reference_client(everything, asked) as client:
        assert "call" in client.server_capabilities["tasks"]["requests"]["tools"]
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert tools["simulate-research-query"].execution.taskSupport in ("optional", "required")
        handle = await client.call_tool_as_task(
            "simulate-research-query", {"topic": "tides"}, ttl=60_000
        )
        assert handle.task["status"] == "working" and handle.task_id
        seen = {(await handle.status())["status"]}
        result = await handle.result(poll=True)
        seen.add(handle.task["status"])
        assert seen <= {"working", "completed"} and "completed" in seen
        assert isinstance(result, types.CallToolResult)
        assert "Research Report: tides" in str(result.content[0])
        assert asked == []
        with pytest.raises(McpError) as caught:
            await client.send_request(methods.TASKS_GET, {"taskId": "no-such-task"})
        assert caught.value.code == -32602


async def test_a_reference_task_needing_input(everything: Path) -> None:
    asked: list[dict[str, Any]] = []
    async with reference_client(everything, asked) as client:
        handle = await client.call_tool_as_task(
            "simulate-research-query", {"topic": "python", "ambiguous": True}
        )
        result = await handle.result()  # the question comes on this stream (input_required)
        assert "python (historical)" in str(result.content[0])
        assert len(asked) == 1 and asked[0]["_meta"][RELATED] == {"taskId": handle.task_id}
        assert (await handle.status())["status"] == "completed"
