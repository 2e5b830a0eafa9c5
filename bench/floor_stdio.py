"""The running floor of a stdio server's start-up (not an MCP server; ``bench/import_cost.py``).

The least any server on mcpbind's stack must load and build before its first answer: anyio's
asyncio backend on uvloop (as ``core/run.py`` runs it), orjson, pydantic and the generated model
base, and one model whose validator is built when the first request is read (the ``initialize``
params). It reads its pipe on readiness with non-blocking ``os.read``, as the runtime does, and
answers as ``bench/bare_stdio.py`` does. Whatever the example servers cost beyond this is the
runtime's, the app's and the revision's.
"""

from __future__ import annotations

import os

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)
import anyio
import orjson
from bare_stdio import answer
from mcpbind.generated.support import MCPModel


class Implementation(MCPModel):
    name: str
    version: str


class InitializeParams(MCPModel):
    protocolVersion: str
    capabilities: dict[str, object]
    clientInfo: Implementation


async def serve() -> None:
    os.set_blocking(0, False)
    pending = b""
    while True:
        await anyio.wait_readable(0)
        chunk = os.read(0, 65536)
        if not chunk:
            return
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            message = orjson.loads(line)
            if message.get("method") == "initialize":
                InitializeParams.model_validate(message["params"])
            if "id" in message:
                os.write(1, orjson.dumps(answer(message)) + b"\n")


if __name__ == "__main__":
    anyio.run(serve, backend="asyncio", backend_options={"use_uvloop": True})
