"""An MCP app meant to run as several workers behind a load balancer, sharing state in Redis.

From the repository root, with a Redis on 6379 and haproxy installed::

    python -m mcpbind.runtime.cluster serve examples.cluster.app:app --workers 3 \\
        --redis redis://127.0.0.1:6379 --port 9000 \\
        --haproxy /tmp/mcpbind-haproxy.cfg --run-haproxy

Clients then use ``http://127.0.0.1:9000/mcp``; any worker serves any request. ``touch`` raises
``notifications/resources/updated`` on whichever worker runs it, and it reaches the listeners
and subscribers of every worker (through Redis). Nothing here knows about the cluster: the same
``App`` runs as one process with ``app.run_http()``.
"""

import os

import anyio
from mcpbind.runtime.app import App, Context

#: 2026-07-28 multi round-trip requests carry a ``requestState`` sealed with a key every worker
#: must share, or a retry landing on another worker is refused: the default key is the one
#: ``MCPBIND_STATE_KEY`` names, which ``serve`` draws per cluster unless it is set (set it
#: yourself for states to outlive a restart of the cluster).
app = App("cluster-demo", version="1.0")
NOTES: dict[str, str] = {}


@app.tool()
def echo(text: str) -> str:
    """Return the text it is given."""
    return text


@app.tool()
def whoami() -> str:
    """Which worker served this call (its MCPBIND_WORKER_ID)."""
    return os.environ.get("MCPBIND_WORKER_ID", "single process")


@app.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to `steps`, a step every 0.1 s, reporting progress (a resumable stream)."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
        await anyio.sleep(0.1)
    return f"counted to {steps}"


@app.tool()
async def touch(note: str) -> str:
    """Tell every subscriber of note://latest, on every worker, that it changed."""
    await app.notify_resource_updated("note://latest")
    return f"touched {note}"


@app.resource("note://latest", mime_type="text/plain")
def latest() -> str:
    """The worker that answers, as a stand-in for state kept elsewhere (a database)."""
    return os.environ.get("MCPBIND_WORKER_ID", "single process")


if __name__ == "__main__":
    app.run_http(port=9000)
