"""A small MCP server on mcpbind's app layer: tools, a resource and a prompt from typed functions.

Run ``python examples/app_server.py`` (stdio) or ``... --http PORT`` (Streamable HTTP, ``/mcp``);
it serves every protocol revision, each client's results shaped for the one it speaks.
"""

import sys

import anyio
from mcpbind.runtime.app import App, Context
from pydantic import BaseModel

app = App("demo", version="1.0")


class Weather(BaseModel):
    city: str
    temperature_c: float
    conditions: str


@app.tool()
def echo(text: str) -> str:
    """Return the text it is given."""
    return text


@app.tool(name="weather", title="Weather")
async def weather(city: str) -> Weather:
    """Today's weather in a city."""
    return Weather(city=city, temperature_c=21.5, conditions="sunny")


@app.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to `steps`, a step every 0.1 s, reporting progress."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
        await anyio.sleep(0.1)
    return f"counted to {steps}"


@app.resource("config://app", mime_type="application/json")
def config() -> str:
    """The app's settings."""
    return '{"theme": "dark", "units": "metric"}'


@app.prompt()
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Please greet {name} warmly."


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        app.run_http(port=int(sys.argv[2]))
    else:
        app.run_stdio()
