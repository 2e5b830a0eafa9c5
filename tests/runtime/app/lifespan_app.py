"""An app (and a low-level ``Server``) with a lifespan that writes ``enter <pid>`` and
``exit <pid>`` lines to the file ``$LIFESPAN_LOG``; with ``$LIFESPAN_FAIL`` set it raises
while entering, ``$LIFESPAN_PAUSE`` keeps it starting that many seconds after ``enter``, and
with ``$LIFESPAN_HANG`` set its exit part writes ``hang <pid>`` and never ends (the servers'
``shutdown_timeout`` is then ``$LIFESPAN_SHUTDOWN_TIMEOUT``).
Run as ``python lifespan_app.py stdio | server-stdio | http PORT``, or imported (``app``,
``server``) by the tests and by the cluster launcher (``lifespan_app:app``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import RequestContext, Server
from mcpbind.runtime.app import App, Context


@dataclass
class State:
    """What the lifespan yields: how many times it was entered in this process so far."""

    entered: int
    calls: int = 0


ENTERED = 0


def record(line: str) -> None:
    log = os.environ.get("LIFESPAN_LOG")
    if log:
        with open(log, "a") as file:
            file.write(f"{line} {os.getpid()}\n")


@asynccontextmanager
async def lifespan(owner: Any) -> AsyncIterator[State]:
    global ENTERED
    if os.environ.get("LIFESPAN_FAIL"):
        raise ConnectionError("database unreachable\n(second line)")
    ENTERED += 1
    record("enter")
    # $LIFESPAN_PAUSE: seconds still spent starting after "enter" is written (a signal then).
    await anyio.sleep(float(os.environ.get("LIFESPAN_PAUSE", "0")))
    try:
        yield State(ENTERED)
    finally:
        await anyio.sleep(0.01)  # an await in the exit part: it must run even when cancelled
        if os.environ.get("LIFESPAN_HANG"):
            record("hang")
            await anyio.sleep_forever()
        record("exit")


#: ``shutdown_timeout`` from the environment, else the servers' default.
SHUTDOWN: dict[str, Any] = (
    {"shutdown_timeout": float(os.environ["LIFESPAN_SHUTDOWN_TIMEOUT"])}
    if os.environ.get("LIFESPAN_SHUTDOWN_TIMEOUT")
    else {}
)

app = App("lifespan", lifespan=lifespan, **SHUTDOWN)


@app.tool()
def state(ctx: Context[State]) -> dict[str, int]:
    """The lifespan's value as this request sees it."""
    ctx.lifespan_context.calls += 1
    return {
        "entered": ctx.lifespan_context.entered,
        "calls": ctx.lifespan_context.calls,
        "pid": os.getpid(),
    }


server: Server[State] = Server("lifespan-server", lifespan=lifespan, **SHUTDOWN)


@server.handler(methods.TOOLS_CALL)
async def call(
    params: types.CallToolRequestParams, context: RequestContext[Any, State]
) -> types.CallToolResult:
    value = context.lifespan_context
    value.calls += 1
    text = f"entered={value.entered} calls={value.calls}"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def http_app() -> Any:
    """The app's Streamable HTTP endpoint, for ``uvicorn --factory lifespan_app:http_app``."""
    return app.http_app()


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "stdio":
        app.run_stdio()
    elif mode == "server-stdio":
        server.run_stdio()
    else:
        app.run_http(port=int(sys.argv[2]))
