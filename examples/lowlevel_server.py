"""examples/app_server.py's server on the low-level runtime: one handler per MCP method.

The same three tools (``weather`` with structured output, ``count`` reporting progress), the
``config://app`` resource and the ``greet`` prompt, written against the 2025-11-25 bindings and
served to clients of every revision. Use this style for full control of each method; the app
layer derives all of it from plain typed functions.

Run it with ``python examples/lowlevel_server.py`` (stdio) or ``... --http PORT`` (Streamable
HTTP on 127.0.0.1, at ``/mcp``).
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import INVALID_PARAMS, McpError, RequestContext, Server
from mcpbind.runtime.http import StreamableHTTPServer, serve_forever
from pydantic import BaseModel, ValidationError


class Weather(BaseModel):
    city: str
    temperature_c: float
    conditions: str


class EchoArguments(BaseModel):
    text: str


class WeatherArguments(BaseModel):
    city: str


class CountArguments(BaseModel):
    steps: int


#: A tool's plain text answer as structured output, ``{"result": "..."}`` (as the app layer and
#: the SDK's MCPServer give it). No docstring: it would become the schema's description.
class TextOutput(BaseModel):
    result: str


def schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


TOOLS = [
    types.Tool(
        name="echo",
        description="Return the text it is given.",
        inputSchema=types.ToolInputSchema.model_validate(schema(EchoArguments)),
        outputSchema=types.ToolOutputSchema.model_validate(schema(TextOutput)),
    ),
    types.Tool(
        name="weather",
        title="Weather",
        description="Today's weather in a city.",
        inputSchema=types.ToolInputSchema.model_validate(schema(WeatherArguments)),
        outputSchema=types.ToolOutputSchema.model_validate(schema(Weather)),
    ),
    types.Tool(
        name="count",
        description="Count to `steps`, a step every 0.1 s, reporting progress.",
        inputSchema=types.ToolInputSchema.model_validate(schema(CountArguments)),
        outputSchema=types.ToolOutputSchema.model_validate(schema(TextOutput)),
    ),
]
#: Tools as clients before 2025-06-18 know them: no title, no output schema.
OLD_TOOLS = [
    types.Tool(name=t.name, description=t.description, inputSchema=t.inputSchema) for t in TOOLS
]
CONFIG = '{"theme": "dark", "units": "metric"}'

server = Server("demo", "1.0")


def structured(context: RequestContext) -> bool:
    """Whether the client's revision has structured tool output (2025-06-18 and later)."""
    return context.session.bindings.revision >= "2025-06-18"


def output(context: RequestContext, value: BaseModel, text: str) -> types.CallToolResult:
    """A tool's result: ``text`` for every client, ``value`` as structured content for those
    whose revision has it."""
    content: list[types.ContentBlock] = [types.TextContent(text=text)]
    if not structured(context):
        return types.CallToolResult(content=content)
    return types.CallToolResult(content=content, structuredContent=value.model_dump())


def text(context: RequestContext, value: str) -> types.CallToolResult:
    return output(context, TextOutput(result=value), value)


@server.handler(methods.TOOLS_LIST)
async def list_tools(
    params: types.PaginatedRequestParams, context: RequestContext
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS if structured(context) else OLD_TOOLS)


@server.handler(methods.TOOLS_CALL)
async def call_tool(
    params: types.CallToolRequestParams, context: RequestContext
) -> types.CallToolResult:
    arguments = params.arguments or {}
    try:
        if params.name == "echo":
            return text(context, EchoArguments.model_validate(arguments).text)
        if params.name == "weather":
            city = WeatherArguments.model_validate(arguments).city
            report = Weather(city=city, temperature_c=21.5, conditions="sunny")
            return output(context, report, report.model_dump_json(indent=2))
        if params.name == "count":
            steps = CountArguments.model_validate(arguments).steps
            for step in range(1, steps + 1):
                await context.report_progress(step, steps, f"step {step} of {steps}")
                await anyio.sleep(0.1)
            return text(context, f"counted to {steps}")
    except ValidationError as exc:
        # Bad arguments are the model's to correct: a tool error it can read, not -32603.
        message = f"invalid arguments for {params.name}: {exc}"
        return types.CallToolResult(content=[types.TextContent(text=message)], isError=True)
    raise McpError(INVALID_PARAMS, f"unknown tool {params.name!r}")


@server.handler(methods.RESOURCES_LIST)
async def list_resources(
    params: types.PaginatedRequestParams, context: RequestContext
) -> types.ListResourcesResult:
    config = types.Resource(
        uri="config://app",
        name="config",
        description="The app's settings.",
        mimeType="application/json",
    )
    return types.ListResourcesResult(resources=[config])


@server.handler(methods.RESOURCES_READ)
async def read_resource(
    params: types.ReadResourceRequestParams, context: RequestContext
) -> types.ReadResourceResult:
    if params.uri != "config://app":
        raise McpError(-32002, "Resource not found", {"uri": params.uri})
    contents = types.TextResourceContents(uri=params.uri, text=CONFIG, mimeType="application/json")
    return types.ReadResourceResult(contents=[contents])


@server.handler(methods.PROMPTS_LIST)
async def list_prompts(
    params: types.PaginatedRequestParams, context: RequestContext
) -> types.ListPromptsResult:
    greet = types.Prompt(
        name="greet",
        description="Greet someone by name.",
        arguments=[types.PromptArgument(name="name", required=True)],
    )
    return types.ListPromptsResult(prompts=[greet])


@server.handler(methods.PROMPTS_GET)
async def get_prompt(
    params: types.GetPromptRequestParams, context: RequestContext
) -> types.GetPromptResult:
    name = (params.arguments or {}).get("name")
    if params.name != "greet" or name is None:
        raise McpError(INVALID_PARAMS, "the greet prompt needs a name", {"prompt": params.name})
    message = types.PromptMessage(
        role="user", content=types.TextContent(text=f"Please greet {name} warmly.")
    )
    return types.GetPromptResult(description="Greet someone by name.", messages=[message])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        anyio.run(serve_forever, StreamableHTTPServer(server.serve), "127.0.0.1", int(sys.argv[2]))
    else:
        server.run_stdio()
