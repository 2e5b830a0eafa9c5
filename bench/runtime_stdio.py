"""Benchmark of the runtime over stdio (not a test): ``python bench/runtime_stdio.py``.

Same client (mcpbind's), same run, two servers: the mcpbind example server and the same tools
on the official Python SDK (``tests/runtime/sdk_server.py``). Measures sequential round trips
(``ping`` and ``tools/call`` of ``echo``), throughput with 32 requests in flight, import time
of ``mcpbind.runtime`` plus one revision against ``import mcp``, the server's CPU time per
``echo`` (steadier than rates when other work shares the machine), and idle server RSS. Prints
medians of ``--rounds`` rounds and the ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from mcpbind.generated.v2025_11_25 import types
from mcpbind.runtime import Client, StdioParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
SERVERS = {
    "mcpbind": StdioParameters(sys.executable, ["-m", "examples.server"], cwd=ROOT),
    "official": StdioParameters(
        sys.executable, [str(ROOT / "tests" / "runtime" / "sdk_server.py")], cwd=ROOT
    ),
}
ECHO = types.CallToolRequestParams(name="echo", arguments={"text": "hello"})


async def rate(count: int, call: Callable[[], Awaitable[object]], in_flight: int = 1) -> float:
    """Round trips per second for ``count`` calls, ``in_flight`` at a time."""
    per_worker = count // in_flight

    async def worker() -> None:
        for _ in range(per_worker):
            await call()

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(in_flight):
            tg.start_soon(worker)
    return per_worker * in_flight / (time.perf_counter() - start)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process: steadier than wall time on a shared machine."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def measure(params: StdioParameters, count: int) -> dict[str, float]:
    async with Client(stdio_client(params), options=None) as client:
        stub = client.stub
        for _ in range(200):  # warm up both ends
            await stub.call_tool(ECHO)
        await anyio.sleep(0.5)
        pid = client.session.connection.extra["pid"]
        idle = rss_kib(pid) / 1024
        ping = await rate(count, client.ping)
        cpu = cpu_seconds(pid)
        echo = await rate(count, lambda: stub.call_tool(ECHO))
        cpu_per_echo = (cpu_seconds(pid) - cpu) / count * 1e6
        return {
            "ping seq /s": ping,
            "echo seq /s": echo,
            "echo x32 /s": await rate(count * 2, lambda: stub.call_tool(ECHO), in_flight=32),
            "server CPU us/echo": cpu_per_echo,
            "idle RSS MiB": idle,
        }


def import_seconds(code: str) -> float:
    probe = f"import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return float(out.stdout)


async def official_stack(count: int) -> float:
    """Sequential ``echo`` rate of the official client against the official server (reference)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp import stdio_client as sdk_stdio_client

    params = SERVERS["official"]
    sdk_params = StdioServerParameters(
        command=params.command, args=list(params.args), cwd=str(ROOT)
    )
    async with sdk_stdio_client(sdk_params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for _ in range(200):
            await session.call_tool("echo", {"text": "hello"})
        return await rate(count, lambda: session.call_tool("echo", {"text": "hello"}))


def row(metric: str, ours: float, theirs: float) -> str:
    return f"{metric:<22}{ours:>10.0f}{theirs:>10.0f}{ours / theirs:>8.2f}"


async def main(rounds: int, count: int) -> None:
    results: dict[str, dict[str, list[float]]] = {name: {} for name in SERVERS}
    reference: list[float] = []
    for _ in range(rounds):
        for name, params in SERVERS.items():
            for metric, value in (await measure(params, count)).items():
                results[name].setdefault(metric, []).append(value)
        reference.append(await official_stack(count))
    imports = {
        "mcpbind": [
            import_seconds(
                "import mcpbind.runtime, mcpbind.generated; mcpbind.generated.load('2025-11-25')"
            )
            for _ in range(rounds + 2)
        ],
        "official": [import_seconds("import mcp") for _ in range(rounds + 2)],
    }
    print(
        f"{'metric':<22}{'mcpbind':>10}{'official':>10}{'ratio':>8}   (median of {rounds} rounds)"
    )
    print("same client (mcpbind's), two servers:")
    for metric in results["mcpbind"]:
        ours = statistics.median(results["mcpbind"][metric])
        print(row(metric, ours, statistics.median(results["official"][metric])))
    print("whole stacks (each client with its own server):")
    ours = statistics.median(results["mcpbind"]["echo seq /s"])
    print(row("echo seq /s", ours, statistics.median(reference)))
    print("start-up:")
    ours_import = statistics.median(imports["mcpbind"]) * 1000
    print(row("import ms", ours_import, statistics.median(imports["official"]) * 1000))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--count", type=int, default=2000, help="round trips per sequential measurement"
    )
    args = parser.parse_args()
    anyio.run(main, args.rounds, args.count)
