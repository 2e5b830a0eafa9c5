"""An example MCP client on the mcpbind runtime: starts the example server and uses it.

Run it with ``python -m examples.client`` from the repository root (or ``python
examples/client.py``); pass a command to talk to another server instead, e.g.
``python -m examples.client npx -y @modelcontextprotocol/server-everything``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from mcpbind.generated.v2025_11_25 import client as stubs, methods, types
from mcpbind.runtime import Client, McpError, RequestContext, Session, StdioParameters, stdio_client


def make_client(command: list[str]) -> Client:
    client = Client(
        stdio_client(StdioParameters(command[0], command[1:])), name="mcpbind-example-client"
    )

    @client.handler(methods.SAMPLING_CREATEMESSAGE)
    async def sample(
        params: types.CreateMessageRequestParams, context: RequestContext
    ) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", model="canned-model", content=types.TextContent(text="42, obviously")
        )

    @client.handler(methods.ELICITATION_CREATE)
    async def elicit(
        params: types.ElicitRequestParams, context: RequestContext
    ) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    @client.handler(methods.ROOTS_LIST)
    async def roots(params: types.RequestParams, context: RequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///tmp", name="tmp")])

    @client.notification_handler(methods.NOTIFICATIONS_MESSAGE)
    async def on_log(params: types.LoggingMessageNotificationParams, session: Session) -> None:
        print(f"  [server log {params.level}] {params.data}")

    return client


async def main(command: list[str]) -> None:
    async with make_client(command) as client:
        print(f"connected to {client.server_info.name} over revision {client.revision}")
        print(f"capabilities: {client.server_capabilities}")
        tools = await client.list_all(methods.TOOLS_LIST)
        print("tools:", [tool.name for tool in tools])
        if client.revision != "2025-11-25":
            return
        stub = client.stub_as(stubs.ClientStub)
        if "logging" in client.server_capabilities:
            await stub.set_level(types.SetLevelRequestParams(level="info"))

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            print(f"  progress {progress}/{total}: {message}")

        calls: list[tuple[str, dict[str, Any]]] = [
            ("echo", {"text": "hello"}),
            ("add", {"a": 2, "b": 40}),
            ("slow", {"steps": 3, "delay": 0.05}),
            ("ask_llm", {"question": "meaning of life?"}),
            ("ask_user", {}),
            ("roots", {}),
        ]
        for name, arguments in calls:
            if name not in {tool.name for tool in tools}:
                continue
            result = await stub.call_tool(
                types.CallToolRequestParams(name=name, arguments=arguments),
                {"progress": on_progress},
            )
            print(
                f"{name}: {[block.text for block in result.content if isinstance(block, types.TextContent)]}"
            )
        for resource in await client.list_all(methods.RESOURCES_LIST):
            read = await stub.read_resource(types.ReadResourceRequestParams(uri=resource.uri))
            print(f"{resource.uri}: {read.contents[0]}")
        try:
            prompt = await stub.get_prompt(
                types.GetPromptRequestParams(name="greet", arguments={"name": "Ada"})
            )
            print("prompt greet:", prompt.messages[0].content)
        except McpError as exc:
            print("prompt greet failed:", exc)
        await client.ping()
        print("ping ok")


def run() -> None:
    command = sys.argv[1:] or [sys.executable, str(Path(__file__).with_name("server.py"))]
    anyio.run(main, command)


if __name__ == "__main__":
    run()
