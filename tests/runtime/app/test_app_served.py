"""The app layer end to end: the small example server as a real stdio subprocess, and the
test app on a real uvicorn over Streamable HTTP, in both eras."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from app_helpers import STATELESS
from mcpbind.generated import v2024_11_05, v2025_11_25, v2026_07_28
from mcpbind.runtime import Client, StdioParameters
from mcpbind.runtime.http import serving, streamable_http_client
from runtime_helpers import answering_client

pytestmark = pytest.mark.anyio

SMALL_SERVER = str(Path(__file__).with_name("small_server.py"))
MODULES = {"2024-11-05": v2024_11_05, "2025-11-25": v2025_11_25, STATELESS: v2026_07_28}


@pytest.mark.parametrize("version", sorted(MODULES))
async def test_the_small_server_over_stdio(version: str) -> None:
    module = MODULES[version]
    types = module.types
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    params = StdioParameters(sys.executable, [SMALL_SERVER])
    async with Client(params, protocol_version=version) as client:
        tools = await client.list_all(module.methods.TOOLS_LIST)
        added = await client.stub.call_tool(
            types.CallToolRequestParams(name="add", arguments={"a": 2, "b": 3})
        )
        bad = await client.stub.call_tool(
            types.CallToolRequestParams(name="add", arguments={"a": "two", "b": 3})
        )
        weather = await client.stub.call_tool(
            types.CallToolRequestParams(name="weather", arguments={"city": "Oslo"})
        )
        counted = await client.stub.call_tool(
            types.CallToolRequestParams(name="count", arguments={"steps": 3}),
            {"progress": on_progress},
        )
        read = await client.stub.read_resource(
            types.ReadResourceRequestParams(uri="config://settings")
        )
        prompt = await client.stub.get_prompt(
            types.GetPromptRequestParams(name="review", arguments={"code": "x"})
        )
    assert [tool.name for tool in tools] == ["add", "weather", "count"]
    assert added.content[0].text == "5"
    assert bad.isError is True and "argument 'a'" in bad.content[0].text
    structured = getattr(weather, "structuredContent", None)
    assert structured == (None if version == "2024-11-05" else {"city": "Oslo", "celsius": 21.5})
    assert counted.content[0].text == "counted to 3"
    assert progress == [1, 2, 3]
    assert read.contents[0].text == "mode=demo"
    assert prompt.messages[0].content.text == "Please review:\nx"


@pytest.mark.parametrize("version", ["2025-11-25", STATELESS])
async def test_the_test_app_over_http(version: str) -> None:
    from app_server import app

    async with serving(app.http_app()) as url:
        transport = streamable_http_client(f"{url}/mcp")
        client, asked = answering_client(transport, version)
        types: Any = MODULES[version].types
        async with client:
            greeted = await client.stub.call_tool(types.CallToolRequestParams(name="greet"))
            sampled = await client.stub.call_tool(
                types.CallToolRequestParams(name="ask_llm", arguments={"question": "?"})
            )
            users = await client.stub.complete(
                types.CompleteRequestParams(
                    ref=types.ResourceTemplateReference(
                        type="ref/resource", uri="users://{user_id}/profile"
                    ),
                    argument=types.CompleteRequestParamsArgument(name="user_id", value="1"),
                )
            )
    assert greeted.content[0].text == "hello, Ada"
    assert sampled.content[0].text == "the model said: Paris"
    assert asked == ["elicitation", "sampling"]
    assert users.completion.values == ["1", "12", "123"]
