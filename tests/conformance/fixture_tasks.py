"""The tools the ``tasks-*`` scenarios (the 2026-07-28 tasks extension, SEP-2663) ask of a server.

They are ordinary tool handlers: which of them run as tasks is the runtime's business, told by
``TASK_SUPPORT`` (``execution.taskSupport``) and ``DEFERRED`` (the tool whose handler gathers
input by multi round-trip results first and then calls ``start_task``). A handler asks the
client through ``context.peer`` in every case: inside a task that parks the task in
``input_required``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcpbind.generated.v2026_07_28 import types
from mcpbind.runtime import INTERNAL_ERROR, McpError, RequestContext
from mcpbind.runtime.tasks import TaskSupport, start_task

TASK_SUPPORT = {
    "slow_compute": "optional",
    "failing_job": "required",
    "protocol_error_job": "optional",
    "confirm_delete": "optional",
    "multi_input": "optional",
    "test_tool_with_task": "required",
}
DEFERRED = {"test_tool_with_task"}


def _tool(name: str, description: str, properties: dict[str, Any] | None = None) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties or {}},
    }
    if name in TASK_SUPPORT:
        tool["execution"] = {"taskSupport": TASK_SUPPORT[name]}
    return tool


TASK_TOOLS = [
    _tool("greet", "Greets by name, at once", {"name": {"type": "string"}}),
    _tool(
        "slow_compute",
        "Sleeps `seconds` seconds, then answers",
        {"seconds": {"type": "number"}, "label": {"type": "string"}},
    ),
    _tool("failing_job", "Reports a tool error after a moment"),
    _tool("protocol_error_job", "Fails with a protocol error"),
    _tool("confirm_delete", "Asks to confirm, then deletes", {"filename": {"type": "string"}}),
    _tool("multi_input", "Asks two things at once"),
    _tool("test_tool_with_task", "Asks the user's name, then works on it as a task"),
]


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def _confirm(message: str) -> types.ElicitRequestFormParams:
    return types.ElicitRequestFormParams.model_validate(
        {
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {"confirm": {"type": "boolean"}, "name": {"type": "string"}},
            },
        }
    )


async def greet(args: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    return {"content": [text(f"Hello, {args.get('name', 'World')}!")]}


async def slow_compute(args: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    seconds = args.get("seconds", 1)
    await anyio.sleep(float(seconds) if type(seconds) in (int, float) else 1.0)
    return {"content": [text(f"Computed {args.get('label', '')} after {seconds}s")]}


async def failing_job(args: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    await anyio.sleep(0.5)
    return {"isError": True, "content": [text("The job failed, as it always does")]}


async def protocol_error_job(args: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    raise McpError(INTERNAL_ERROR, "protocol_error_job broke down, as it always does")


async def confirm_delete(args: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    filename = args.get("filename", "")
    reply = await context.peer.elicit(_confirm(f"Delete {filename}?"))
    confirmed = reply.action == "accept" and (reply.content or {}).get("confirm") is True
    return {"content": [text(f"Deleted {filename}" if confirmed else f"Kept {filename}")]}


async def multi_input(args: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    names: list[str] = []

    async def ask(question: str) -> None:
        reply = await context.peer.elicit(_confirm(question))
        names.append(str((reply.content or {}).get("name", "")))

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask, "First name?")
        tg.start_soon(ask, "Second name?")
    return {"content": [text(f"Got {', '.join(sorted(names))}")]}


async def test_tool_with_task(args: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    reply = await context.asking("user_name").elicit(_confirm("What is your name?"))
    name = (reply.content or {}).get("name", "")
    await start_task(context)  # the input is in: go on in the background
    await anyio.sleep(0.2)
    return {"content": [text(f"Hello, {name}! Your task is done.")]}


HANDLERS: dict[str, Callable[[dict[str, Any], RequestContext], Awaitable[dict[str, Any]]]] = {
    "greet": greet,
    "slow_compute": slow_compute,
    "failing_job": failing_job,
    "protocol_error_job": protocol_error_job,
    "confirm_delete": confirm_delete,
    "multi_input": multi_input,
    "test_tool_with_task": test_tool_with_task,
}


def task_support() -> TaskSupport:
    """The fixture's task support: its tools' ``taskSupport``, the deferred one."""
    return TaskSupport(tools=TASK_SUPPORT, deferred=DEFERRED)
