"""An MCP Apps server (the ``io.modelcontextprotocol/ui`` extension) for ``test_app_ui.py``:
one view, a tool showing its results in it, and a tool only the view calls."""

from __future__ import annotations

from mcpbind.runtime.app import App
from pydantic import BaseModel

app = App("weather-ui")

DASHBOARD = "<!DOCTYPE html><html><body><h1>Weather</h1></body></html>"


class Weather(BaseModel):
    city: str
    celsius: float


@app.ui_resource(
    "ui://weather/dashboard",
    name="dashboard",
    description="The weather, drawn.",
    csp={
        "connectDomains": ["https://api.example.com"],
        "resourceDomains": ["https://cdn.example.com"],
    },
    permissions=["clipboardWrite"],
    prefers_border=True,
)
def dashboard() -> str:
    return DASHBOARD


@app.tool(ui="ui://weather/dashboard")
def weather(city: str) -> Weather:
    """The weather in a city, shown on the dashboard."""
    return Weather(city=city, celsius=21.5)


@app.tool(ui={"resourceUri": "ui://weather/dashboard", "visibility": ["app"]})
def refresh(city: str) -> str:
    """Fresh numbers for the dashboard (its button calls this; the model never sees it)."""
    return f"{city}: 22.0"


@app.tool
def plain() -> str:
    return "no view"


if __name__ == "__main__":
    app.run_stdio()
