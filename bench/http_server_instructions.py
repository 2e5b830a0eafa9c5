"""Instructions per echo call of a whole Streamable HTTP server process, under callgrind (not a
test): ``python bench/http_server_instructions.py [--era 2025-11-25|2026-07-28|both]
[--count N] [--servers bare,mcpbind]``.

``bench/http_instructions.py`` counts the ASGI app alone; a served call also pays uvicorn
(httptools parsing, the ASGI scope and messages, uvloop's reads and writes). Here each server
of ``bench/runtime_http.py`` (``--serve bare|mcpbind``, on uvicorn with uvloop and httptools,
as the light-client table runs it) is started under ``valgrind --tool=callgrind`` and driven
by that script's ``LoadClient`` from this process: a warm-up (100 sequential calls, 200 with
32 in flight), then ``--count`` sequential calls on one connection, then ``2 x --count`` with
32 in flight. ``callgrind_control --dump`` between the phases writes the counts since the
previous dump, so each phase's instructions are its own, the server's whole process
(interpreter, event loop, uvicorn, the app), divided by its calls.

The bare ASGI app over ours, per call, is the most the light client's rate ratio can reach
while the server is CPU-bound (32 in flight on a shared machine): the CPU ceiling of that row.
``--pythonpath`` measures another checkout or install (the servers get it as ``PYTHONPATH``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _callgrind
import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)
from runtime_http import IN_FLIGHT, MODERN, VERSION, LoadClient

ROOT = Path(__file__).resolve().parent
SERVERS = ("bare", "mcpbind")
PHASES = ("warm", "seq", "connect", "x32")
DUMP_WAIT = 60.0


def serve_argv(server: str, era: str) -> list[str]:
    """The server of ``runtime_http.py`` as its light-client table starts it for ``era``."""
    argv = [sys.executable, str(ROOT / "runtime_http.py"), "--serve", server]
    # Bare answers JSON in both eras; ours is measured as configured in each table: JSON
    # mode for the session era's row, the default (an immediate result as JSON) for 2026.
    return [*argv, "--json"] if server == "bare" or era == VERSION else argv


def dumped(out: Path, tag: str) -> Path | None:
    """The dump file ``callgrind_control --dump=tag`` wrote, once it is complete."""
    for path in out.parent.glob(out.name + ".*"):
        text = path.read_text(errors="replace")
        # "Trigger: dump TAG" (valgrind 3.22's wording; older ones said "Client Request: TAG").
        head = text.partition("\nsummary:")[0]
        named = f"Trigger: dump {tag}\n" in head or f"Client Request: {tag}\n" in head
        if named and _callgrind.TOTALS.search(text):
            return path
    return None


def dump(pid: int, out: Path, tag: str) -> int:
    """Dump (and zero) the server's counters as ``tag``; the instructions since the last dump."""
    subprocess.run(
        ["callgrind_control", f"--dump={tag}", str(pid)], capture_output=True, check=False
    )
    deadline = time.monotonic() + DUMP_WAIT
    while (path := dumped(out, tag)) is None:
        if time.monotonic() > deadline:
            raise SystemExit(f"callgrind wrote no dump {tag!r} for process {pid}")
        time.sleep(0.2)
    return _callgrind.total(path)


async def drive(url: str, pid: int, out: Path, era: str, count: int) -> dict[str, int]:
    """Warm up, then ``count`` sequential calls and ``2 * count`` with 32 in flight, dumped."""
    client = LoadClient(url, era == MODERN)
    await client.open_session()
    await client.sequential(100)
    await client.in_flight(200)
    counts = {"warm": dump(pid, out, "warm")}
    await client.sequential(count)
    counts["seq"] = dump(pid, out, "seq")
    # The 32 connections are opened apart from the calls, so x32 counts no connection set-up.
    for connection in client.connections[1:]:
        if connection.transport is not None:
            connection.transport.close()
    del client.connections[1:]
    await client.connect(IN_FLIGHT)
    counts["connect"] = dump(pid, out, "connect")
    await client.in_flight(2 * count)
    counts["x32"] = dump(pid, out, "x32")
    client.close()
    return counts


def measure(server: str, era: str, count: int, pythonpath: str | None) -> tuple[float, float]:
    """Instructions per call of ``server``'s whole process: sequential, and 32 in flight."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg"
        argv = _callgrind.command(serve_argv(server, era), Path(f"{out}.%p"))
        process = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
        )
        try:
            assert process.stdout is not None
            url = process.stdout.readline().strip()
            if not url.startswith("http://"):
                raise SystemExit(f"the {server} server did not start under callgrind")
            counts = asyncio.run(drive(url, process.pid, Path(f"{out}.{process.pid}"), era, count))
        finally:
            process.kill()
            process.wait()
    return counts["seq"] / count, counts["x32"] / (2 * count)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--era", choices=[VERSION, MODERN, "both"], default="both")
    parser.add_argument("--count", type=int, default=1000, help="sequential calls (x32: twice)")
    parser.add_argument("--servers", default=",".join(SERVERS), help="bare,mcpbind or one")
    parser.add_argument("--pythonpath", help="PYTHONPATH for the measured servers")
    args = parser.parse_args()
    servers = [name for name in args.servers.split(",") if name]
    if not servers or any(name not in SERVERS for name in servers):
        parser.error(f"--servers takes a comma-separated subset of {','.join(SERVERS)}")
    eras = (VERSION, MODERN) if args.era == "both" else (args.era,)
    print("| whole server process, instructions per call | seq | x32 |")
    print("|---|--:|--:|")
    for era in eras:
        for server in servers:
            seq, x32 = measure(server, era, args.count, args.pythonpath)
            print(f"| {era}, {server} | {seq / 1e3:.1f}k | {x32 / 1e3:.1f}k |", flush=True)


if __name__ == "__main__":
    main()
