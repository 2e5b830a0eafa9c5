"""Tasks throughput and memory, in both eras (not a test): ``python bench/tasks.py``.

* tasks created and completed per second with ``--in-flight`` (100) at once, over the
  in-memory transport and over stdio (this file re-run as the server, ``--serve``). In
  2025-11-25 each is a ``tools/call`` as a task then ``tasks/result`` (which blocks until it is
  done); in 2026-07-28 (the tasks extension, which has no blocking call) a ``tools/call`` the
  server answers with a task, then ``tasks/get`` polled at the server's ``pollIntervalMs``
  (``--poll-ms``, 5 here, so the figure is the runtime's, not the poll interval's);
* memory per live task: ``tracemalloc`` over ``--live`` (10,000) tasks whose handlers are all
  still running (the store's record, the task's background job and its context), in-memory.

Prints a table.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from typing import Any

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)
import anyio
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, RequestContext, Server, StdioParameters
from mcpbind.runtime.tasks import InMemoryTaskStore, TaskSupport

ERAS = ("2025-11-25", "2026-07-28")


def build_server(
    max_tasks: int = 200_000, poll_ms: int = 5, gate: anyio.Event | None = None
) -> Server:
    """``work`` answers at once; ``hold`` waits for ``gate`` (the live tasks of the memory
    measure)."""
    server = Server("tasks-bench", "1.0")

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        if params.name == "hold" and gate is not None:
            await gate.wait()
        return types.CallToolResult(content=[types.TextContent(text="ok")])

    store = InMemoryTaskStore(max_tasks=max_tasks, poll_interval=poll_ms)
    server.enable_tasks(TaskSupport(store, tools={"work": "optional", "hold": "optional"}))
    return server


async def throughput(client: Client, total: int, in_flight: int) -> float:
    remaining = total

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            handle = await client.call_tool_as_task("work", {})
            await handle.result()

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(in_flight):
            tg.start_soon(worker)
    return total / (time.perf_counter() - start)


async def memory_per_task(live: int, era: str) -> float:
    gate = anyio.Event()
    server = build_server(gate=gate)
    async with Client(server.memory_transport(), protocol_version=era) as client:
        await throughput(client, 200, 50)  # warm up: imports, caches, validators
        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        async with anyio.create_task_group() as tg:
            for _ in range(live // 100):
                for _ in range(100):
                    tg.start_soon(client.call_tool_as_task, "hold", {})
                await anyio.sleep(0)
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
        gate.set()
        grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    return grown / live


async def main(args: argparse.Namespace) -> None:
    rows: list[tuple[str, str]] = []
    for era in ERAS:
        server = build_server(poll_ms=args.poll_ms)
        async with Client(server.memory_transport(), protocol_version=era) as client:
            await throughput(client, 200, args.in_flight)
            rate = await throughput(client, args.tasks, args.in_flight)
            rows.append((f"{era} in-memory: tasks/s, {args.in_flight} in flight", f"{rate:,.0f}"))
        serve = [__file__, "--serve", "--poll-ms", str(args.poll_ms)]
        params = StdioParameters(sys.executable, serve, stderr="devnull")
        async with Client(params, protocol_version=era) as client:
            await throughput(client, 200, args.in_flight)
            rate = await throughput(client, args.tasks, args.in_flight)
            rows.append((f"{era} stdio: tasks/s, {args.in_flight} in flight", f"{rate:,.0f}"))
        per_task = await memory_per_task(args.live, era)
        rows.append(
            (f"{era} memory per live task ({args.live:,} live)", f"{per_task / 1024:.1f} KiB")
        )
    width = max(len(name) for name, _ in rows)
    print(f"{'measure':<{width}}  value")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=3000)
    parser.add_argument("--in-flight", type=int, default=100)
    parser.add_argument("--live", type=int, default=10_000)
    parser.add_argument("--poll-ms", type=int, default=5, help="the store's pollInterval")
    parser.add_argument("--serve", action="store_true", help="serve stdio (the stdio peer)")
    args: Any = parser.parse_args()
    if args.serve:
        build_server(poll_ms=args.poll_ms).run_stdio()
        return
    anyio.run(main, args)


if __name__ == "__main__":
    cli()
