"""Benchmark of Streamable HTTP clients (not a test): ``python bench/http_client.py``.

One mcpbind server (``bench/runtime_http.py``'s low-level ``Server`` with an ``echo`` tool, as
configured by default, on uvicorn in its own process) is driven in the same run by:

* ``light``: ``runtime_http.LoadClient``, a raw asyncio HTTP/1.1 client that parses only the
  framing: the ceiling any client can reach against this server here;
* ``mcpbind``: mcpbind's own ``Client`` over ``streamable_http_client`` (the whole stack:
  typed params, validation of the result, the transport);
* ``python-sdk``: the official Python SDK's ``Client`` (``mcp``) on its Streamable HTTP client;
* ``typescript-sdk``: the official TypeScript SDK's ``Client`` on its
  ``StreamableHTTPClientTransport`` (``bench/peers/ts_client.cjs``, a Node process of its own
  that measures itself; the SDK installed with npm into ``$MCPBIND_NPM_CACHE`` on first use, as
  ``bench/runtime_http.py`` does). In an era the installed SDK does not speak, and without npm
  and node, its column says ``n/a`` and a footnote says why.

Both eras: a 2025-11-25 session (initialize handshake) and the stateless 2026-07-28 era (no
session; every POST carries ``_meta`` and the ``Mcp-*`` headers). Each client calls ``echo``
sequentially, then with 32 calls in flight; clients alternate within each round and the table
shows medians of ``--rounds`` rounds, calls/s and the client's CPU µs per call (its own
process's CPU time: the server runs elsewhere), and mcpbind's ratio to each SDK and to the
ceiling (for CPU, lower is better).
"""

from __future__ import annotations

import argparse
import functools
import importlib.metadata
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NamedTuple

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)
import anyio

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from mcpbind.generated.v2025_11_25 import types  # noqa: E402
from mcpbind.runtime import Client, run  # noqa: E402
from mcpbind.runtime.http import streamable_http_client  # noqa: E402
from runtime_http import (  # noqa: E402
    IN_FLIGHT,
    MODERN,
    VERSION,
    LoadClient,
    node,
    npm_cache,
    start,
    table,
)

Call = Callable[[], Awaitable[None]]
#: Calls before the measured ones (Node's JIT is still compiling the TypeScript SDK's after 100).
WARMUP = 300
TS_CLIENT = ROOT / "peers" / "ts_client.cjs"


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


def figures(seq: tuple[float, float], par: tuple[float, float]) -> dict[str, float]:
    """A client's row from (calls/s, CPU µs per call) sequentially and with calls in flight."""
    return {
        "seq /s": seq[0],
        f"x{IN_FLIGHT} /s": par[0],
        "seq CPU us/call": seq[1],
        f"x{IN_FLIGHT} CPU us/call": par[1],
    }


async def drive(call: Call, count: int) -> dict[str, float]:
    await timed(call, WARMUP, 1)
    return figures(await timed(call, count, 1), await timed(call, count * 2, IN_FLIGHT))


class TypeScriptSdk(NamedTuple):
    """The installed TypeScript SDK, as ``ts_client.cjs versions`` reports it."""

    command: list[str]  #: ``node ts_client.cjs CACHE``
    version: str
    supported: list[str]  #: its SUPPORTED_PROTOCOL_VERSIONS
    node: str


@functools.cache
def typescript_sdk() -> TypeScriptSdk | str:
    """The TypeScript SDK's client, asked what it is; a reason if it cannot run."""
    cache, executable = npm_cache(), node()
    if isinstance(cache, str) or executable is None:
        return cache if isinstance(cache, str) else "node not found"
    command = [executable, str(TS_CLIENT), str(cache)]
    probe = subprocess.run([*command, "versions"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return f"ts_client.cjs failed: {probe.stderr[-300:]}"
    found = json.loads(probe.stdout)
    supported = [str(v) for v in found["supported"]]
    return TypeScriptSdk(command, str(found["version"]), supported, str(found["node"]))


def versions() -> str:
    """Which SDKs the tables measure, for their headings."""
    sdk = typescript_sdk()
    if isinstance(sdk, str):
        typescript = f"n/a ({sdk})"
    else:
        typescript = f"@modelcontextprotocol/sdk {sdk.version} on Node {sdk.node}"
    return f"python-sdk: mcp {importlib.metadata.version('mcp')}; typescript-sdk: {typescript}"


def typescript_unavailable(era: str) -> str | None:
    """Why the TypeScript SDK's client cannot take part in ``era``; None if it can."""
    sdk = typescript_sdk()
    if isinstance(sdk, str):
        return sdk
    if era in sdk.supported:
        return None
    return (
        f"@modelcontextprotocol/sdk {sdk.version} speaks {', '.join(sdk.supported)} (its "
        f"SUPPORTED_PROTOCOL_VERSIONS), always after an initialize handshake: not the stateless "
        f"{era} era"
    )


async def typescript_calls(target: list[str], count: int) -> dict[str, float]:
    """The TypeScript SDK's client against ``target`` (``http URL`` or ``stdio COMMAND...``),
    measured by itself in its own process (run from the repository, for ``-m`` commands)."""
    sdk = typescript_sdk()
    assert not isinstance(sdk, str), sdk
    argv = [*sdk.command, str(count), str(WARMUP), str(IN_FLIGHT), *target]
    done = await anyio.run_process(argv, cwd=ROOT.parent, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the TypeScript SDK's client failed: {done.stderr.decode()[-500:]}")
    report = json.loads(done.stdout)
    sequential, in_flight = report["sequential"], report["in_flight"]
    return figures(
        (sequential["rate"], sequential["cpu_us"]), (in_flight["rate"], in_flight["cpu_us"])
    )


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
            assert result.content[0].text == "hello"

        return await drive(call, count)


async def sdk(url: str, era: str, count: int) -> dict[str, float]:
    from mcp.client import Client as SdkClient

    mode = MODERN if era == MODERN else "legacy"
    async with SdkClient(url, mode=mode) as client:

        async def call() -> None:
            result = await client.call_tool("echo", {"text": "hello"})
            assert result.content[0].text == "hello"  # type: ignore[union-attr]

        return await drive(call, count)


async def typescript(url: str, era: str, count: int) -> dict[str, float]:
    return await typescript_calls(["http", url], count)


CLIENTS: dict[str, Callable[[str, str, int], Awaitable[dict[str, float]]]] = {
    "light": light,
    "mcpbind": ours,
    "python-sdk": sdk,
    "typescript-sdk": typescript,
}


def bench_era(era: str, url: str, names: list[str], rounds: int, calls: int) -> None:
    """Every client in ``names`` against the server at ``url``, in turn in each round."""
    missing = {"typescript-sdk": typescript_unavailable(era)} if "typescript-sdk" in names else {}
    absent = {name: reason for name, reason in missing.items() if reason is not None}
    results: dict[str, dict[str, list[float]]] = {name: {} for name in names}
    for _ in range(rounds):
        for name in names:
            if name in absent:
                continue
            for metric, value in run(CLIENTS[name], url, era, calls).items():
                results[name].setdefault(metric, []).append(value)
    ratios = [n for n in ("python-sdk", "typescript-sdk", "light") if n in names]
    title = f"Streamable HTTP clients, {era}, medians of {rounds} rounds (CPU: lower is better)"
    table(title, results, ratios, absent)


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
    print(versions())
    names = args.clients.split(",")
    process, url = start(
        "mcpbind", [sys.executable, str(ROOT / "runtime_http.py"), "--serve", "mcpbind"]
    )
    try:
        for era in eras:
            bench_era(era, url, names, args.rounds, args.calls)
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
