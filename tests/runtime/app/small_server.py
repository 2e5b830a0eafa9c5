from mcpbind.runtime.app import App, Context
from pydantic import BaseModel

app = App("demo")


class Weather(BaseModel):
    city: str
    celsius: float


@app.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@app.tool()
def weather(city: str) -> Weather:
    """Current weather for a city."""
    return Weather(city=city, celsius=21.5)


@app.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to `steps`, reporting progress."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    return f"counted to {steps}"


@app.resource("config://settings")
def settings() -> str:
    return "mode=demo"


@app.prompt()
def review(code: str) -> str:
    return f"Please review:\n{code}"


if __name__ == "__main__":
    app.run_stdio()
