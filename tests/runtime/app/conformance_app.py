"""The official conformance suite's server scenarios (tools, resources, prompts, utilities),
written with the app layer, on Streamable HTTP: ``python conformance_app.py --port 0`` prints
its URL."""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from mcpbind.generated.v2025_11_25 import types
from mcpbind.runtime.app import App, Context, ToolError
from mcpbind.runtime.http import serving
from pydantic import BaseModel, Field

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
WAV = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="

app = App("mcpbind-app-conformance", "0.1.0")
# The skills extension (sep-2640-*): the conformance fixtures' skills, from their folder.
app.skills_from(Path(__file__).resolve().parents[2] / "conformance" / "skills")


@app.tool(structured_output=False)
def test_simple_text() -> str:
    """Returns simple text."""
    return "This is a simple text response for testing."


@app.tool()
def test_image_content() -> bytes:
    """Returns an image."""
    return base64.b64decode(PNG)


@app.tool()
def test_audio_content() -> bytes:
    """Returns audio."""
    return base64.b64decode(WAV)


@app.tool()
def test_embedded_resource() -> types.EmbeddedResource:
    """Returns an embedded resource."""
    return types.EmbeddedResource(
        type="resource",
        resource=types.TextResourceContents(
            uri="test://embedded-resource",
            mimeType="text/plain",
            text="This is an embedded resource content.",
        ),
    )


@app.tool()
def test_multiple_content_types() -> list[Any]:
    """Returns text, an image and a resource."""
    resource = types.TextResourceContents(
        uri="test://mixed-content-resource",
        mimeType="application/json",
        text='{"test":"data","value":123}',
    )
    return [
        types.TextContent(text="Multiple content types test:"),
        types.ImageContent(data=PNG, mimeType="image/png"),
        types.EmbeddedResource(type="resource", resource=resource),
    ]


@app.tool(structured_output=False)
async def test_tool_with_logging(ctx: Context) -> str:
    """Logs three messages while it runs."""
    await ctx.info("Tool execution started")
    await anyio.sleep(0.05)
    await ctx.info("Tool processing data")
    await anyio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Tool with logging executed successfully"


@app.tool(structured_output=False)
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50, 100 of 100."""
    for step, progress in enumerate((0, 50, 100)):
        if step:
            await anyio.sleep(0.05)
        await ctx.report_progress(progress, 100)
    return "Tool with progress executed successfully"


@app.tool()
def test_error_handling() -> str:
    """Always fails."""
    raise ToolError("This tool intentionally returns an error for testing")


@app.tool(structured_output=False)
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's LLM."""
    reply = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {getattr(reply.content, 'text', None) or '(no text)'}"


class Contact(BaseModel):
    username: str = Field(description="User's response")
    email: str = Field(description="User's email address")


@app.tool(structured_output=False)
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user."""
    reply = await ctx.elicit(message, Contact)
    return f"User response: action={reply.action}, content={json.dumps(reply.raw.content)}"


class UserName(BaseModel):
    name: str


class Confirm(BaseModel):
    ok: bool


class Colour(BaseModel):
    color: str


@app.tool(structured_output=False)
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks the user's name (an input request in the stateless era)."""
    reply = await ctx.elicit("What is your name?", UserName, key="user_name")
    return f"Hello, {reply.data.name if reply.data else 'stranger'}!"


@app.tool(structured_output=False)
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model."""
    reply = await ctx.sample(
        "What is the capital of France?", max_tokens=100, key="capital_question"
    )
    return f"The model said: {getattr(reply.content, 'text', '')}"


@app.tool(structured_output=False)
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Lists the client's roots."""
    roots = await ctx.list_roots(key="client_roots")
    return "Roots: " + ", ".join(root.uri for root in roots)


@app.tool(structured_output=False)
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Asks for a confirmation."""
    reply = await ctx.elicit("Please confirm", Confirm, key="confirm")
    return f"Confirmed: {reply.data.ok if reply.data else False}"


@app.tool(structured_output=False)
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks three things in one round."""
    answers: dict[str, Any] = {}

    async def name() -> None:
        answers["name"] = await ctx.elicit("What is your name?", UserName, key="user_name")

    async def greeting() -> None:
        answers["greeting"] = await ctx.sample("Generate a greeting", max_tokens=50, key="greeting")

    async def roots() -> None:
        answers["roots"] = await ctx.list_roots(key="client_roots")

    async with anyio.create_task_group() as tg:
        for ask in (name, greeting, roots):
            tg.start_soon(ask)
    return f"Got {len(answers)} answers"


@app.tool(structured_output=False)
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Asks twice, one round after the other."""
    first = await ctx.elicit("Step 1: What is your name?", UserName, key="step1")
    second = await ctx.elicit("Step 2: What is your favorite color?", Colour, key="step2")
    name = first.data.name if first.data else "?"
    return f"{name} likes {second.data.color if second.data else '?'}"


@app.tool(structured_output=False)
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Asks a name; its sealed requestState must come back untouched."""
    reply = await ctx.elicit("What is your name?", UserName, key="user_name")
    return f"Hello, {reply.data.name if reply.data else 'stranger'}!"


class Topic(BaseModel):
    context: str


@app.tool(structured_output=False)
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only what the client declared it can answer."""
    asked = []
    if "sampling" in ctx.client_capabilities:
        await ctx.sample("What is the capital of France?", max_tokens=100, key="sampling")
        asked.append("sampling")
    if "elicitation" in ctx.client_capabilities:
        await ctx.elicit("What is your name?", UserName, key="elicitation")
        asked.append("elicitation")
    return f"Asked: {', '.join(asked) or 'nothing'}"


@app.prompt()
async def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt that asks the user for its context first."""
    reply = await ctx.elicit("What context should the prompt use?", Topic, key="user_context")
    return f"Use this context: {reply.data.context if reply.data else 'none'}"


@app.tool(structured_output=False)
async def test_missing_capability(ctx: Context) -> str:
    """Needs sampling: a client that did not declare it gets -32021 (stateless era)."""
    reply = await ctx.sample("Say hi", max_tokens=10)
    return f"The model said: {getattr(reply.content, 'text', '')}"


@app.tool(structured_output=False)
async def test_streaming_elicitation(ctx: Context) -> str:
    """Elicits: in the stateless era an input request, never a request on the stream."""
    reply = await ctx.elicit("What is your name?", UserName)
    return f"Hello, {reply.data.name if reply.data else 'stranger'}!"


@app.tool(structured_output=False)
async def test_logging_tool(ctx: Context) -> str:
    """Logs at every level; only what the request's logLevel asks for is sent."""
    for level in ("debug", "info", "warning", "error"):
        await ctx.log(level, f"a {level} message")
    return "Logged"


class Defaults(BaseModel):
    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: Literal["active", "inactive", "pending"] = "active"
    verified: bool = True


@app.tool(structured_output=False)
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Elicits with defaults for every primitive type."""
    reply = await ctx.elicit("Please review your details", Defaults)
    return f"Elicitation completed: action={reply.action}, content={json.dumps(reply.raw.content)}"


TITLED = [
    {"const": f"value{i}", "title": t} for i, t in ((1, "First Option"), (2, "Second Option"))
]
CHOICES = [
    {"const": f"value{i}", "title": t} for i, t in ((1, "First Choice"), (2, "Second Choice"))
]


class Enums(BaseModel):
    untitledSingle: Literal["option1", "option2", "option3"] | None = None
    titledSingle: Annotated[str | None, Field(json_schema_extra={"oneOf": TITLED})] = None
    legacyEnum: Annotated[
        Literal["opt1", "opt2", "opt3"] | None,
        Field(json_schema_extra={"enumNames": ["Option One", "Option Two", "Option Three"]}),
    ] = None
    untitledMulti: list[Literal["option1", "option2", "option3"]] | None = None
    titledMulti: Annotated[
        list[str] | None, Field(json_schema_extra={"items": {"anyOf": CHOICES}})
    ] = None


@app.tool(structured_output=False)
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Elicits with every enum schema variant."""
    reply = await ctx.elicit("Pick your options", Enums)
    return f"Elicitation completed: action={reply.action}, content={json.dumps(reply.raw.content)}"


@app.resource("test://static-text", description="A static text resource")
def static_text() -> str:
    return "This is the content of the static text resource."


@app.resource("test://static-binary", description="A static PNG", mime_type="image/png")
def static_binary() -> bytes:
    return base64.b64decode(PNG)


@app.resource("test://watched-resource", description="A resource to subscribe to")
def watched_resource() -> str:
    return "Watched resource content."


@app.resource("test://template/{id}/data", description="A templated resource")
def template_data(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@app.prompt()
def test_simple_prompt() -> str:
    """A prompt without arguments."""
    return "This is a simple prompt for testing."


@app.prompt()
def test_prompt_with_arguments(
    arg1: Annotated[str, Field(description="First test argument")],
    arg2: Annotated[str, Field(description="Second test argument")],
) -> str:
    """A prompt with two arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@app.prompt()
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, Field(description="URI of the resource to embed")],
) -> list[Any]:
    """A prompt embedding a resource."""
    resource = types.TextResourceContents(
        uri=resourceUri, mimeType="text/plain", text="Embedded resource content for testing."
    )
    return [
        {"role": "user", "content": types.EmbeddedResource(type="resource", resource=resource)},
        "Please process the embedded resource above.",
    ]


@app.prompt()
def test_prompt_with_image() -> list[Any]:
    """A prompt with an image."""
    return [
        {"role": "user", "content": types.ImageContent(data=PNG, mimeType="image/png")},
        "Please analyze the image above.",
    ]


@app.completion("test_prompt_with_arguments", "arg1")
def complete_arg1(prefix: str) -> list[str]:
    return [word for word in ("paris", "park", "party") if word.startswith(prefix)]


async def main(port: int) -> None:
    async with serving(app.http_app(), port=port) as url:
        print(f"{url}/mcp", flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=3001)
    anyio.run(main, parser.parse_args().port)
    sys.exit(0)
