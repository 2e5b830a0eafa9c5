"""Our client's tasks against ``@modelcontextprotocol/server-everything``'s task tool
(``simulate-research-query``, the TypeScript SDK's tasks) over stdio and over its Streamable
HTTP (``streamableHttp`` mode, a real node process on a free port): polling at its
``pollInterval``, the result, and ``input_required`` answered by our elicitation handler when
its ``tasks/result`` stream delivers the server's question."""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, McpError, RequestContext, StdioParameters, stdio_client
from mcpbind.runtime.http import streamable_http_client
from portkit import PortTaken, on_fresh_port_async, says_port_taken
from test_everything import everything

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

__all__ = ["everything"]
RELATED = "io.modelcontextprotocol/related-task"


Reference = Callable[[list[dict[str, Any]]], Client]


@pytest.fixture(params=["stdio", "http"])
async def reference_client(
    request: pytest.FixtureRequest, everything: Path
) -> AsyncIterator[Reference]:
    """Clients of server-everything, each with our elicitation handler noting its requests."""

    def with_handler(client: Client, asked: list[dict[str, Any]]) -> Client:
        @client.handler(methods.ELICITATION_CREATE)
        async def elicit(params: Any, context: RequestContext) -> types.ElicitResult:
            asked.append(params.model_dump(by_alias=True, exclude_none=True))
            return types.ElicitResult(action="accept", content={"interpretation": "historical"})

        return client

    if request.param == "stdio":
        yield lambda asked: with_handler(
            Client(
                stdio_client(StdioParameters("node", [str(everything), "stdio"], stderr="devnull"))
            ),
            asked,
        )
        return

    # server-everything takes only a port ($PORT): one taken before it bound it is tried again.
    async def start(port: int) -> tuple[subprocess.Popen[str], int]:
        process = subprocess.Popen(
            ["node", str(everything), "streamableHttp"],
            env={**os.environ, "PORT": str(port)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stderr is not None
            with anyio.fail_after(30):
                line = await anyio.to_thread.run_sync(process.stderr.readline)
                while line and "listening" not in line:
                    if says_port_taken(line):
                        raise PortTaken(line.strip())
                    line = await anyio.to_thread.run_sync(process.stderr.readline)
            assert "listening" in line, "server-everything did not start its HTTP server"
            # It listens on every interface: on Linux that succeeds while another process holds
            # 127.0.0.1 on the port, and that one would get our requests. It must answer.
            try:
                async with httpx.AsyncClient(timeout=5) as http:
                    await http.get(f"http://127.0.0.1:{port}/mcp")
            except httpx.TransportError as exc:
                raise PortTaken(f"127.0.0.1:{port} is another process's: {exc!r}") from exc
        except BaseException:
            process.terminate()
            process.wait(timeout=10)
            raise
        return process, port

    process, port = await on_fresh_port_async(start, "server-everything")
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        yield lambda asked: with_handler(Client(streamable_http_client(url)), asked)
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_a_reference_task_tool_polled_to_its_result(reference_client: Reference) -> None:
    asked: list[dict[str, Any]] = []
    async with reference_client(asked) as client:
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


async def test_a_reference_task_needing_input(reference_client: Reference) -> None:
    asked: list[dict[str, Any]] = []
    async with reference_client(asked) as client:
        handle = await client.call_tool_as_task(
            "simulate-research-query", {"topic": "python", "ambiguous": True}
        )
        result = await handle.result()  # the question comes on this stream (input_required)
        assert "python (historical)" in str(result.content[0])
        assert len(asked) == 1 and asked[0]["_meta"][RELATED] == {"taskId": handle.task_id}
        assert (await handle.status())["status"] == "completed"
