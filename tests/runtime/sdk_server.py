"""A server on the official Python SDK (``mcp``), for interop tests and the benchmark.

``python sdk_server.py``: tools ``echo`` and ``slow`` (progress, cancellable), a resource and
a prompt, over stdio.
"""

from __future__ import annotations

import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sdk-peer")


@server.tool()
def echo(text: str) -> str:
    """Return the text it is given."""
    return text


@server.tool()
async def slow(steps: int, delay: float, ctx: Context) -> str:  # type: ignore[type-arg]
    """Sleep ``steps`` times, reporting progress each time; says on stderr when it finishes."""
    for step in range(1, steps + 1):
        await anyio.sleep(delay)
        await ctx.report_progress(step, steps, f"step {step}")
    print(f"slow finished {steps} steps", file=sys.stderr, flush=True)
    return f"done after {steps} steps"


@server.resource("memo://readme")
def readme() -> str:
    """A fixed text."""
    return "hello from the SDK"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Please greet {name} warmly."


if __name__ == "__main__":
    server.run()
