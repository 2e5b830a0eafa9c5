"""The official Python SDK's low-level ``Server`` with one echo tool, for ``bench/peer_table.py``.

Written as the SDK's low-level examples show: handlers given to the constructor
(``on_list_tools``, ``on_call_tool``), ``stdio_server`` and ``Server.run`` over stdio;
``python sdk_lowlevel_echo.py --http PORT`` serves ``streamable_http_app()`` on uvicorn
(uvloop and httptools, no access log, as ``bench/runtime_http.py`` serves ``MCPServer``).
"""

import sys
from typing import Any

import anyio
import uvicorn
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

ECHO = types.Tool(
    name="echo",
    description="Return the text it is given.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
)


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO])


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server = Server("bench-sdk-lowlevel", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        uvicorn.run(
            server.streamable_http_app(),
            host="127.0.0.1",
            port=int(sys.argv[2]),
            log_level="warning",
            access_log=False,
        )
    else:
        anyio.run(main)
