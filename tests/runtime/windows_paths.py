"""Both ends of a stdio round trip on the portable (Windows) path, run on Linux.

``python windows_paths.py client`` starts ``python windows_paths.py server`` over stdio and
prints one JSON object of what it saw. Both run with ``MCPBIND_STDIO_PORTABLE=1`` (the switch in
``runtime/transports/_platform.py``) and without the POSIX process-group calls, which are deleted
from ``os`` before mcpbind is imported: a call to one would fail the run.

The server's tool ``spawn`` starts a sleeping child that ignores SIGTERM and answers its pid, ``where`` says how the
server's stdio was set up, ``crash`` exits at once, leaving what ``spawn`` started an orphan.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

for _name in ("killpg", "setsid", "getpgid", "setpgid"):
    if hasattr(os, _name):
        delattr(os, _name)

import anyio  # noqa: E402 (the POSIX calls are gone before anything is imported)
import psutil  # noqa: E402
from mcpbind.generated.v2025_11_25 import types  # noqa: E402
from mcpbind.runtime import Client, ConnectionClosedError, StdioParameters, stdio_client  # noqa: E402
from mcpbind.runtime.app import App  # noqa: E402

#: A child that ignores SIGTERM, so only the escalation to a kill ends it.
SLEEPER = [
    sys.executable,
    "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)",
]

app = App("portable", version="1")


@app.tool()
def spawn() -> str:
    """Start a child that sleeps; answer its pid."""
    return str(subprocess.Popen(SLEEPER).pid)


@app.tool()
def where() -> str:
    """How this server's stdio is set up."""
    return json.dumps(
        {
            "stdin_blocking": os.get_blocking(0),  # Windows: Python 3.12 and later
            "group_leader": hasattr(os, "getpgrp") and os.getpgrp() == os.getpid(),
            "portable": os.environ.get("MCPBIND_STDIO_PORTABLE"),
        }
    )


@app.tool()
def echo(text: str) -> str:
    """Answer the text."""
    return text


@app.tool()
def crash() -> str:
    """Exit without a word, leaving whatever was spawned an orphan."""
    os._exit(3)


async def text(client: Client, name: str, **arguments: Any) -> str:
    params = types.CallToolRequestParams(name=name, arguments=arguments)
    result = await client.stub.call_tool(params)
    block: Any = result.content[0]
    return str(block.text)


async def both_ways_at_once(client: Client) -> bool:
    """Two calls of 2 MB each in flight: each side writes while the other does, more than a
    pipe holds. With blocking writes on the event loop both would wait for a reader forever."""
    big = "x" * (2 * 1024 * 1024)
    answers: list[str] = []

    async def call() -> None:
        answers.append(await text(client, "echo", text=big))

    with anyio.move_on_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            tg.start_soon(call)
    return answers == [big, big]


async def gone(pids: list[int]) -> bool:
    with anyio.move_on_after(10):
        while any(psutil.pid_exists(p) and psutil.Process(p).status() != "zombie" for p in pids):
            await anyio.sleep(0.05)
        return True
    return False


async def client() -> None:
    params = StdioParameters(sys.executable, [__file__, "server"], close_wait=0.5, term_wait=0.5)
    seen: dict[str, Any] = {}
    async with Client(stdio_client(params)) as closing:
        server = int(closing.session.connection.extra["pid"])
        seen["where"] = json.loads(await text(closing, "where"))
        seen["both_ways_at_once"] = await both_ways_at_once(closing)
        child = int(await text(closing, "spawn"))
        seen["child_ran"] = psutil.pid_exists(child)
    seen["closed_gone"] = await gone([server, child])

    async with Client(stdio_client(params)) as crashing:
        server = int(crashing.session.connection.extra["pid"])
        orphan = int(await text(crashing, "spawn"))
        await anyio.sleep(2.0)  # the client looks at the server's tree every 0.5 s
        try:
            await text(crashing, "crash")
        except ConnectionClosedError as exc:
            seen["crash"] = str(exc)
        # Linux gives the orphan a new parent, so only the client's earlier look knows it.
        seen["crash_gone"] = await gone([server, orphan])
    print(json.dumps(seen))


if __name__ == "__main__":
    if sys.argv[1:] == ["server"]:
        app.run_stdio()
    else:
        anyio.run(client)
