"""A small app used by the app layer's tests, in process and as a stdio subprocess
(``python tests/runtime/app/app_server.py``)."""

from __future__ import annotations

import enum
from typing import Annotated, Literal

from mcpbind.runtime.app import App, Context
from pydantic import BaseModel, Field

app = App("app-tests", "1.0", instructions="A test app.")


class Weather(BaseModel):
    city: str
    celsius: float


class Name(BaseModel):
    name: str


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


@app.tool()
def add(a: int, b: Annotated[int, Field(description="second")] = 0) -> int:
    """Add two numbers."""
    return a + b


@app.tool(name="weather", title="Weather", annotations={"readOnlyHint": True})
async def weather(city: str) -> Weather:
    """The weather in a city."""
    return Weather(city=city, celsius=21.5)


@app.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Count, reporting progress and logging."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    await ctx.info(f"counted to {steps}")
    return f"done after {steps}"


@app.tool()
async def greet(ctx: Context) -> str:
    """Ask the user's name, then greet."""
    reply = await ctx.elicit("Your name?", Name)
    if reply.data is None:
        return f"no name ({reply.action})"
    return f"hello, {reply.data.name}"


@app.tool()
async def ask_llm(question: str, ctx: Context) -> str:
    """Ask the client's model."""
    result = await ctx.sample(question, max_tokens=20)
    return f"the model said: {result.content.text}"


@app.tool()
async def roots(ctx: Context) -> list[str]:
    """The client's roots."""
    return [root.uri for root in await ctx.list_roots()]


@app.resource("config://app", mime_type="application/json")
def config() -> dict[str, str]:
    """The app's configuration."""
    return {"mode": "test"}


@app.resource("users://{user_id}/profile")
def profile(user_id: int) -> str:
    return f"profile of user {user_id}"


@app.prompt()
def review(code: str, language: str = "python") -> str:
    """Review some code."""
    return f"Please review this {language} code:\n{code}"


@app.prompt()
def paint(colour: Colour, finish: Literal["matte", "gloss"] = "matte") -> str:
    return f"Paint it {colour.value}, {finish}."


@app.completion("users://{user_id}/profile", "user_id")
def complete_user(prefix: str) -> list[str]:
    return [uid for uid in ("1", "12", "123", "2") if uid.startswith(prefix)]


if __name__ == "__main__":
    app.run_stdio()
