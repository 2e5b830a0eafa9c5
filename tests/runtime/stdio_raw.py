"""A stdio server subprocess driven over raw pipes, for input no well-behaved client would send."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
from anyio.abc import Process
from runtime_helpers import EXAMPLE_SERVER, REPO_ROOT

#: A server on the runtime with tunable bounds (``saturation_server.py``).
SATURATION_SERVER = str(Path(__file__).with_name("saturation_server.py"))


class RawServer:
    """A server process, its replies read line by line and parsed."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.buffer = b""

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data)

    async def send_json(self, message: Any) -> None:
        await self.send(orjson.dumps(message) + b"\n")

    async def line(self, timeout: float = 10) -> bytes:
        """The next line the server wrote (``EndOfStream`` once it closed its output)."""
        assert self.process.stdout is not None
        with anyio.fail_after(timeout):
            while b"\n" not in self.buffer:
                self.buffer += await self.process.stdout.receive(1 << 20)
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    async def message(self, timeout: float = 10) -> Any:
        return orjson.loads(await self.line(timeout))

    async def call(self, message: dict[str, Any]) -> Any:
        await self.send_json(message)
        return await self.message()

    async def initialize(self, revision: str = "2025-11-25") -> None:
        reply = await self.call(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": revision,
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        assert reply["result"]["protocolVersion"] == revision
        await self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')


async def raw_example() -> Process:
    return await anyio.open_process(EXAMPLE_SERVER, cwd=REPO_ROOT, stderr=subprocess.DEVNULL)


async def raw_saturation(*options: str) -> Process:
    """``saturation_server.py`` with ``SessionOptions`` fields given as ``name=value``."""
    return await anyio.open_process(
        [sys.executable, SATURATION_SERVER, *options], cwd=REPO_ROOT, stderr=subprocess.DEVNULL
    )


def call(request_id: int | str, name: str, **arguments: Any) -> dict[str, Any]:
    """A ``tools/call`` request."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
