"""Benchmark of the runtime over stdio (not a test): ``python bench/runtime_stdio.py``.

Servers, each measured by the same client in the same run, one after the other in every round:

* ``bare-loop``: ``bench/bare_stdio.py``, an orjson read-parse-write loop with no runtime at all;
* ``typescript-sdk``: an echo tool on the official TypeScript SDK written as its README shows
  (``bench/peers/ts_stdio_server.cjs``; the SDK installed with npm into ``$MCPBIND_NPM_CACHE``
  on first use, as ``bench/runtime_http.py`` does; left out without npm and node);
* ``mcpbind``: the example server (``examples/server.py``) on the low-level ``Server``;
* ``app``: the README's app (``examples/app_server.py``), whose ``echo`` is a plain ``def``
  (run in a worker thread, as the SDK's ``MCPServer`` does);
* ``app-async``: the app with only an ``async def`` echo (``bench/peers/app_async_echo.py``);
* ``python-sdk``: the same tools on the official Python SDK (``tests/runtime/sdk_server.py``).

The client is a minimal blocking driver (``os.write`` a line, ``os.read`` until the answer), so the
figures are the servers' and not a client's; ``--pin`` runs the driver on CPU 0 and each server on
CPU 1 (``taskset``; on a machine others share, leave it to the scheduler). Measured: the start-up
(spawn to the answer to ``initialize``), sequential round trips of ``ping`` and of ``tools/call``
of ``echo``; ``echo`` with 32 requests in flight; the server's CPU time per sequential ``echo``
(steadier than rates when other work shares the machine); the idle server's RSS. Then (unless
``--no-stacks``) whole stacks (mcpbind's ``Client`` with its server, the SDK's ``ClientSession``
with its server) and the import time of ``mcpbind.runtime`` plus one revision against ``import
mcp``. Prints medians of ``--rounds`` rounds, and each mcpbind server's ratios to the TypeScript
SDK, the Python SDK and the bare loop (for CPU, lower is better).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)
import anyio
import orjson
from mcpbind.generated.v2025_11_25 import types
from mcpbind.runtime import Client, StdioParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
IN_FLIGHT = 32
#: Pin each server to CPU 1 and the driver to CPU 0 (``--pin``, with two CPUs or more).
PIN = False


@dataclass
class Target:
    """A server to measure: how to start it and the arguments of its echo tool."""

    argv: list[str]
    echo: dict[str, Any]


def typescript_sdk() -> list[str] | str:
    """The TypeScript SDK's echo server's command; a reason if it cannot run."""
    sys.path.insert(0, str(ROOT / "bench"))
    from runtime_http import node, npm_cache

    cache, executable = npm_cache(), node()
    if isinstance(cache, str) or executable is None:
        return cache if isinstance(cache, str) else "node not found"
    return [executable, str(ROOT / "bench" / "peers" / "ts_stdio_server.cjs"), str(cache)]


def targets() -> dict[str, Target]:
    text = {"name": "echo", "arguments": {"text": "hello"}}
    found = {"bare-loop": Target([sys.executable, str(ROOT / "bench" / "bare_stdio.py")], text)}
    command = typescript_sdk()
    if isinstance(command, list):
        found["typescript-sdk"] = Target(command, text)
    else:
        print(f"typescript-sdk left out: {command}", file=sys.stderr)
    found["mcpbind"] = Target([sys.executable, "-m", "examples.server"], text)
    found["app"] = Target([sys.executable, str(ROOT / "examples" / "app_server.py")], text)
    app_async = str(ROOT / "bench" / "peers" / "app_async_echo.py")
    found["app-async"] = Target([sys.executable, app_async], text)
    found["python-sdk"] = Target(
        [sys.executable, str(ROOT / "tests" / "runtime" / "sdk_server.py")], text
    )
    return found


def pinned(argv: list[str]) -> list[str]:
    """``argv`` run on CPU 1 with ``--pin`` (the driver keeps CPU 0)."""
    if PIN and shutil.which("taskset"):
        return ["taskset", "-c", "1", *argv]
    return argv


class Driver:
    """One server process and a blocking line-at-a-time JSON-RPC client for it."""

    def __init__(self, argv: list[str]) -> None:
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.write_fd = self.process.stdin.fileno()
        self.read_fd = self.process.stdout.fileno()
        self.buffer = b""
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        os.write(self.write_fd, orjson.dumps(message) + b"\n")

    def receive(self) -> dict[str, Any]:
        while b"\n" not in self.buffer:
            chunk = os.read(self.read_fd, 65536)
            if not chunk:
                raise SystemExit("the server closed its output")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message: dict[str, Any] = orjson.loads(line)
        return message

    def request_bytes(self, method: str, params: dict[str, Any] | None) -> bytes:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        return orjson.dumps(message) + b"\n"

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        os.write(self.write_fd, self.request_bytes(method, params))
        while True:  # skip the server's own notifications and requests
            answer = self.receive()
            if "method" not in answer:
                if "error" in answer:
                    raise SystemExit(f"{method} failed: {answer['error']}")
                return answer

    def initialize(self) -> None:
        self.call(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench-driver", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def sequential(self, count: int, method: str, params: dict[str, Any] | None) -> float:
        start = time.perf_counter()
        for _ in range(count):
            self.call(method, params)
        return count / (time.perf_counter() - start)

    def pipelined(self, count: int, params: dict[str, Any]) -> float:
        """``count`` echo calls with ``IN_FLIGHT`` always outstanding."""
        start = time.perf_counter()
        sent = answered = 0
        while sent < IN_FLIGHT:
            os.write(self.write_fd, self.request_bytes("tools/call", params))
            sent += 1
        while answered < count:
            if "method" in self.receive():
                continue
            answered += 1
            if sent < count:
                os.write(self.write_fd, self.request_bytes("tools/call", params))
                sent += 1
        return count / (time.perf_counter() - start)

    def close(self, grace: float = 5) -> None:
        """Close the server's input and give it ``grace`` seconds to exit before killing it."""
        self.process.stdin.close()  # type: ignore[union-attr]
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def measure(target: Target, count: int) -> dict[str, float]:
    spawned = time.perf_counter()
    driver = Driver(pinned(target.argv))
    try:
        driver.initialize()
        startup = time.perf_counter() - spawned
        driver.sequential(300, "tools/call", target.echo)  # warm up
        time.sleep(0.5)
        pid = driver.process.pid
        idle = rss_mib(pid)
        ping = driver.sequential(count, "ping", None)
        cpu = cpu_seconds(pid)
        echo = driver.sequential(count, "tools/call", target.echo)
        cpu_per_echo = (cpu_seconds(pid) - cpu) / count * 1e6
        return {
            "ping seq /s": ping,
            "echo seq /s": echo,
            f"echo x{IN_FLIGHT} /s": driver.pipelined(count * 2, target.echo),
            "server CPU us/echo": cpu_per_echo,
            "idle RSS MiB": idle,
            "start-up ms": startup * 1000,
        }
    finally:
        driver.close()


async def rate(count: int, call: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    for _ in range(count):
        await call()
    return count / (time.perf_counter() - start)


Echo = Callable[[], Awaitable[None]]


@asynccontextmanager
async def our_echo(argv: list[str]) -> AsyncIterator[Echo]:
    """mcpbind's ``Client`` over ``stdio_client`` to the server ``argv`` starts: its echo call."""
    params = StdioParameters(argv[0], argv[1:], cwd=ROOT, stderr="devnull")
    echo = types.CallToolRequestParams(name="echo", arguments={"text": "hello"})
    async with Client(stdio_client(params)) as client:
        stub = client.stub

        async def call() -> None:
            result = await stub.call_tool(echo)
            assert result.content[0].text == "hello"

        yield call


@asynccontextmanager
async def sdk_echo(argv: list[str]) -> AsyncIterator[Echo]:
    """The official ``ClientSession`` over its stdio client to the server ``argv`` starts."""
    from mcp import ClientSession, StdioServerParameters, stdio_client as sdk_stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=ROOT)
    async with sdk_stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def call() -> None:
            result = await session.call_tool("echo", {"text": "hello"})
            assert result.content[0].text == "hello"  # type: ignore[union-attr]

        yield call


async def stack(
    client: Callable[[list[str]], AbstractAsyncContextManager[Echo]], argv: list[str], count: int
) -> float:
    """Sequential echo calls/s of ``client`` against the server ``argv`` starts."""
    async with client(argv) as call:
        for _ in range(200):
            await call()
        return await rate(count, call)


async def our_stack(count: int) -> float:
    """Sequential echo of mcpbind's ``Client`` against mcpbind's server."""
    return await stack(our_echo, [sys.executable, "-m", "examples.server"], count)


async def sdk_stack(count: int) -> float:
    """Sequential echo of the official client against the official server."""
    sdk_server = str(ROOT / "tests" / "runtime" / "sdk_server.py")
    return await stack(sdk_echo, [sys.executable, sdk_server], count)


def import_seconds(code: str) -> float:
    probe = f"import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return float(out.stdout)


def table(results: dict[str, dict[str, list[float]]], rounds: int) -> None:
    """Medians, a row per server; then each mcpbind server's ratios to the others."""
    names = list(results)
    metrics = list(results[names[0]])
    medians = {n: {m: statistics.median(results[n][m]) for m in metrics} for n in names}
    pin = "driver on CPU 0, servers pinned to CPU 1" if PIN else "not pinned"
    print(f"stdio, the same driver for every server; medians of {rounds} rounds ({pin})")
    print(f"{'server':<16}" + "".join(f"{m:>20}" for m in metrics))
    for name in names:
        print(f"{name:<16}" + "".join(f"{medians[name][m]:>20.1f}" for m in metrics))
    ours = [n for n in ("mcpbind", "app", "app-async") if n in medians]
    peers = [n for n in ("typescript-sdk", "python-sdk", "bare-loop") if n in medians]
    print("ratios (CPU: lower is better)")
    for name in ours:
        for peer in peers:
            line = f"{name + ' / ' + peer:<32}"
            for metric in metrics:
                mine, theirs = medians[name][metric], medians[peer][metric]
                # CPU is counted in clock ticks: a short run may see none.
                line += f"{metric}={mine / theirs:.2f}  " if theirs else f"{metric}=n/a  "
            print(line.rstrip())


def main(rounds: int, count: int, with_stacks: bool) -> None:
    if PIN:
        os.sched_setaffinity(0, {0})
    servers = targets()
    results: dict[str, dict[str, list[float]]] = {name: {} for name in servers}
    stacks: dict[str, list[float]] = {"mcpbind": [], "python-sdk": []}
    for _ in range(rounds):
        for name, target in servers.items():
            for metric, value in measure(target, count).items():
                results[name].setdefault(metric, []).append(value)
        if with_stacks:
            stacks["mcpbind"].append(anyio.run(our_stack, count))
            stacks["python-sdk"].append(anyio.run(sdk_stack, count))
    table(results, rounds)
    if not with_stacks:
        return
    imports = {
        "mcpbind": [
            import_seconds(
                "import mcpbind.runtime, mcpbind.generated; mcpbind.generated.load('2025-11-25')"
            )
            for _ in range(rounds + 2)
        ],
        "python-sdk": [import_seconds("import mcp") for _ in range(rounds + 2)],
    }
    print("whole stacks (each client with its own server), and import time")
    ours, theirs = statistics.median(stacks["mcpbind"]), statistics.median(stacks["python-sdk"])
    print(f"{'echo seq /s':<20}{ours:>16.0f}{theirs:>16.0f}{ours / theirs:>16.2f}")
    ours = statistics.median(imports["mcpbind"]) * 1000
    theirs = statistics.median(imports["python-sdk"]) * 1000
    print(f"{'import ms':<20}{ours:>16.0f}{theirs:>16.0f}{ours / theirs:>16.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--count", type=int, default=3000, help="round trips per sequential measurement"
    )
    parser.add_argument("--no-stacks", action="store_true", help="servers only")
    parser.add_argument("--pin", action="store_true", help="driver on CPU 0, servers on CPU 1")
    args = parser.parse_args()
    PIN = args.pin and (os.cpu_count() or 1) >= 2
    main(args.rounds, args.count, not args.no_stacks)
