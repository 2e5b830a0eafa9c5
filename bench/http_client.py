"""Benchmark of Streamable HTTP clients (not a test): ``python bench/http_client.py``.

One mcpbind server (``bench/runtime_http.py``'s low-level ``Server`` with an ``echo`` tool, as
configured by default, on uvicorn in its own process) is driven in the same run by:

* ``light``: ``runtime_http.LoadClient``, a raw asyncio HTTP/1.1 client that parses only the
  framing: the ceiling any client can reach against this server here;
* ``mcpbind``: mcpbind's own ``Client`` over ``streamable_http_client`` (the whole stack:
  typed params, validation of the result, the transport);
* ``python-sdk``: the official Python SDK's ``Client`` (``mcp``) on its Streamable HTTP client.

Both eras: a 2025-11-25 session (initialize handshake) and the stateless 2026-07-28 era (no
session; every POST carries ``_meta`` and the ``Mcp-*`` headers). Each client calls ``echo``
sequentially, then with 32 calls in flight; clients alternate within each round and the table
shows medians of ``--rounds`` rounds, calls/s and the client's CPU µs per call (this process's
CPU time: the server runs elsewhere), and mcpbind's ratio to the SDK and to the ceiling.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from mcpbind.generated.v2025_11_25 import types  # noqa: E402
from mcpbind.runtime import Client, run  # noqa: E402
from mcpbind.runtime.http import streamable_http_client  # noqa: E402
from runtime_http import IN_FLIGHT, MODERN, VERSION, LoadClient, start  # noqa: E402

Call = Callable[[], Awaitable[None]]


async def timed(call: Call, count: int, in_flight: int) -> tuple[float, float]:
    """(calls/s, client CPU µs per call) of ``count`` calls, ``in_flight`` at a time."""
    remaining = count

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await call()

    cpu, started = time.process_time(), time.perf_counter()
    if in_flight == 1:
        await worker()
    else:
        async with anyio.create_task_group() as tg:
            for _ in range(in_flight):
                tg.start_soon(worker)
    elapsed, used = time.perf_counter() - started, time.process_time() - cpu
    return count / elapsed, used / count * 1e6


async def drive(call: Call, count: int) -> dict[str, float]:
    await timed(call, 100, 1)  # warm up
    seq, seq_cpu = await timed(call, count, 1)
    par, par_cpu = await timed(call, count * 2, IN_FLIGHT)
    return {
        "seq /s": seq,
        f"x{IN_FLIGHT} /s": par,
        "seq CPU us/call": seq_cpu,
        f"x{IN_FLIGHT} CPU us/call": par_cpu,
    }


async def light(url: str, era: str, count: int) -> dict[str, float]:
    client = LoadClient(url, modern=era == MODERN)
    try:
        await client.open_session()
        await client.connect(IN_FLIGHT)
        # Each call takes a connection of its own in turn: 32 workers never share one.
        free = list(client.connections[:IN_FLIGHT])

        async def call() -> None:
            connection = free.pop()
            try:
                await client.echo(connection)
            finally:
                free.append(connection)

        return await drive(call, count)
    finally:
        client.close()


async def ours(url: str, era: str, count: int) -> dict[str, float]:
    params = types.CallToolRequestParams(name="echo", arguments={"text": "hello"})
    version = MODERN if era == MODERN else None
    async with Client(streamable_http_client(url), protocol_version=version) as client:
        stub = client.stub

        async def call() -> None:
            result = await stub.call_tool(params)
            assert result.content[0].text == "hello"  # type: ignore[union-attr]

        return await drive(call, count)


async def sdk(url: str, era: str, count: int) -> dict[str, float]:
    from mcp.client import Client as SdkClient

    mode = MODERN if era == MODERN else "legacy"
    async with SdkClient(url, mode=mode) as client:

        async def call() -> None:
            result = await client.call_tool("echo", {"text": "hello"})
            assert result.content[0].text == "hello"  # type: ignore[union-attr]

        return await drive(call, count)


CLIENTS: dict[str, Callable[[str, str, int], Awaitable[dict[str, float]]]] = {
    "light": light,
    "mcpbind": ours,
    "python-sdk": sdk,
}


def table(title: str, results: dict[str, dict[str, list[float]]]) -> None:
    names = list(results)
    metrics = list(next(iter(results.values())))
    print(title)
    ratios = [n for n in ("python-sdk", "light") if n in names]
    print(
        f"  {'':<18}"
        + "".join(f"{n:>12}" for n in names)
        + "".join(f"{'mcpbind/' + n:>20}" for n in ratios)
    )
    for metric in metrics:
        medians = {n: statistics.median(results[n][metric]) for n in names}
        print(
            f"  {metric:<18}"
            + "".join(f"{medians[n]:>12.0f}" for n in names)
            + "".join(f"{medians['mcpbind'] / medians[n]:>20.2f}" for n in ratios)
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=1000, help="sequential calls (x2 in flight)")
    parser.add_argument("--era", choices=[VERSION, MODERN, "both"], default="both")
    parser.add_argument("--clients", default=",".join(CLIENTS), help="comma-separated subset")
    args = parser.parse_args()
    eras = (VERSION, MODERN) if args.era == "both" else (args.era,)
    names = args.clients.split(",")
    process, url = start(
        "mcpbind", [sys.executable, str(ROOT / "runtime_http.py"), "--serve", "mcpbind"]
    )
    try:
        for era in eras:
            results: dict[str, dict[str, list[float]]] = {name: {} for name in names}
            for _ in range(args.rounds):
                for name in names:
                    got = run(CLIENTS[name], url, era, args.calls)
                    for metric, value in got.items():
                        results[name].setdefault(metric, []).append(value)
            table(f"Streamable HTTP clients, {era}, medians of {args.rounds} rounds", results)
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
