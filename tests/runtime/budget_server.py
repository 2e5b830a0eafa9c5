"""A server whose requests a test can hold, for the process memory budget's tests.

``python budget_server.py stdio|http|legacy BUDGET_MIB``: sets the process-wide budget's limit
(``process_budget().limit``) and serves on stdio, or on Streamable HTTP (both eras) or legacy
HTTP+SSE at 127.0.0.1 on an ephemeral port, printing the base URL as its first line. The
session's own byte bound is lifted, so that only the process budget stops requests.

Tools: ``hold`` waits until ``release`` is called (its ``data`` argument is what a test makes
large); ``release`` lets every held call return; ``budget`` answers the budget's use as JSON
text (``used``, ``peak``, ``limit``, and ``held``: the calls of ``hold`` waiting). With
``BUDGET_TRACE=1`` in its environment the server runs ``tracemalloc`` and ``budget`` also
answers ``traced`` and ``traced_peak`` (the peak since the previous ``budget`` call): what
Python objects take, beside what RSS shows.
"""

from __future__ import annotations

import json
import os
import sys
import tracemalloc

import anyio
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import RequestContext, Server, SessionOptions, process_budget

MIB = 1024 * 1024
TOOLS = [
    types.Tool(name=name, inputSchema=types.ToolInputSchema(type="object"))
    for name in ("hold", "release", "budget")
]

server = Server(
    "budget",
    capabilities={"tools": {}},
    options=SessionOptions(max_pending_bytes=1 << 40, max_pending_requests=1 << 20),
)
gate = [anyio.Event()]
#: Calls of ``hold`` waiting at the gate now.
waiting = [0]


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


@server.handler(methods.TOOLS_LIST)
async def list_tools(
    params: types.PaginatedRequestParams, context: RequestContext
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


@server.handler(methods.TOOLS_CALL)
async def call_tool(
    params: types.CallToolRequestParams, context: RequestContext
) -> types.CallToolResult:
    if params.name == "hold":
        data = (params.arguments or {}).get("data", "")
        waiting[0] += 1
        try:
            await gate[0].wait()
        finally:
            waiting[0] -= 1
        return text(f"held {len(data)}")
    if params.name == "release":
        gate[0].set()
        gate[0] = anyio.Event()
        return text("released")
    budget = process_budget()
    use = {"used": budget.used, "peak": budget.peak, "limit": budget.limit, "held": waiting[0]}
    if tracemalloc.is_tracing():  # BUDGET_TRACE: what Python holds, beside what is charged
        use["traced"], use["traced_peak"] = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
    return text(json.dumps(use))


async def serve_http(kind: str) -> None:
    from mcpbind.runtime.http import LegacySSEServer, StreamableHTTPServer, serving

    app = (
        StreamableHTTPServer(server.serve)
        if kind == "http"
        else LegacySSEServer(
            server.serve,
            max_queued_bytes=1 << 40,
            max_total_queued_bytes=1 << 40,
            max_queued_messages=1 << 20,
        )
    )
    async with serving(app, max_connections=512) as base:
        print(base, flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    if os.environ.get("BUDGET_TRACE"):
        tracemalloc.start()
    process_budget().limit = int(sys.argv[2]) * MIB
    if sys.argv[1] == "stdio":
        server.run_stdio()
    else:
        anyio.run(serve_http, sys.argv[1])
