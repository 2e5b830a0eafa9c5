"""An example MCP server on the mcpbind runtime, over stdio.

Run it with ``python -m examples.server`` from the repository root (or ``python
examples/server.py``). It shows tools, resources, resource templates, prompts, completion,
logging, progress, and requests back to the client (sampling, elicitation, roots). Written
against the 2025-11-25 bindings; it also serves clients of older revisions.
"""

from __future__ import annotations

import logging
import re
import sys
from typing import Any

import anyio
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import CapabilityError, McpError, RequestContext, Server

TOOLS = [
    types.Tool(
        name="echo",
        description="Return the text it is given.",
        inputSchema=types.ToolInputSchema(
            type="object", properties={"text": {"type": "string"}}, required=["text"]
        ),
    ),
    types.Tool(
        name="add",
        description="Add two numbers.",
        inputSchema=types.ToolInputSchema(
            type="object",
            properties={"a": {"type": "number"}, "b": {"type": "number"}},
            required=["a", "b"],
        ),
    ),
    types.Tool(
        name="slow",
        description="Count to `steps`, sleeping `delay` seconds per step and reporting progress.",
        inputSchema=types.ToolInputSchema(
            type="object", properties={"steps": {"type": "integer"}, "delay": {"type": "number"}}
        ),
    ),
    types.Tool(
        name="ask_llm",
        description="Ask the client's LLM (sampling/createMessage) and return its answer.",
        inputSchema=types.ToolInputSchema(
            type="object", properties={"question": {"type": "string"}}
        ),
    ),
    types.Tool(
        name="ask_user",
        description="Ask the user for their name (elicitation/create).",
        inputSchema=types.ToolInputSchema(type="object"),
    ),
    types.Tool(
        name="roots",
        description="List the client's roots (roots/list).",
        inputSchema=types.ToolInputSchema(type="object"),
    ),
    types.Tool(
        name="fail",
        description="Always fails (an error result).",
        inputSchema=types.ToolInputSchema(type="object"),
    ),
]

RESOURCES = {
    "memo://readme": "mcpbind example server: a few tools, resources and prompts.",
    "memo://numbers": "1 2 3 4 5",
}
SQUARE_ARGUMENT = re.compile(r"-?[0-9]{1,9}")
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

server = Server(
    "mcpbind-example",
    "0.1.0",
    instructions="Try the echo tool, read memo://readme, or get the greet prompt.",
    capabilities={"tools": {"listChanged": False}},
)
state: dict[str, Any] = {"level": "info"}


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


class BadArguments(Exception):
    """A tool was called with arguments outside its input schema."""


def argument(args: dict[str, Any], name: str, kinds: tuple[type, ...], default: Any = None) -> Any:
    """``args[name]`` if it is one of ``kinds`` (``default`` if absent and there is one).

    Check arguments before using them: a client may send anything, and a handler that trips on
    it answers "Internal error" where the caller deserves to hear what was wrong.
    """
    value = args.get(name, default)
    # bool is an int to Python, never a number to JSON Schema.
    if type(value) not in kinds:
        wanted = " or ".join(kind.__name__ for kind in kinds)
        raise BadArguments(f"argument {name!r} must be {wanted}, not {value!r}")
    return value


async def log(context: RequestContext, level: types.LoggingLevel, data: Any) -> None:
    """Send a log message to the client if its chosen level lets it through."""
    if LEVELS.index(level) >= LEVELS.index(state["level"]):
        await context.peer.send_logging_message(
            types.LoggingMessageNotificationParams(level=level, data=data)
        )


@server.handler(methods.TOOLS_LIST)
async def list_tools(
    params: types.PaginatedRequestParams, context: RequestContext
) -> types.ListToolsResult:
    # Two pages, to exercise cursor pagination in clients.
    if params.cursor is None:
        return types.ListToolsResult(tools=TOOLS[:3], nextCursor="page-2")
    if params.cursor == "page-2":
        return types.ListToolsResult(tools=TOOLS[3:])
    raise McpError(-32602, "unknown cursor", {"cursor": params.cursor})


@server.handler(methods.TOOLS_CALL)
async def call_tool(
    params: types.CallToolRequestParams, context: RequestContext
) -> types.CallToolResult:
    try:
        return await run_tool(params, context)
    except BadArguments as exc:
        # Input validation errors are tool errors, which the model can read and correct.
        return types.CallToolResult(content=[types.TextContent(text=str(exc))], isError=True)
    except CapabilityError as exc:
        # The client lacks sampling, elicitation or roots: a tool error the model can read.
        return types.CallToolResult(content=[types.TextContent(text=str(exc))], isError=True)


async def run_tool(
    params: types.CallToolRequestParams, context: RequestContext
) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "echo":
        return text(argument(args, "text", (str,)))
    if params.name == "add":
        return text(str(argument(args, "a", (int, float)) + argument(args, "b", (int, float))))
    if params.name == "slow":
        steps = argument(args, "steps", (int,), 5)
        delay = argument(args, "delay", (int, float), 0.1)
        if not 0 <= steps <= 1_000_000 or not 0 <= delay <= 86_400:
            raise BadArguments("steps must be 0 to 1000000 and delay 0 to 86400 seconds")
        for step in range(1, steps + 1):
            await anyio.sleep(delay)
            await context.report_progress(step, steps, f"step {step} of {steps}")
        await log(context, "info", f"slow finished {steps} steps")
        return text(f"done after {steps} steps")
    if params.name == "ask_llm":
        answer = await context.peer.create_message(
            types.CreateMessageRequestParams(
                messages=[
                    types.SamplingMessage(
                        role="user", content=types.TextContent(text=str(args.get("question")))
                    )
                ],
                maxTokens=100,
            )
        )
        return text(f"the LLM said: {answer.content.text}")
    if params.name == "ask_user":
        if not hasattr(context.peer, "elicit"):
            return types.CallToolResult(
                content=[types.TextContent(text="elicitation needs 2025-06-18 or later")],
                isError=True,
            )
        reply = await context.peer.elicit(
            types.ElicitRequestFormParams(
                message="What is your name?",
                requestedSchema=types.ElicitRequestFormParamsRequestedSchema(
                    type="object",
                    properties={"name": types.StringSchema(type="string")},
                    required=["name"],
                ),
            )
        )
        if reply.action != "accept" or not reply.content:
            return text(f"the user chose {reply.action}")
        return text(f"hello, {reply.content['name']}")
    if params.name == "roots":
        roots = await context.peer.list_roots()
        return text(", ".join(root.uri for root in roots.roots))
    if params.name == "fail":
        return types.CallToolResult(
            content=[types.TextContent(text="this tool always fails")], isError=True
        )
    raise McpError(-32602, f"unknown tool {params.name!r}")


@server.handler(methods.RESOURCES_LIST)
async def list_resources(
    params: types.PaginatedRequestParams, context: RequestContext
) -> types.ListResourcesResult:
    return types.ListResourcesResult(
        resources=[
            types.Resource(uri=uri, name=uri.removeprefix("memo://"), mimeType="text/plain")
            for uri in RESOURCES
        ]
    )


@server.handler(methods.RESOURCES_TEMPLATES_LIST)
async def list_templates(
    params: types.PaginatedRequestParams, context: RequestContext
) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(
        resourceTemplates=[
            types.ResourceTemplate(uriTemplate="square://{n}", name="square", mimeType="text/plain")
        ]
    )


@server.handler(methods.RESOURCES_READ)
async def read_resource(
    params: types.ReadResourceRequestParams, context: RequestContext
) -> types.ReadResourceResult:
    uri = params.uri
    if uri in RESOURCES:
        body = RESOURCES[uri]
    elif uri.startswith("square://"):
        # The template's n: ASCII digits only (str.isdigit also takes "²"), and a bounded size.
        if not SQUARE_ARGUMENT.fullmatch(uri[9:]):
            raise McpError(
                -32602,
                "Invalid params: square://{n} needs an integer n of at most 9 digits",
                {"uri": uri},
            )
        body = str(int(uri[9:]) ** 2)
    else:
        raise McpError(-32002, "Resource not found", {"uri": uri})
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, text=body, mimeType="text/plain")]
    )


@server.handler(methods.PROMPTS_LIST)
async def list_prompts(
    params: types.PaginatedRequestParams, context: RequestContext
) -> types.ListPromptsResult:
    return types.ListPromptsResult(
        prompts=[
            types.Prompt(
                name="greet",
                description="Greet someone by name.",
                arguments=[types.PromptArgument(name="name", required=True)],
            )
        ]
    )


@server.handler(methods.PROMPTS_GET)
async def get_prompt(
    params: types.GetPromptRequestParams, context: RequestContext
) -> types.GetPromptResult:
    if params.name != "greet":
        raise McpError(-32602, f"unknown prompt {params.name!r}")
    name = (params.arguments or {}).get("name", "world")
    return types.GetPromptResult(
        description="A greeting",
        messages=[
            types.PromptMessage(
                role="user", content=types.TextContent(text=f"Please greet {name} warmly.")
            )
        ],
    )


@server.handler(methods.COMPLETION_COMPLETE)
async def complete(
    params: types.CompleteRequestParams, context: RequestContext
) -> types.CompleteResult:
    names = ["alice", "bob", "carol", "dave"]
    values = [n for n in names if n.startswith(params.argument.value)]
    return types.CompleteResult(
        completion=types.CompleteResultCompletion(values=values, total=len(values), hasMore=False)
    )


@server.handler(methods.LOGGING_SETLEVEL)
async def set_level(
    params: types.SetLevelRequestParams, context: RequestContext
) -> types.EmptyResult:
    state["level"] = params.level
    await log(context, "info", f"log level set to {params.level}")
    return types.Result()


def main() -> None:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    server.run_stdio()


if __name__ == "__main__":
    main()
