"""The app of the cluster task tests: tools that run as tasks (``App`` with ``task_support``).

``slow`` sleeps ``seconds`` (optional task support), ``ask`` elicits the user's name first (its
task waits in ``input_required`` until the answer comes). ``build`` returns the ``App``; its
``server`` is what each worker of ``rediskit.workers`` / ``WorkerProcess`` serves.
"""

from __future__ import annotations

import anyio
from mcpbind.runtime.app import App, Context
from pydantic import BaseModel


class Name(BaseModel):
    name: str


def build() -> App:
    app = App("cluster-tasks", "1.0")

    @app.tool(task_support="optional")
    async def slow(seconds: float) -> str:
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    @app.tool(task_support="optional")
    async def ask(ctx: Context) -> str:
        reply = await ctx.elicit("Your name?", Name)
        return f"hello {reply.data.name}" if reply.data else f"no name ({reply.action})"

    return app
