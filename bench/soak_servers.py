"""The servers of the soak benchmark (``bench/soak.py``), each run in its own process.

Both HTTP servers have the same two tools: ``echo`` (answers at once) and ``count`` (sends
``steps`` progress notifications, ``delay`` seconds apart, then answers), and both resume from
the same event store: mcpbind's ``InMemoryEventStore``, put behind the SDK's ``EventStore``
interface for the SDK (the SDK ships none), so what differs is the transport and the runtime.
``python bench/soak_servers.py mcpbind|python-sdk`` prints its URL and serves until killed.
"""

from __future__ import annotations

import sys
from typing import Any

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)
import anyio
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import RequestContext, Server, run
from mcpbind.runtime.http import StreamableHTTPServer, serving


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


def ours() -> Any:
    server = Server("soak-mcpbind")

    @server.handler(methods.TOOLS_LIST)
    async def list_tools(
        params: types.PaginatedRequestParams, context: RequestContext
    ) -> types.ListToolsResult:
        schema = types.ToolInputSchema(type="object")
        return types.ListToolsResult(
            tools=[types.Tool(name=n, inputSchema=schema) for n in ("echo", "count")]
        )

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        args = params.arguments or {}
        if params.name == "count":
            steps = int(args.get("steps", 20))
            for step in range(1, steps + 1):
                await context.report_progress(step, steps)
                await anyio.sleep(float(args.get("delay", 0.002)))
            return text(f"counted {steps}")
        return text(str(args.get("text", "")))

    return StreamableHTTPServer(server.serve)


async def main(kind: str) -> None:
    if kind == "mcpbind":
        app = ours()
    else:
        from soak_sdk_server import sdk  # imports mcp only in the SDK's process

        app = sdk()
    async with serving(app) as url:
        print(f"{url}/mcp", flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    run(main, sys.argv[1])
