"""A stdio server on the runtime with tunable bounds: ``python saturation_server.py name=value...``.

Each argument sets a ``SessionOptions`` field (``max_pending_requests=8``). Tools: ``hang`` never
returns (until cancelled), ``echo`` returns its ``text`` at once; ``tools/list`` lists them.
"""

from __future__ import annotations

import sys
from dataclasses import fields

import anyio
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import McpError, RequestContext, Server, SessionOptions

TOOLS = [
    types.Tool(name=name, inputSchema=types.ToolInputSchema(type="object"))
    for name in ("hang", "echo")
]


def options(arguments: list[str]) -> SessionOptions:
    kinds = {field.name: field.type for field in fields(SessionOptions)}
    chosen: dict[str, float | int] = {}
    for argument in arguments:
        name, value = argument.split("=", 1)
        chosen[name] = float(value) if "float" in str(kinds[name]) else int(value)
    return SessionOptions(**chosen)  # type: ignore[arg-type]


server = Server("saturation", options=options(sys.argv[1:]))


@server.handler(methods.TOOLS_LIST)
async def list_tools(
    params: types.PaginatedRequestParams, context: RequestContext
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


@server.handler(methods.TOOLS_CALL)
async def call_tool(
    params: types.CallToolRequestParams, context: RequestContext
) -> types.CallToolResult:
    if params.name == "hang":
        await anyio.sleep_forever()
    if params.name == "echo":
        text = str((params.arguments or {}).get("text"))
        return types.CallToolResult(content=[types.TextContent(text=text)])
    raise McpError(-32602, "unknown tool")


if __name__ == "__main__":
    server.run_stdio()
