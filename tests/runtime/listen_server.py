"""A server on our runtime for the listen tests: ``python listen_server.py``.

It offers tools and resources with ``listChanged`` and ``resources.subscribe`` (no prompt list
changes). Tool ``change`` raises a change notification: ``arguments.what`` is ``tools``,
``resources``, ``prompts`` or a resource URI (``resources/updated`` for it); ``close`` ends
every listen stream gracefully, as a shutdown would.
"""

from __future__ import annotations

from typing import Any

from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import RequestContext, Server


def make_server() -> Server:
    """A new server (each has its own listeners and subscriptions)."""
    server = Server(
        "listener",
        "1.0",
        capabilities={
            "tools": {"listChanged": True},
            "resources": {"listChanged": True, "subscribe": True},
            "prompts": {},
        },
    )

    @server.handler(methods.TOOLS_LIST)
    async def list_tools(params: types.PaginatedRequestParams, context: RequestContext) -> Any:
        schema = types.ToolInputSchema(type="object", properties={"what": {"type": "string"}})
        return types.ListToolsResult(tools=[types.Tool(name="change", inputSchema=schema)])

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(params: types.CallToolRequestParams, context: RequestContext) -> Any:
        what = str((params.arguments or {}).get("what", "tools"))
        if what == "tools":
            sent = await server.notify_tools_changed()
        elif what == "resources":
            sent = await server.notify_resources_changed()
        elif what == "prompts":
            sent = await server.notify_prompts_changed()
        elif what == "close":
            await server.close_subscriptions()
            sent = 0
        else:
            sent = await server.notify_resource_updated(what)
        return types.CallToolResult(content=[types.TextContent(text=f"sent {sent}")])

    return server


if __name__ == "__main__":
    make_server().run_stdio()
