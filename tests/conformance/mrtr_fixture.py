"""A 2026-07-28 server for the conformance suite's MRTR and listen scenarios, written once.

Every tool that needs the client asks through ``context.peer`` as a handshake-era handler
would; the runtime turns each call into an ``InputRequiredResult`` round. Written against the
2025-11-25 bindings on purpose: the same handlers serve both eras. ``python mrtr_fixture.py
--port 0`` prints its URL; the tools are named after the scenarios in
``/work/shared/spec/conformance-scenarios.txt``.
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import CapabilityError, RequestContext, Server
from mcpbind.runtime.http import StreamableHTTPServer, serving

server = Server(
    "mrtr-fixture", capabilities={"tools": {"listChanged": True}, "prompts": {"listChanged": True}}
)


def form(message: str, field: str) -> types.ElicitRequestFormParams:
    return types.ElicitRequestFormParams(
        message=message,
        requestedSchema=types.ElicitRequestFormParamsRequestedSchema(
            type="object", properties={field: types.StringSchema(type="string")}, required=[field]
        ),
    )


def sampling(text: str) -> types.CreateMessageRequestParams:
    return types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(text=text))],
        maxTokens=50,
    )


def done(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)])


@server.handler(methods.TOOLS_LIST)
async def list_tools(params: Any, context: RequestContext) -> Any:
    names = [
        "elicitation",
        "sampling",
        "list_roots",
        "request_state",
        "multiple_inputs",
        "multi_round",
        "tampered_state",
        "capabilities",
    ]
    names = [f"test_input_required_result_{n}" for n in names]
    names += ["test_trigger_tool_change", "test_trigger_prompt_change", "test_missing_capability"]
    schema = types.ToolInputSchema(type="object")
    return types.ListToolsResult(tools=[types.Tool(name=n, inputSchema=schema) for n in names])


@server.handler(methods.TOOLS_CALL)
async def call_tool(params: types.CallToolRequestParams, context: RequestContext) -> Any:
    name = params.name.removeprefix("test_input_required_result_")
    peer = context.peer
    if name in ("elicitation", "request_state", "tampered_state"):
        reply = await context.asking("user_name").elicit(form("What is your name?", "name"))
        return done(f"Hello, {(reply.content or {}).get('name')}")
    if name == "sampling":
        answer = await peer.create_message(sampling("What is the capital of France?"))
        return done(f"sampled: {answer.content}")
    if name == "list_roots":
        roots = await peer.list_roots()
        return done(", ".join(r.uri for r in roots.roots))
    if name == "multiple_inputs":
        got: dict[str, Any] = {}

        async def one(key: str, call: Any) -> None:
            got[key] = await call

        async with anyio.create_task_group() as tg:
            tg.start_soon(one, "e", peer.elicit(form("Your name?", "name")))
            tg.start_soon(one, "s", peer.create_message(sampling("Hi")))
            tg.start_soon(one, "r", peer.list_roots())
        return done(f"got {sorted(got)}")
    if name == "multi_round":
        first = await peer.elicit(form("Step 1: What is your name?", "name"))
        second = await peer.elicit(form("Step 2: What is your favorite color?", "color"))
        return done(
            f"{(first.content or {}).get('name')} likes {(second.content or {}).get('color')}"
        )
    if params.name == "test_trigger_tool_change":
        await server.notify_tools_changed()
        return done("changed")
    if params.name == "test_trigger_prompt_change":
        await server.notify_prompts_changed()
        return done("changed")
    if params.name == "test_missing_capability":
        answer = await peer.create_message(sampling("needs sampling"))
        return done(f"sampled {answer.model}")
    if name == "capabilities":
        try:
            answer = await peer.elicit(form("Your name?", "name"))
            return done(f"elicited {answer.action}")
        except CapabilityError:
            answer = await peer.create_message(sampling("Pick a name"))
            return done(f"sampled {answer.model}")
    return types.CallToolResult(content=[types.TextContent(text="unknown")], isError=True)


@server.handler(methods.PROMPTS_LIST)
async def list_prompts(params: Any, context: RequestContext) -> Any:
    return types.ListPromptsResult(prompts=[types.Prompt(name="test_input_required_result_prompt")])


@server.handler(methods.PROMPTS_GET)
async def get_prompt(params: types.GetPromptRequestParams, context: RequestContext) -> Any:
    reply = await context.peer.elicit(form("What context should the prompt use?", "context"))
    text = f"Use context: {(reply.content or {}).get('context')}"
    return types.GetPromptResult(
        messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))]
    )


async def _main(port: int) -> None:
    app = StreamableHTTPServer(server.serve, stateless=True)
    async with serving(app, port=port) as url:
        print(f"{url}/mcp", flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=3001)
    anyio.run(_main, parser.parse_args().port)
