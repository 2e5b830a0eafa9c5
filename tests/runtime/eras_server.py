"""A server on our runtime for the era tests: ``python eras_server.py [REVISION ...]``.

It speaks the revisions named (default: every generated one, both eras). Tools: ``echo`` for
every revision, and ``whoami``, which in the stateless era asks the client for the user's name
by elicitation (an ``InputRequiredResult``) and answers once the retry carries it.
"""

from __future__ import annotations

import sys
from typing import Any

from mcpbind.generated import v2025_11_25, v2026_07_28
from mcpbind.runtime import RequestContext, Server

server = Server("eras", "1.0", revisions=sys.argv[1:] or None, instructions="two eras")
old = v2025_11_25.types
new = v2026_07_28.types


@server.handler(v2025_11_25.methods.TOOLS_LIST)
async def list_tools(params: old.PaginatedRequestParams, context: RequestContext) -> Any:
    schema = old.ToolInputSchema(type="object", properties={"text": {"type": "string"}})
    return old.ListToolsResult(tools=[old.Tool(name="echo", inputSchema=schema)])


@server.handler(v2025_11_25.methods.TOOLS_CALL)
async def call_tool(params: old.CallToolRequestParams, context: RequestContext) -> Any:
    text = str((params.arguments or {}).get("text", ""))
    return old.CallToolResult(content=[old.TextContent(text=text)])


@server.handler(v2026_07_28.methods.TOOLS_LIST)
async def list_tools_stateless(
    params: new.PaginatedRequestParams, context: RequestContext
) -> new.ListToolsResult:
    schema = new.ToolInputSchema(type="object", properties={"text": {"type": "string"}})
    tools = [new.Tool(name=name, inputSchema=schema) for name in ("echo", "whoami")]
    return new.ListToolsResult(tools=tools, resultType="complete", ttlMs=0, cacheScope="public")


@server.handler(v2026_07_28.methods.TOOLS_CALL)
async def call_tool_stateless(
    params: new.CallToolRequestParams, context: RequestContext
) -> new.CallToolResult | new.InputRequiredResult:
    if params.name != "whoami":
        text = str((params.arguments or {}).get("text", ""))
        return new.CallToolResult(content=[new.TextContent(text=text)], resultType="complete")
    answer = (params.inputResponses or {}).get("name")
    if answer is None:
        ask = {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Your name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
        }
        return new.InputRequiredResult.model_validate(
            {"resultType": "input_required", "inputRequests": {"name": ask}, "requestState": "s1"}
        )
    name = (answer.content or {}).get("name") if isinstance(answer, new.ElicitResult) else None
    text = f"hello {name} (state {params.requestState})"
    return new.CallToolResult(content=[new.TextContent(text=text)], resultType="complete")


if __name__ == "__main__":
    server.run_stdio()
