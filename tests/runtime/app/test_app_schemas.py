"""The schemas the app layer derives equal those of the official Python SDK's ``MCPServer``
for the same functions: a tool moved from one to the other advertises the same contract.

Compared as sent on the wire (``tools/list``): ``inputSchema`` and ``outputSchema`` equal,
with one documented difference: ``bytes`` and content-block returns (which the SDK describes
as ``{"result": <base64 string>}`` or not at all) have no output schema here, since the app
sends them as content (an image, audio or an embedded blob) rather than data.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from typing import Annotated, Any, Literal, Optional, TypedDict

import pytest
from app_helpers import wire
from mcp.server.mcpserver import Context as SdkContext, MCPServer
from mcpbind.runtime.app import App, Context
from pydantic import BaseModel, Field

pytestmark = pytest.mark.anyio


class Address(BaseModel):
    """Where someone lives."""

    street: str
    city: str = "Oslo"


class Person(BaseModel):
    name: str = Field(description="full name")
    age: int | None = None
    address: Address


class Node(BaseModel):
    value: int
    children: list[Node] = []


class Stats(TypedDict):
    mean: float
    count: int


@dataclasses.dataclass
class Interval:
    low: float
    high: float = 1.0


class Mode(enum.Enum):
    FAST = "fast"
    SAFE = "safe"


def plain(a: int, b: float, c: str, d: bool) -> str:
    return ""


def defaults(x: int = 3, y: str | None = None, z: Optional[list[int]] = None) -> int:  # noqa: UP045
    return 0


def described(
    query: Annotated[str, Field(description="what to look for", min_length=1)],
    limit: Annotated[int, Field(ge=1, le=100, description="at most")] = 10,
) -> list[str]:
    return []


def nested(person: Person, tags: list[str], extra: dict[str, int]) -> Person:
    return person


def choices(mode: Mode, level: Literal["low", "high"] = "low") -> dict[str, Any]:
    return {}


def recursive(depth: int) -> Node:
    return Node(value=depth)


def typed_dict(values: list[float]) -> Stats:
    return {"mean": 0.0, "count": 0}


def a_dataclass(x: float) -> Interval:
    return Interval(x)


def nothing(flag: bool = False) -> None:
    return None


def optional_result(n: int) -> int | None:
    return None


def untyped(x, y=2):  # type: ignore[no-untyped-def]
    return x


def unannotated_return(x: int):  # type: ignore[no-untyped-def]
    return x


def with_context(x: int, ctx: Context) -> str:
    return ""


def with_sdk_context(x: int, ctx: SdkContext) -> str:  # type: ignore[type-arg]
    return ""


def json_named(json: str, copy: int = 0) -> str:
    return json


FUNCTIONS: list[Callable[..., Any]] = [
    plain,
    defaults,
    described,
    nested,
    choices,
    recursive,
    typed_dict,
    a_dataclass,
    nothing,
    optional_result,
    untyped,
    unannotated_return,
    json_named,
]


async def sdk_tools(functions: list[Callable[..., Any]]) -> dict[str, dict[str, Any]]:
    server = MCPServer("sdk")
    for fn in functions:
        server.add_tool(fn)
    return {
        tool.name: tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        for tool in await server.list_tools()
    }


async def app_tools(functions: list[Callable[..., Any]]) -> dict[str, dict[str, Any]]:
    app = App("app")
    for fn in functions:
        app.add_tool(fn)
    async with wire(app, "2025-11-25") as peer:
        tools = (await peer.result("tools/list"))["tools"]
    return {tool["name"]: tool for tool in tools}


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda fn: fn.__name__)
async def test_schemas_equal_the_sdks(fn: Callable[..., Any]) -> None:
    sdk = (await sdk_tools([fn]))[fn.__name__]
    ours = (await app_tools([fn]))[fn.__name__]
    assert ours["inputSchema"] == sdk["inputSchema"]
    assert ours.get("outputSchema") == sdk.get("outputSchema")


async def test_the_context_parameter_is_left_out_by_both() -> None:
    sdk = (await sdk_tools([with_sdk_context]))["with_sdk_context"]
    ours = (await app_tools([with_context]))["with_context"]
    assert ours["inputSchema"]["properties"] == sdk["inputSchema"]["properties"]
    assert ours["inputSchema"]["required"] == sdk["inputSchema"]["required"] == ["x"]
    assert ours["outputSchema"]["properties"] == sdk["outputSchema"]["properties"]


async def test_bytes_are_content_here_data_there() -> None:
    def picture(size: int) -> bytes:
        return b""

    sdk = (await sdk_tools([picture]))["picture"]
    ours = (await app_tools([picture]))["picture"]
    assert ours["inputSchema"] == sdk["inputSchema"]
    assert sdk["outputSchema"]["properties"]["result"]["type"] == "string"
    assert "outputSchema" not in ours


def review(
    code: Annotated[str, Field(description="the code to review")],
    language: str = "python",
    strict: bool = False,
) -> str:
    """Review some code."""
    return code


def profile(user_id: int) -> str:
    """A user's profile."""
    return str(user_id)


async def test_prompt_arguments_and_templates_equal_the_sdks() -> None:
    server = MCPServer("sdk")
    server.prompt()(review)
    server.resource("users://{user_id}/profile")(profile)
    sdk_prompt = (await server.list_prompts())[0].model_dump(by_alias=True, exclude_none=True)
    sdk_template = (await server.list_resource_templates())[0].model_dump(
        by_alias=True, exclude_none=True
    )
    app = App("app")
    app.prompt()(review)
    app.resource("users://{user_id}/profile")(profile)
    async with wire(app, "2025-11-25") as peer:
        prompt = (await peer.result("prompts/list"))["prompts"][0]
        template = (await peer.result("resources/templates/list"))["resourceTemplates"][0]
    assert prompt == sdk_prompt
    assert template == sdk_template
