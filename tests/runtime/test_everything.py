"""Our client against ``@modelcontextprotocol/server-everything`` (the reference server, on npm).

The package is installed on first use into a cache folder (``MCPBIND_NPM_CACHE``, default a
folder in the temp dir); if npm or the install fails, the test fails with npm's output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import anyio
import pytest
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, RequestContext, StdioParameters, stdio_client

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

PACKAGE = "@modelcontextprotocol/server-everything"


@pytest.fixture(scope="module")
def everything() -> Path:
    cache = Path(os.environ.get("MCPBIND_NPM_CACHE", Path(tempfile.gettempdir()) / "mcpbind-npm"))
    entry = cache / "node_modules" / PACKAGE / "dist" / "index.js"
    if not entry.exists():
        npm = shutil.which("npm")
        assert npm is not None, "npm is needed to install the reference server"
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(cache), PACKAGE],
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert done.returncode == 0, f"npm install {PACKAGE} failed:\n{done.stdout}\n{done.stderr}"
    assert entry.exists(), f"{entry} missing after npm install"
    return entry


async def test_our_client_against_server_everything(everything: Path) -> None:
    client = Client(
        stdio_client(StdioParameters("node", [str(everything), "stdio"], stderr="devnull"))
    )
    sampled: list[str] = []

    @client.handler(methods.SAMPLING_CREATEMESSAGE)
    async def sample(
        params: types.CreateMessageRequestParams, context: RequestContext
    ) -> types.CreateMessageResult:
        sampled.append(str(params.messages[0].content))
        return types.CreateMessageResult(
            role="assistant", model="m", content=types.TextContent(text="sampled")
        )

    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with client:
        assert client.revision == "2025-11-25"
        assert {"tools", "resources", "prompts", "completions", "logging"} <= set(
            client.server_capabilities
        )
        tools = {tool.name for tool in await client.list_all(methods.TOOLS_LIST)}
        assert {"echo", "get-sum", "trigger-long-running-operation"} <= tools
        echo = await client.stub.call_tool(
            types.CallToolRequestParams(name="echo", arguments={"message": "hi"})
        )
        assert echo.content[0].text == "Echo: hi"
        total = await client.stub.call_tool(
            types.CallToolRequestParams(name="get-sum", arguments={"a": 2, "b": 3})
        )
        assert "5" in total.content[0].text
        resources = await client.list_all(methods.RESOURCES_LIST)
        assert resources
        read = await client.stub.read_resource(
            types.ReadResourceRequestParams(uri=resources[0].uri)
        )
        assert read.contents and read.contents[0].uri == resources[0].uri
        assert await client.list_all(methods.RESOURCES_TEMPLATES_LIST)
        prompt = await client.stub.get_prompt(types.GetPromptRequestParams(name="simple-prompt"))
        assert prompt.messages
        await client.ping()
        long = await client.stub.call_tool(
            types.CallToolRequestParams(
                name="trigger-long-running-operation", arguments={"duration": 0.3, "steps": 3}
            ),
            {"progress": on_progress},
        )
        assert not long.isError
        assert progress == [1, 2, 3]
        if "trigger-sampling-request" in tools:
            asked = await client.stub.call_tool(
                types.CallToolRequestParams(
                    name="trigger-sampling-request", arguments={"prompt": "hello"}
                )
            )
            assert sampled and "sampled" in str(asked.content)
        with anyio.move_on_after(0.2) as scope:
            await client.stub.call_tool(
                types.CallToolRequestParams(
                    name="trigger-long-running-operation", arguments={"duration": 5, "steps": 5}
                )
            )
        assert scope.cancelled_caught
        assert (
            await client.stub.call_tool(
                types.CallToolRequestParams(name="echo", arguments={"message": "x"})
            )
        ).content
