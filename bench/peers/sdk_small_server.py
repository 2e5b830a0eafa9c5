"""examples/app_server.py's server on the official Python SDK's ``MCPServer``: the yardstick for
the example's line count and the peer of ``bench/app_echo.py``.

Run it with ``python bench/peers/sdk_small_server.py`` (stdio) or ``... --http PORT``.
"""

import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

mcp = MCPServer("demo", version="1.0")


class Weather(BaseModel):
    city: str
    temperature_c: float
    conditions: str


@mcp.tool()
def echo(text: str) -> str:
    """Return the text it is given."""
    return text


@mcp.tool(name="weather", title="Weather")
async def weather(city: str) -> Weather:
    """Today's weather in a city."""
    return Weather(city=city, temperature_c=21.5, conditions="sunny")


@mcp.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to `steps`, a step every 0.1 s, reporting progress."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
        await anyio.sleep(0.1)
    return f"counted to {steps}"


@mcp.resource("config://app", mime_type="application/json")
def config() -> str:
    """The app's settings."""
    return '{"theme": "dark", "units": "metric"}'


@mcp.prompt()
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Please greet {name} warmly."


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        mcp.run("streamable-http", port=int(sys.argv[2]))
    else:
        mcp.run()
