"""Instructions per echo call of the Streamable HTTP server's ASGI app, under callgrind (not a
test): ``python bench/http_instructions.py [--era 2025-11-25|2026-07-28|both] [--count N]``.

Rates and CPU times move with whatever else runs on a shared machine; instruction counts do
not. The app (``runtime_http.ours``: the low-level ``Server`` with an ``echo`` tool, as
configured by default) is driven in-process, without sockets or uvicorn, so the count is the
transport's and the session's own work: each POST is an ASGI call with its scope, body and
``send``. It runs under ``valgrind --tool=callgrind`` twice, with 0 and with ``--count`` calls
after the same warm-up; the difference divided by the count is the cost of one call.
``--pythonpath`` runs another install of mcpbind (e.g. ``pip install --target DIR`` of an
older commit) for a before/after comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import _callgrind
import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)

ROOT = Path(__file__).resolve().parent
VERSION = "2025-11-25"
MODERN = "2026-07-28"
WARM_UP = 300
BASE_HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
]
INITIALIZE = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}'
)


async def drive(era: str, count: int) -> None:
    """Start the app's lifespan, open a session (handshake era), warm up, make ``count`` calls."""
    sys.path.insert(0, str(ROOT))
    from runtime_http import MODERN_META, ours

    app = ours(None)
    lifespan: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    lifespan.put_nowait({"type": "lifespan.startup"})
    started = asyncio.Event()

    async def lifespan_send(message: dict[str, Any]) -> None:
        if message["type"] == "lifespan.startup.complete":
            started.set()

    host = asyncio.create_task(app({"type": "lifespan"}, lifespan.get, lifespan_send))
    await started.wait()
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def post(body: bytes, headers: list[tuple[bytes, bytes]]) -> list[dict[str, Any]]:
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if delivered:
                await asyncio.sleep(3600)  # no disconnect while the answer is written
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        sent.clear()
        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
        await app({**scope, "query_string": b"", "client": ("127.0.0.1", 1)}, receive, send)
        return sent

    if era == MODERN:
        headers = [
            *BASE_HEADERS,
            (b"mcp-protocol-version", MODERN.encode()),
            (b"mcp-method", b"tools/call"),
            (b"mcp-name", b"echo"),
        ]
        meta = b"," + MODERN_META
    else:
        answer = await post(INITIALIZE, BASE_HEADERS)
        session_id = dict(answer[0]["headers"])[b"mcp-session-id"]
        headers = [
            *BASE_HEADERS,
            (b"mcp-protocol-version", VERSION.encode()),
            (b"mcp-session-id", session_id),
        ]
        await post(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', headers)
        meta = b""
    for request_id in range(1, WARM_UP + count + 1):
        body = (
            b'{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
            b'"params":{"name":"echo","arguments":{"text":"hello"}%s}}' % (request_id, meta)
        )
        answer = await post(body, headers)
        if b'"hello"' not in answer[-1]["body"]:
            raise SystemExit(f"echo failed: {answer}")
    lifespan.put_nowait({"type": "lifespan.shutdown"})
    await host


def instructions(era: str, count: int, out: Path, pythonpath: str | None) -> int:
    """Instructions the process ran to start, warm up, answer ``count`` calls and exit."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return _callgrind.run([sys.executable, __file__, "--drive", era, str(count)], out, env)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--era", choices=[VERSION, MODERN, "both"], default="both")
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--pythonpath", help="PYTHONPATH for the measured process")
    parser.add_argument("--drive", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        import uvloop

        uvloop.run(drive(args.drive[0], int(args.drive[1])))
        return
    eras = (VERSION, MODERN) if args.era == "both" else (args.era,)
    with tempfile.TemporaryDirectory() as tmp:
        for era in eras:
            base = instructions(era, 0, Path(tmp) / "base.out", args.pythonpath)
            total = instructions(era, args.count, Path(tmp) / "run.out", args.pythonpath)
            per_call = (total - base) / args.count
            print(f"{era}: {per_call:,.0f} instructions per echo call (ASGI app, in-process)")


if __name__ == "__main__":
    main()
