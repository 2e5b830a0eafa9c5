"""Interop over stdio with the official Python SDK (``mcp``), both ways round."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp.types as sdk_types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client as sdk_stdio_client
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, StdioParameters, stdio_client
from runtime_helpers import EXAMPLE_SERVER, REPO_ROOT

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

SDK_SERVER = str(Path(__file__).with_name("sdk_server.py"))


async def test_our_client_against_the_sdk_server() -> None:
    stderr: list[str] = []
    client = Client(
        stdio_client(StdioParameters(sys.executable, [SDK_SERVER], stderr=stderr.append))
    )
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with client:
        assert client.revision == "2025-11-25"
        assert client.server_info.name == "sdk-peer"
        assert {"tools", "resources", "prompts"} <= set(client.server_capabilities)
        tools = await client.list_all(methods.TOOLS_LIST)
        assert {tool.name for tool in tools} == {"echo", "slow"}
        echo = await client.stub.call_tool(
            types.CallToolRequestParams(name="echo", arguments={"text": "hi"})
        )
        assert isinstance(echo, types.CallToolResult)
        assert echo.content[0].text == "hi"
        slow = await client.stub.call_tool(
            types.CallToolRequestParams(name="slow", arguments={"steps": 3, "delay": 0.01}),
            {"progress": on_progress},
        )
        assert slow.content[0].text == "done after 3 steps"
        assert progress == [1, 2, 3]
        read = await client.stub.read_resource(types.ReadResourceRequestParams(uri="memo://readme"))
        assert read.contents[0].text == "hello from the SDK"
        prompt = await client.stub.get_prompt(
            types.GetPromptRequestParams(name="greet", arguments={"name": "Ada"})
        )
        assert "Ada" in prompt.messages[0].content.text
        await client.ping()

        # Cancellation: the SDK server must stop the call (it would say so on stderr).
        with anyio.move_on_after(0.3) as scope:
            await client.stub.call_tool(
                types.CallToolRequestParams(name="slow", arguments={"steps": 4, "delay": 0.2})
            )
        assert scope.cancelled_caught
        await anyio.sleep(1.2)
        assert "slow finished 4 steps" not in stderr
        assert "slow finished 3 steps" in stderr
        again = await client.stub.call_tool(
            types.CallToolRequestParams(name="echo", arguments={"text": "still"})
        )
        assert again.content[0].text == "still"


async def test_the_sdk_client_against_our_server() -> None:
    params = StdioServerParameters(
        command=EXAMPLE_SERVER[0], args=EXAMPLE_SERVER[1:], cwd=str(REPO_ROOT)
    )
    logs: list[Any] = []
    progress: list[float] = []

    async def sampling(
        context: Any, params: sdk_types.CreateMessageRequestParams
    ) -> sdk_types.CreateMessageResult:
        return sdk_types.CreateMessageResult(
            role="assistant",
            model="m",
            content=sdk_types.TextContent(type="text", text="from the SDK"),
        )

    async def on_log(params: sdk_types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with (
        sdk_stdio_client(params) as (read, write),
        ClientSession(read, write, sampling_callback=sampling, logging_callback=on_log) as session,
    ):
        init = await session.initialize()
        assert init.protocol_version == "2025-11-25"
        assert init.server_info.name == "mcpbind-example"
        assert init.capabilities.tools is not None and init.capabilities.completions is not None
        first = await session.list_tools()
        assert first.next_cursor == "page-2"
        second = await session.list_tools(
            params=sdk_types.PaginatedRequestParams(cursor=first.next_cursor)
        )
        assert [t.name for t in first.tools + second.tools][:3] == ["echo", "add", "slow"]
        echo = await session.call_tool("echo", {"text": "hey"})
        assert echo.content[0].text == "hey"
        slow = await session.call_tool(
            "slow", {"steps": 3, "delay": 0.01}, progress_callback=on_progress
        )
        assert slow.content[0].text == "done after 3 steps"
        assert progress == [1, 2, 3]
        read = await session.read_resource("memo://readme")
        assert read.contents[0].text.startswith("mcpbind example server")
        prompt = await session.get_prompt("greet", {"name": "Zed"})
        assert "Zed" in prompt.messages[0].content.text
        await session.send_ping()
        asked = await session.call_tool("ask_llm", {"question": "?"})
        assert asked.content[0].text == "the LLM said: from the SDK"

        # Cancellation: our server must stop the call, so its closing log line never comes.
        with anyio.move_on_after(0.3) as scope:
            await session.call_tool("slow", {"steps": 4, "delay": 0.2})
        assert scope.cancelled_caught
        await anyio.sleep(1.2)
        assert "slow finished 3 steps" in logs
        assert "slow finished 4 steps" not in logs
        after = await session.call_tool("echo", {"text": "after"})
        assert after.content[0].text == "after"
