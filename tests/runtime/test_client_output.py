"""``call_tool(name, args, output=Model)``: the tool's ``structuredContent`` as the caller's own
type, and ``ToolOutputError`` (with the whole result) when it is not one, in both eras."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from mcpbind.runtime import Client, ToolOutputError
from mcpbind.runtime.app import App, ToolError
from pydantic import BaseModel
from typing_extensions import TypedDict

pytestmark = pytest.mark.anyio

ERAS = ["2025-06-18", "2025-11-25", "2026-07-28"]


class Forecast(BaseModel):
    city: str
    celsius: float


class Other(BaseModel):
    pressure: int


@dataclass
class Point:
    x: int
    y: int


class Named(TypedDict):
    name: str


app = App("weather")


@app.tool()
def forecast(city: str) -> Forecast:
    """Tomorrow's weather."""
    return Forecast(city=city, celsius=21.5)


@app.tool()
def point() -> Point:
    return Point(1, 2)


@app.tool()
def named() -> Named:
    return {"name": "n"}


@app.tool()
def refuses(city: str) -> Forecast:
    raise ToolError(f"no forecast for {city}")


@app.tool(structured_output=False)
def plain() -> str:
    return "just text"


@pytest.mark.parametrize("revision", ERAS)
async def test_the_structured_content_as_the_callers_type(revision: str) -> None:
    async with Client(app, protocol_version=revision) as client:
        result = await client.call_tool("forecast", {"city": "Oslo"}, output=Forecast)
        assert result == Forecast(city="Oslo", celsius=21.5)
        assert await client.call_tool("point", output=Point) == Point(1, 2)
        assert await client.call_tool("named", output=Named) == {"name": "n"}
        # Without output= the result is the revision's CallToolResult, as before.
        raw = await client.call_tool("forecast", {"city": "Oslo"})
        assert raw.structuredContent == {"city": "Oslo", "celsius": 21.5}


@pytest.mark.parametrize("revision", ERAS)
async def test_an_error_result_is_a_tool_output_error(revision: str) -> None:
    async with Client(app, protocol_version=revision) as client:
        with pytest.raises(ToolOutputError, match="tool 'refuses' failed: no forecast for Rome"):
            await client.call_tool("refuses", {"city": "Rome"}, output=Forecast)
        with pytest.raises(ToolOutputError, match="Invalid arguments") as info:
            await client.call_tool("forecast", {}, output=Forecast)
        assert info.value.result.isError is True


@pytest.mark.parametrize("revision", ERAS)
async def test_no_structured_content_is_a_tool_output_error(revision: str) -> None:
    async with Client(app, protocol_version=revision) as client:
        with pytest.raises(ToolOutputError, match="returned no structuredContent") as info:
            await client.call_tool("plain", output=Forecast)
        assert info.value.result.content[0].text == "just text"


@pytest.mark.parametrize("revision", ERAS)
async def test_content_of_another_shape_is_a_tool_output_error(revision: str) -> None:
    async with Client(app, protocol_version=revision) as client:
        with pytest.raises(ToolOutputError, match="does not validate as Other: pressure") as info:
            await client.call_tool("forecast", {"city": "Oslo"}, output=Other)
        assert info.value.result.structuredContent == {"city": "Oslo", "celsius": 21.5}
