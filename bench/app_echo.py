"""The echo tool on mcpbind's app layer against the same tool elsewhere (not a test):
``python bench/app_echo.py``.

Servers, the same small server each (``echo``, ``weather``, ``count``, a resource, a prompt):

* ``app``: ``examples/app_server.py``, on ``mcpbind.runtime.app``;
* ``lowlevel``: ``examples/lowlevel_server.py``, the runtime's ``Server`` with a handler per method;
* ``sdk``: ``bench/peers/sdk_small_server.py``, the official Python SDK's ``MCPServer``;
* ``app-async``: an app with only ``echo``, written ``async def``. The example's ``echo`` is a
  plain ``def``, which the app layer (like the SDK's ``MCPServer``) runs in a worker thread;
  the low-level handler is a coroutine. This row is the app layer's cost without that hop;
* ``sdk-async``: the same ``async def`` echo on the SDK's ``MCPServer``, its peer.

The clients are the existing benchmarks' light drivers, so the figures are the servers' own:
over stdio ``bench/runtime_stdio.py``'s ``Driver`` (blocking line-at-a-time JSON-RPC), over
Streamable HTTP ``bench/runtime_http.py``'s ``LoadClient`` (raw asyncio HTTP/1.1 keep-alive),
once in a 2025-11-25 session and once in the stateless 2026-07-28 era (no session, the
headers and ``_meta`` on every POST). Each HTTP server runs in its own process on uvicorn
(``serving``), each as configured by default (the SDK answers with SSE, mcpbind with JSON when
the answer is ready at once); ``sdk-json`` is the SDK with its JSON-response option.

Measured: sequential ``tools/call`` of ``echo``, and with 32 in flight; the server's CPU time
per call (ratios of CPU: lower is better). Servers alternate within each round; prints
medians of ``--rounds`` rounds and the ratios app / SDK (the issue's target: at least 5) and
app / low-level (at least 0.8), and app-async / low-level.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)
import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from mcpbind.runtime import run  # noqa: E402
from runtime_http import MODERN, measure_light, start  # noqa: E402
from runtime_stdio import Target, measure  # noqa: E402

SCRIPTS = {
    "app": ROOT / "examples" / "app_server.py",
    "lowlevel": ROOT / "examples" / "lowlevel_server.py",
    "sdk": ROOT / "bench" / "peers" / "sdk_small_server.py",
}
STDIO_SERVERS = ("app", "lowlevel", "sdk", "app-async", "sdk-async")
HTTP_SERVERS = ("app", "lowlevel", "sdk", "sdk-json", "app-async", "sdk-async")
ECHO = {"name": "echo", "arguments": {"text": "hello"}}


def async_app() -> Any:
    from mcpbind.runtime.app import App

    app = App("demo-async", version="1.0")

    @app.tool()
    async def echo(text: str) -> str:
        """Return the text it is given."""
        return text

    return app


def async_sdk() -> Any:
    from mcp.server.mcpserver import MCPServer

    mcp = MCPServer("demo-async", version="1.0")

    @mcp.tool()
    async def echo(text: str) -> str:
        """Return the text it is given."""
        return text

    return mcp


def stdio_command(kind: str) -> list[str]:
    if kind in SCRIPTS:
        return [sys.executable, str(SCRIPTS[kind])]
    return [sys.executable, __file__, "--stdio", kind]


def asgi_app(kind: str) -> Any:
    """The HTTP app of one of the servers, built the way its own documentation says."""
    if kind == "app-async":
        return async_app().http_app()
    if kind == "sdk-async":
        return async_sdk().streamable_http_app()
    if kind == "app":
        from examples.app_server import app

        return app.http_app()
    if kind == "lowlevel":
        from mcpbind.runtime.http import StreamableHTTPServer

        from examples.lowlevel_server import server

        return StreamableHTTPServer(server.serve)
    sys.path.insert(0, str(SCRIPTS["sdk"].parent))
    from sdk_small_server import mcp

    return mcp.streamable_http_app(json_response=kind == "sdk-json")


async def serve(kind: str) -> None:
    from mcpbind.runtime.http import serving

    async with serving(asgi_app(kind)) as url:
        print(f"{url}/mcp", flush=True)
        await anyio.sleep_forever()


def record(into: dict[str, dict[str, list[float]]], name: str, got: dict[str, float]) -> None:
    for metric, value in got.items():
        into.setdefault(name, {}).setdefault(metric, []).append(value)


def table(title: str, results: dict[str, dict[str, list[float]]]) -> None:
    names = list(results)
    print(title)
    ratios = [("app/sdk", "sdk", "app"), ("app/lowlevel", "lowlevel", "app")]
    ratios.append(("async/lowlevel", "lowlevel", "app-async"))
    ratios.append(("async/sdk-async", "sdk-async", "app-async"))
    head = f"  {'':<20}" + "".join(f"{n:>11}" for n in names)
    print(head + "".join(f"{r:>16}" for r, _, _ in ratios))
    for metric in results["app"]:
        medians = {n: statistics.median(results[n][metric]) for n in names}
        line = f"  {metric:<20}" + "".join(f"{medians[n]:>11.0f}" for n in names)
        print(line + "".join(f"{medians[a] / medians[o]:>16.2f}" for _, o, a in ratios))


def main(rounds: int, count: int, transports: list[str]) -> None:
    stdio: dict[str, dict[str, list[float]]] = {}
    http: dict[str, dict[str, dict[str, list[float]]]] = {"2025-11-25": {}, MODERN: {}}
    me = [sys.executable, __file__, "--serve"]
    servers = {}
    if "http" in transports:
        servers = {name: start(name, [*me, name]) for name in HTTP_SERVERS}
    try:
        for _ in range(rounds):
            if "stdio" in transports:
                for name in STDIO_SERVERS:
                    got = measure(Target(stdio_command(name), ECHO), count)
                    record(stdio, name, {k: v for k, v in got.items() if "ping" not in k})
            for name, (process, url) in servers.items():
                for era, results in http.items():
                    got = run(measure_light, url, process.pid, count, era == MODERN)
                    record(results, name, got)
    finally:
        for process, _url in servers.values():
            process.terminate()
            process.wait(timeout=10)
    if stdio:
        table(f"stdio, medians of {rounds} rounds (calls/s; CPU us per call)", stdio)
    for era, results in http.items():
        if results:
            table(f"Streamable HTTP, {era}, medians of {rounds} rounds", results)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--count", type=int, default=1000, help="sequential calls per round")
    parser.add_argument("--transport", choices=["stdio", "http", "both"], default="both")
    parser.add_argument("--serve", choices=HTTP_SERVERS, help=argparse.SUPPRESS)
    parser.add_argument("--stdio", choices=["app-async", "sdk-async"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stdio == "app-async":
        async_app().run_stdio()
    elif args.stdio:
        async_sdk().run()
    elif args.serve:
        run(serve, args.serve)
    else:
        chosen = ["stdio", "http"] if args.transport == "both" else [args.transport]
        main(args.rounds, args.count, chosen)
