"""What the memory budget's tests share: ``budget_server.py`` processes, measured, and the
calls sent to them.

Each server runs with a 32 MiB budget and its sessions' own byte bound lifted, so the budget is
what stops requests: 100 ``tools/call`` of 3 MiB each (held by the tool until released) would
hold 300 MiB; the server keeps a few and answers the rest "busy" at once, answers pings
meanwhile, and serves everything again after the release. Peak RSS (``VmHWM``) and RSS are read
from the server process.

The bound is the issue's: peak RSS at most base plus the budget, nothing allowed over it. The
base is the server's RSS once it has served one call of the same shape (a 3 MiB ``tools/call``)
and released it: what that first call leaves behind for good (imported code paths, validators,
allocator arenas) is the process's, not something a peer holds, and is the same whatever the
budget. ``BUDGET_TRACE=1`` in the server's environment adds ``tracemalloc``'s figures to what
the ``budget`` tool answers.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import orjson
from anyio.abc import Process
from httpkit import MODERN_META

__all__ = [
    "BUDGET_MIB",
    "BUSY",
    "CALLS",
    "MIB",
    "MIN_HELD",
    "PING",
    "REPO_ROOT",
    "SIZE",
    "TAIL",
    "big_call",
    "body",
    "call_head",
    "is_busy",
    "rss_mib",
    "server_process",
    "small_call",
    "tool_text",
    "within_budget",
]

HERE = Path(__file__).parent
SERVER = str(HERE / "budget_server.py")
REPO_ROOT = HERE.parent.parent
MIB = 1024 * 1024
BUDGET_MIB = 32
SIZE = 3 * MIB
CALLS = 100
BUSY = -31503
DATA = b"x" * SIZE
PING = {"jsonrpc": "2.0", "id": "ping", "method": "ping"}
#: The fewest calls a server must hold (of the ten that would fit): a message being read is
#: held at three times its bytes (``READ_FACTOR``), and over HTTP several bodies are read at
#: once, each held so from its first byte: four to six there, eight on stdio (measured).
MIN_HELD = 3
#: The servers run with glibc's mmap threshold fixed (docs/security.md, "Memory budget"):
#: with its default, sliding threshold, freed blocks of a few MiB stay in the heap.
SERVER_ENV = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"}


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    raise AssertionError(f"no {field}")


def peak_kib(pid: int) -> int:
    """The process's peak resident set (``VmHWM``), in KiB."""
    return _status_kib(pid, "VmHWM:")


def rss_mib(pid: int) -> float:
    """The process's resident set now (``VmRSS``), in MiB."""
    return _status_kib(pid, "VmRSS:") / 1024


def within_budget(pid: int, base: float, what: str, budget_mib: float = BUDGET_MIB) -> float:
    """The peak RSS over ``base`` (MiB), asserted to be at most the budget."""
    growth = peak_kib(pid) / 1024 - base
    print(f"{what}: peak RSS +{growth:.1f} MiB over a base of {base:.1f} MiB")
    assert growth <= budget_mib, f"{what}: peak RSS +{growth:.2f} MiB, budget {budget_mib} MiB"
    return growth


def call_head(request_id: int | str, name: str, modern: bool = False) -> bytes:
    meta = b',"_meta":' + orjson.dumps(MODERN_META) if modern else b""
    return (
        b'{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s"%s,'
        b'"arguments":{"data":"' % (orjson.dumps(request_id), name.encode(), meta)
    )


TAIL = b'"}}}'


def big_call(request_id: int | str, name: str = "hold", modern: bool = False) -> list[bytes]:
    """A ``tools/call`` whose ``data`` argument is 3 MiB, as parts (the big one shared)."""
    return [call_head(request_id, name, modern), DATA, TAIL]


def small_call(request_id: int | str, name: str, modern: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if modern:
        params["_meta"] = MODERN_META
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def is_busy(message: Any) -> bool:
    error = message.get("error") if type(message) is dict else None
    return (
        type(error) is dict
        and error.get("code") == BUSY
        and error.get("data") == {"reason": "busy"}
    )


def tool_text(message: dict[str, Any]) -> str:
    assert "result" in message, message
    return str(message["result"]["content"][0]["text"])


@asynccontextmanager
async def server_process(
    kind: str, budget_mib: int = BUDGET_MIB
) -> AsyncIterator[tuple[Process, str]]:
    """``budget_server.py`` with a 32 MiB budget; its base URL ("" for stdio)."""
    async with await anyio.open_process(
        [sys.executable, SERVER, kind, str(budget_mib)],
        cwd=REPO_ROOT,
        stderr=subprocess.DEVNULL,
        env=SERVER_ENV,
    ) as process:
        base = ""
        if kind != "stdio":
            assert process.stdout is not None
            with anyio.fail_after(20):
                line = b""
                while not line.endswith(b"\n"):
                    line += await process.stdout.receive(1)
            base = line.decode().strip()
        try:
            yield process, base
        finally:
            process.kill()


async def body(parts: list[bytes]) -> AsyncIterator[bytes]:
    """A request body streamed in ``parts`` (the 3 MiB one shared, never copied)."""
    for part in parts:
        yield part
