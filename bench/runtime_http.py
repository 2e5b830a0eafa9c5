"""Benchmark of Streamable HTTP (not a test): ``python bench/runtime_http.py``.

Same client (mcpbind's ``Client`` over ``streamable_http_client``), same run, two servers,
each in its own process on uvicorn at 127.0.0.1: mcpbind's ``StreamableHTTPServer`` and the
official Python SDK's Streamable HTTP app, both serving one ``echo`` tool, both answering with
SSE (``--json`` switches both to JSON responses). Measures ``tools/call`` round trips one at a
time and with 32 in flight; prints medians of ``--rounds`` rounds and the ratios (mcpbind
over SDK: below 1 means mcpbind is faster for latency, above 1 for throughput).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from typing import Any

import anyio
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, RequestContext, Server
from mcpbind.runtime.http import StreamableHTTPServer, serving, streamable_http_client

IN_FLIGHT = 32


def ours(json_response: bool) -> Any:
    server = Server("bench-mcpbind")

    @server.handler(methods.TOOLS_LIST)
    async def list_tools(
        params: types.PaginatedRequestParams, context: RequestContext
    ) -> types.ListToolsResult:
        schema = types.ToolInputSchema(type="object", properties={"text": {"type": "string"}})
        return types.ListToolsResult(tools=[types.Tool(name="echo", inputSchema=schema)])

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        text = str((params.arguments or {}).get("text", ""))
        return types.CallToolResult(content=[types.TextContent(text=text)])

    return StreamableHTTPServer(server.serve, json_response=json_response)


def sdk(json_response: bool) -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench-sdk")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    return server.streamable_http_app(json_response=json_response)


async def serve(kind: str, json_response: bool) -> None:
    app = ours(json_response) if kind == "mcpbind" else sdk(json_response)
    async with serving(app) as url:
        print(f"{url}/mcp", flush=True)
        await anyio.sleep_forever()


def start(kind: str, json_response: bool) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, __file__, "--serve", kind]
    if json_response:
        command.append("--json")
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http://"):
        process.kill()
        raise SystemExit(f"the {kind} server did not start")
    return process, url


async def measure(url: str, calls: int) -> tuple[float, float]:
    """(median ms per sequential call, calls per second with IN_FLIGHT in flight)."""
    params = types.CallToolRequestParams(name="echo", arguments={"text": "hello"})
    async with Client(streamable_http_client(url)) as client:
        stub = client.stub
        for _ in range(20):
            await stub.call_tool(params)
        latencies = []
        for _ in range(calls):
            started = time.perf_counter()
            await stub.call_tool(params)
            latencies.append(time.perf_counter() - started)
        remaining = calls * 2

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                await stub.call_tool(params)

        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(IN_FLIGHT):
                tg.start_soon(worker)
        throughput = calls * 2 / (time.perf_counter() - started)
    return statistics.median(latencies) * 1000, throughput


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--calls",
        type=int,
        default=200,
        help="sequential calls per round (twice as many in flight)",
    )
    parser.add_argument(
        "--json", action="store_true", help="JSON responses instead of SSE on both servers"
    )
    parser.add_argument("--serve", choices=["mcpbind", "sdk"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        anyio.run(serve, args.serve, args.json)
        return
    servers = {kind: start(kind, args.json) for kind in ("mcpbind", "sdk")}
    results: dict[str, list[tuple[float, float]]] = {kind: [] for kind in servers}
    try:
        for _ in range(args.rounds):
            for kind, (_process, url) in servers.items():
                results[kind].append(anyio.run(measure, url, args.calls))
    finally:
        for process, _url in servers.values():
            process.terminate()
            process.wait(timeout=10)
    mode = "JSON" if args.json else "SSE"
    print(f"Streamable HTTP ({mode} responses), {args.rounds} rounds, medians; client: mcpbind")
    medians = {}
    for kind, rows in results.items():
        latency = statistics.median(r[0] for r in rows)
        throughput = statistics.median(r[1] for r in rows)
        medians[kind] = (latency, throughput)
        print(
            f"  {kind:8} sequential {latency:7.2f} ms/call   {IN_FLIGHT} in flight {throughput:8.0f} calls/s"
        )
    ours_, sdk_ = medians["mcpbind"], medians["sdk"]
    print(
        f"  ratio mcpbind/sdk: latency {ours_[0] / sdk_[0]:.2f}x, throughput {ours_[1] / sdk_[1]:.2f}x"
    )


if __name__ == "__main__":
    main()
