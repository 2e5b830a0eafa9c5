"""Peak RSS of a stdio server holding 3 MiB ``tools/call``s, with and without a tight budget.

Starts ``tests/runtime/budget_server.py`` (its sessions' own byte bound lifted) with each
``--budgets`` limit in MiB, sends ``--calls`` calls whose 3 MiB argument the tool holds, and
prints how many were held (the rest answered busy) and the server's peak RSS over its base:
its RSS once it has served one call of the same shape (as ``tests/runtime/test_memory_budget_stdio.py``).

    .venv/bin/python bench/memory_budget.py --budgets 32 256 1024
    .venv/bin/python bench/memory_budget.py --mmap-threshold 131072   # glibc's fixed

``--mmap-threshold`` starts the server with ``MALLOC_MMAP_THRESHOLD_`` set (glibc: blocks that
large are mapped, and unmapped once freed, instead of staying in the heap).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)
import anyio
import orjson

ROOT = Path(__file__).resolve().parent.parent
SERVER = str(ROOT / "tests" / "runtime" / "budget_server.py")
MIB = 1024 * 1024
DATA = b"x" * (3 * MIB)


def status_mib(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field}")


def peak_mib(pid: int) -> float:
    return status_mib(pid, "VmHWM:")


async def run(budget: int, calls: int, mmap_threshold: int) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the checkout, as the tests run it
    if mmap_threshold:
        env["MALLOC_MMAP_THRESHOLD_"] = str(mmap_threshold)
    async with await anyio.open_process(
        [sys.executable, SERVER, "stdio", str(budget)],
        cwd=ROOT,
        stderr=subprocess.DEVNULL,
        env=env,
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        init = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}}}  # fmt: skip
        await process.stdin.send(orjson.dumps(init) + b"\n")
        buffer = b""
        while b"\n" not in buffer:
            buffer += await process.stdout.receive(1 << 20)
        # The base: the RSS once one call of the same shape was served (and released).
        warm = b'{"jsonrpc":"2.0","id":"warm","method":"tools/call","params":{"name":"budget",'
        await process.stdin.send(warm + b'"arguments":{"data":"' + DATA + b'"}}}\n')
        while buffer.count(b"\n") < 2:
            buffer += await process.stdout.receive(1 << 20)
        buffer = buffer.split(b"\n", 1)[1]
        base = status_mib(process.pid, "VmRSS:")
        for n in range(calls):
            head = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hold",' % n
            await process.stdin.send(head + b'"arguments":{"data":"' + DATA + b'"}}}\n')
        await process.stdin.send(b'{"jsonrpc":"2.0","id":"ping","method":"ping"}\n')
        busy = 0
        buffer = buffer.split(b"\n", 1)[1]
        while True:
            while b"\n" not in buffer:
                buffer += await process.stdout.receive(1 << 20)
            line, buffer = buffer.split(b"\n", 1)
            message = orjson.loads(line)
            if message.get("id") == "ping":
                break
            busy += "error" in message
        grown = peak_mib(process.pid) - base
        print(f"| {budget} MiB | {calls - busy} | {busy} | +{grown:.0f} MiB over {base:.0f} MiB |")
        process.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budgets", type=int, nargs="+", default=[32, 256, 1024])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--mmap-threshold", type=int, default=0, help="bytes; 0: glibc's own")
    args = parser.parse_args()
    print("| budget | held | busy | peak RSS |\n|---|--:|--:|--:|")
    for budget in args.budgets:
        anyio.run(run, budget, args.calls, args.mmap_threshold)


if __name__ == "__main__":
    main()
