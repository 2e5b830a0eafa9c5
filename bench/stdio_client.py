"""Benchmark of stdio clients (not a test): ``python bench/stdio_client.py``.

Each client starts the same server and calls its ``echo`` tool:

* ``mcpbind``: mcpbind's ``Client`` over ``stdio_client`` (typed params, validation of the
  result, the transport);
* ``python-sdk``: the official Python SDK's ``ClientSession`` over its ``stdio_client``;
* ``typescript-sdk``: the official TypeScript SDK's ``Client`` over ``StdioClientTransport``
  (``bench/peers/ts_client.cjs``, a Node process of its own that measures itself; the SDK
  installed with npm into ``$MCPBIND_NPM_CACHE`` on first use; ``n/a`` without npm and node).

Servers (``--servers``): ``bare-loop`` (``bench/bare_stdio.py``, an orjson loop that answers at
once: what is left is the client's cost) and ``mcpbind``, the low-level ``Server`` of
``examples/server.py``. Each client calls ``echo`` sequentially, then with 32 calls in flight,
in turn within each round; the tables show medians of ``--rounds`` rounds: calls/s and the
client's own CPU µs per call (its process's CPU time; the server is another process), and
mcpbind's ratio to each SDK (for CPU, lower is better).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from http_client import drive, typescript_calls, typescript_unavailable, versions
from mcpbind.runtime import run
from runtime_http import VERSION, table
from runtime_stdio import our_echo, sdk_echo, targets

Measure = Callable[[list[str], int], Awaitable[dict[str, float]]]


async def ours(argv: list[str], count: int) -> dict[str, float]:
    async with our_echo(argv) as call:
        return await drive(call, count)


async def sdk(argv: list[str], count: int) -> dict[str, float]:
    async with sdk_echo(argv) as call:
        return await drive(call, count)


async def typescript(argv: list[str], count: int) -> dict[str, float]:
    return await typescript_calls(["stdio", *argv], count)


CLIENTS: dict[str, Measure] = {"mcpbind": ours, "python-sdk": sdk, "typescript-sdk": typescript}
SERVERS = ("bare-loop", "mcpbind")


def bench_server(server: str, argv: list[str], names: list[str], rounds: int, calls: int) -> None:
    """Every client in ``names`` against its own process of the server ``argv`` starts."""
    # The TypeScript SDK speaks the handshake era the servers answer in (2025-11-25).
    reason = typescript_unavailable(VERSION) if "typescript-sdk" in names else None
    absent = {"typescript-sdk": reason} if reason is not None else {}
    results: dict[str, dict[str, list[float]]] = {name: {} for name in names}
    for _ in range(rounds):
        for name in names:
            if name in absent:
                continue
            for metric, value in run(CLIENTS[name], argv, calls).items():
                results[name].setdefault(metric, []).append(value)
    ratios = [n for n in ("python-sdk", "typescript-sdk") if n in names]
    title = (
        f"stdio clients against the {server} server, medians of {rounds} rounds "
        "(CPU: the client's own; lower is better)"
    )
    table(title, results, ratios, absent)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=2000, help="sequential calls (x2 in flight)")
    parser.add_argument("--servers", default=",".join(SERVERS), help="comma-separated subset")
    parser.add_argument("--clients", default=",".join(CLIENTS), help="comma-separated subset")
    args = parser.parse_args()
    found = targets()
    print(versions())
    for server in args.servers.split(","):
        bench_server(server, found[server].argv, args.clients.split(","), args.rounds, args.calls)


if __name__ == "__main__":
    main()
