"""The official conformance suite's server scenarios (tools, resources, prompts, utilities),
written with the app layer, on Streamable HTTP: ``python conformance_app.py --port 0`` prints
its URL."""

from __future__ import annotations

import argparse
import base64
import json
import sys
from typing import Annotated, Any

import anyio
from mcpbind.generated.v2025_11_25 import types
from mcpbind.runtime.app import App, Context, ToolError
from mcpbind.runtime.http import serving
from pydantic import BaseModel, Field

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
WAV = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="

app = App("mcpbind-app-conformance", "0.1.0")


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
