"""An app whose tools run as tasks (2025-11-25), for the task tests over every transport.

``slow``: optional task support, reports progress then waits ``seconds``; ``needs_task``:
required; ``plain``: no task support; ``ask``: elicits the user's name (input_required);
``fails``: an ``isError`` result; ``sample_task``: asks the client's LLM through a task of the
client's (the client as receiver). ``python tasks_server.py`` serves stdio;
``python tasks_server.py http PORT`` is not needed: tests serve ``app.http_app()`` in process.
"""

from __future__ import annotations

import anyio
from mcpbind.runtime.app import App, Context, ToolError
from mcpbind.runtime.tasks import call_as_task
from pydantic import BaseModel


class Name(BaseModel):
    name: str


def build_app() -> App:
    app = App("tasks-test", "1.0")

    @app.tool(task_support="optional")
    async def slow(seconds: float, ctx: Context) -> str:
        await ctx.report_progress(1, 3, "started")
        await anyio.sleep(seconds)
        await ctx.report_progress(2, 3, "slept")
        return f"slept {seconds}"

    @app.tool(task_support="required")
    async def needs_task(text: str) -> str:
        return text.upper()

    @app.tool()
    async def plain(text: str) -> str:
        return text

    @app.tool(task_support="optional")
    async def ask(ctx: Context) -> str:
        reply = await ctx.elicit("Your name?", Name)
        return f"hello {reply.data.name}" if reply.data else f"no name ({reply.action})"

    @app.tool(task_support="optional")
    async def fails() -> str:
        raise ToolError("it broke")

    @app.tool(task_support="optional")
    async def sample_task(prompt: str, ctx: Context) -> str:
        handle = await call_as_task(
            ctx.request_context,
            "sampling/createMessage",
            {
                "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                "maxTokens": 10,
            },
            ttl=30_000,
        )
        first = handle.task["status"]
        result = await handle.result(poll=True)
        return f"{first}:{result.content.text}"

    return app


if __name__ == "__main__":
    build_app().run_stdio()
