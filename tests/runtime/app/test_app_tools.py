"""Tools of the app layer: every decorator form and return shape, sync and async, and what a
caller gets for bad arguments, exceptions and unknown tools, on the wire."""

from __future__ import annotations

import base64
import dataclasses
import threading
from typing import Annotated, Any, TypedDict

import pytest
from app_helpers import HANDSHAKE, STATELESS, wire
from mcpbind.generated.v2025_11_25 import types as t25
from mcpbind.runtime import McpError
from mcpbind.runtime.app import App, Context, ToolError
from pydantic import BaseModel, Field

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


class Point(BaseModel):
    x: int
    y: int


class Totals(TypedDict):
    count: int
    label: str


@dataclasses.dataclass
class Span:
    start: int
    end: int = 0


class Plain:
    """A plain annotated class (no model): described by its annotations."""

    name: str
    size: int = 1

    def __init__(self, name: str, size: int = 1) -> None:
        self.name = name
        self.size = size


def shapes_app() -> App:
    app = App("shapes")

    @app.tool()
    def text() -> str:
        return "hi"

    @app.tool()
    def number() -> int:
        return 3

    @app.tool()
    def point() -> Point:
        return Point(x=1, y=2)

    @app.tool()
    def counts() -> dict[str, int]:
        return {"a": 1}

    @app.tool()
    def totals() -> Totals:
        return {"count": 2, "label": "two"}

    @app.tool()
    def span() -> Span:
        return Span(3, 4)

    @app.tool()
    def plain() -> Plain:
        return Plain("p", 2)

    @app.tool()
    def nothing() -> None:
        return None

    @app.tool()
    def image() -> bytes:
        return PNG

    @app.tool()
    def blob() -> bytes:
        return b"\x00\x01"

    @app.tool()
    def block() -> t25.TextContent:
        return t25.TextContent(text="a block")

    @app.tool()
    def blocks() -> list[t25.TextContent | t25.ImageContent]:
        encoded = base64.b64encode(PNG).decode()
        return [t25.TextContent(text="one"), t25.ImageContent(data=encoded, mimeType="image/png")]

    @app.tool()
    def words() -> list[str]:
        return ["a", "b"]

    @app.tool()
    def whole() -> t25.CallToolResult:
        return t25.CallToolResult(content=[t25.TextContent(text="custom")], isError=True)

    @app.tool()
    def untyped():  # type: ignore[no-untyped-def]
        return {"free": True}

    return app


EXPECTED: dict[str, tuple[list[dict[str, Any]], Any]] = {
    "text": ([{"type": "text", "text": "hi"}], {"result": "hi"}),
    "number": ([{"type": "text", "text": "3"}], {"result": 3}),
    "point": ([{"type": "text", "text": '{\n  "x": 1,\n  "y": 2\n}'}], {"x": 1, "y": 2}),
    "counts": ([{"type": "text", "text": '{\n  "a": 1\n}'}], {"a": 1}),
    "totals": (
        [{"type": "text", "text": '{\n  "count": 2,\n  "label": "two"\n}'}],
        {"count": 2, "label": "two"},
    ),
    "span": ([{"type": "text", "text": '{\n  "start": 3,\n  "end": 4\n}'}], {"start": 3, "end": 4}),
    "nothing": ([], {"result": None}),
    "image": (
        [{"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}],
        None,
    ),
    "blob": (
        [
            {
                "type": "resource",
                "resource": {
                    "uri": "mcpbind://tool/blob/result",
                    "blob": "AAE=",
                    "mimeType": "application/octet-stream",
                },
            }
        ],
        None,
    ),
    "block": ([{"type": "text", "text": "a block"}], None),
    "blocks": (
        [
            {"type": "text", "text": "one"},
            {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"},
        ],
        None,
    ),
    "words": (
        [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        {"result": ["a", "b"]},
    ),
    "untyped": ([{"type": "text", "text": '{\n  "free": true\n}'}], None),
}


@pytest.mark.parametrize("tool", sorted(EXPECTED))
async def test_return_shapes(tool: str) -> None:
    content, structured = EXPECTED[tool]
    async with wire(shapes_app(), "2025-11-25") as peer:
        result = await peer.call(tool)
    assert result["content"] == content
    assert result.get("structuredContent") == structured
    assert "isError" not in result


async def test_plain_class_and_whole_result() -> None:
    async with wire(shapes_app(), "2025-11-25") as peer:
        plain = await peer.call("plain")
        whole = await peer.call("whole")
        tools = {t["name"]: t for t in (await peer.result("tools/list"))["tools"]}
    assert plain["structuredContent"] == {"name": "p", "size": 2}
    assert whole == {"content": [{"type": "text", "text": "custom"}], "isError": True}
    # What describes its own content has no output schema; data does.
    for name in ("image", "blob", "block", "blocks", "whole", "untyped"):
        assert "outputSchema" not in tools[name], name
    for name in ("text", "number", "point", "counts", "totals", "span", "plain", "nothing"):
        assert tools[name]["outputSchema"]["type"] == "object", name
    assert tools["number"]["outputSchema"]["required"] == ["result"]


async def test_descriptions_from_signatures_and_docstrings() -> None:
    from app_server import app

    async with wire(app, "2025-11-25") as peer:
        tools = {t["name"]: t for t in (await peer.result("tools/list"))["tools"]}
    add = tools["add"]
    assert add["description"] == "Add two numbers."
    assert add["inputSchema"]["properties"]["b"] == {
        "default": 0,
        "description": "second",
        "title": "B",
        "type": "integer",
    }
    assert add["inputSchema"]["required"] == ["a"]
    weather = tools["weather"]
    assert weather["title"] == "Weather"
    assert weather["annotations"] == {"readOnlyHint": True}
    assert weather["outputSchema"]["properties"]["celsius"] == {
        "title": "Celsius",
        "type": "number",
    }
    # The context parameter is no argument.
    assert "ctx" not in tools["slow"]["inputSchema"]["properties"]
    assert tools["slow"]["inputSchema"]["required"] == ["steps"]


async def test_decorated_functions_stay_callable() -> None:
    from app_server import add, weather

    assert add(2, 3) == 5
    assert (await weather("Oslo")).city == "Oslo"


async def test_sync_tools_run_in_a_worker_thread_async_ones_on_the_loop() -> None:
    app = App("threads")
    seen: dict[str, int] = {}

    @app.tool()
    def sync_tool() -> str:
        seen["sync"] = threading.get_ident()
        return "s"

    @app.tool()
    async def async_tool() -> str:
        seen["async"] = threading.get_ident()
        return "a"

    async with wire(app, "2025-11-25") as peer:
        await peer.call("sync_tool")
        await peer.call("async_tool")
    assert seen["async"] == threading.get_ident()
    assert seen["sync"] != threading.get_ident()


@pytest.mark.parametrize("revision", [*HANDSHAKE, STATELESS])
async def test_invalid_arguments_are_tool_errors_naming_the_argument(revision: str) -> None:
    from app_server import app

    async with wire(app, revision) as peer:
        wrong = await peer.call("add", a="x", b=2)
        missing = await peer.call("add", b=2)
        right = await peer.call("add", a="4", b=2)  # lax, like the SDK: "4" is 4
    assert wrong["isError"] is True
    assert wrong["content"][0]["text"] == (
        "Invalid arguments for tool 'add': argument 'a': Input should be a valid integer, "
        "unable to parse string as an integer, got 'x'"
    )
    assert missing["isError"] is True
    assert "argument 'a': Field required" in missing["content"][0]["text"]
    assert right["content"] == [{"type": "text", "text": "6"}]


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-11-25", STATELESS])
async def test_exceptions_and_protocol_errors(revision: str) -> None:
    app = App("errors")

    @app.tool()
    def boom(n: int) -> int:
        raise ValueError(f"n must be even, not {n}")

    @app.tool()
    async def refuse() -> str:
        raise ToolError("the basket expired; create a new one")

    @app.tool()
    def protocol() -> str:
        raise McpError(-32042, "a chosen protocol error", {"why": "test"})

    @app.tool()
    def liar() -> int:
        return "not a number"  # type: ignore[return-value]

    async with wire(app, revision) as peer:
        boom = await peer.call("boom", n=3)
        refused = await peer.call("refuse")
        protocol = await peer.request("tools/call", {"name": "protocol"})
        unknown = await peer.request("tools/call", {"name": "nope"})
        lied = await peer.call("liar")
    assert boom["isError"] is True
    assert boom["content"] == [
        {"type": "text", "text": "Error executing tool 'boom': ValueError: n must be even, not 3"}
    ]
    assert refused["content"] == [{"type": "text", "text": "the basket expired; create a new one"}]
    assert refused["isError"] is True
    assert protocol["error"] == {
        "code": -32042,
        "message": "a chosen protocol error",
        "data": {"why": "test"},
    }
    assert unknown["error"]["code"] == -32602
    assert unknown["error"]["message"] == "Unknown tool: nope"
    assert lied["isError"] is True
    assert "returned an invalid result" in lied["content"][0]["text"]
    if revision == STATELESS:
        assert boom["resultType"] == "complete"


async def test_masked_errors_keep_the_message_out() -> None:
    app = App("masked", mask_errors=True)

    @app.tool()
    def secret() -> str:
        raise RuntimeError("password=hunter2")

    async with wire(app, "2025-11-25") as peer:
        result = await peer.call("secret")
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Error executing tool 'secret'"


async def test_registration_errors() -> None:
    app = App("bad")
    with pytest.raises(TypeError, match=r"give a lambda .* a name"):
        app.tool(lambda: 1)  # bare, as a decorator is used: a lambda has no name to take
    with pytest.raises(TypeError, match="name"):
        app.add_tool(lambda: 1)
    with pytest.raises(TypeError, match="plain named parameter"):

        @app.tool()
        def star(*values: int) -> int:
            return sum(values)

    with pytest.raises(TypeError, match="no JSON schema"):

        @app.tool(structured_output=True)
        def opaque() -> bytes:
            return b""

    app.add_tool(lambda: 1, name="one")
    assert list(app.tools) == ["one"]


def _built(app: App, tool: str) -> bool:
    return bool(app.tools[tool].signature.model.__pydantic_complete__)


@pytest.mark.parametrize("revision", ["2025-11-25", STATELESS])
async def test_plain_signatures_build_their_arguments_model_when_first_needed(
    revision: str,
) -> None:
    """A tool of plain scalar parameters builds its arguments' validator and schema when first
    called or listed; what a client sees is the same as for one built at registration."""
    app = App("deferred")

    @app.tool()
    def scaled(value: int, factor: float = 1.0, label: str | None = None, raw=None) -> str:  # type: ignore[no-untyped-def]
        return f"{label}:{value * factor}:{raw}"

    @app.tool()
    def built(value: Annotated[int, Field(ge=0)]) -> str:  # not plain: built at once
        return str(value)

    assert not _built(app, "scaled") and _built(app, "built")
    async with wire(app, revision) as peer:
        wrong = await peer.call("scaled", value="x", factor=2)
        assert _built(app, "scaled")
        right = await peer.call("scaled", value="4", factor=2, raw="r")
    assert wrong["isError"] is True
    assert wrong["content"][0]["text"] == (
        "Invalid arguments for tool 'scaled': argument 'value': Input should be a valid "
        "integer, unable to parse string as an integer, got 'x'"
    )
    assert right["content"] == [{"type": "text", "text": "None:8.0:r"}]

    fresh = App("listed")
    fresh.tool(name="scaled")(scaled)
    assert not _built(fresh, "scaled")
    async with wire(fresh, revision) as peer:
        (tool,) = (await peer.result("tools/list"))["tools"]
    assert tool["inputSchema"] == {
        "properties": {
            "value": {"title": "Value", "type": "integer"},
            "factor": {"default": 1.0, "title": "Factor", "type": "number"},
            "label": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "title": "Label",
            },
            "raw": {"default": None, "title": "raw", "type": "string"},
        },
        "required": ["value"],
        "title": "scaledArguments",
        "type": "object",
    }


async def test_structured_output_can_be_turned_off() -> None:
    app = App("off")

    @app.tool(structured_output=False)
    def count() -> int:
        return 1

    async with wire(app, "2025-11-25") as peer:
        tools = (await peer.result("tools/list"))["tools"]
        result = await peer.call("count")
    assert "outputSchema" not in tools[0]
    assert result == {"content": [{"type": "text", "text": "1"}]}


async def test_context_parameter_found_by_type_under_any_name() -> None:
    app = App("ctx")

    @app.tool()
    async def which(x: int, anything: Context) -> str:
        return f"{x} {anything.revision}"

    async with wire(app, "2025-06-18") as peer:
        tools = (await peer.result("tools/list"))["tools"]
        result = await peer.call("which", x=1)
    assert list(tools[0]["inputSchema"]["properties"]) == ["x"]
    assert result["content"][0]["text"] == "1 2025-06-18"


async def test_methods_partials_and_callable_objects() -> None:
    import functools

    class Counter:
        def __init__(self) -> None:
            self.total = 0

        def bump(self, by: int = 1) -> int:
            self.total += by
            return self.total

        async def __call__(self, text: str) -> str:
            return text.upper()

    async def scaled(value: int, factor: int) -> int:
        return value * factor

    counter = Counter()
    app = App("callables")
    app.add_tool(counter.bump)
    app.add_tool(counter, name="shout")
    app.add_tool(functools.partial(scaled, factor=10), name="scaled")
    async with wire(app, "2025-11-25") as peer:
        tools = {t["name"]: t for t in (await peer.result("tools/list"))["tools"]}
        bumped = await peer.call("bump", by=2)
        shouted = await peer.call("shout", text="hi")
        scaled_result = await peer.call("scaled", value=4)
    assert list(tools["bump"]["inputSchema"]["properties"]) == ["by"]
    assert list(tools["shout"]["inputSchema"]["properties"]) == ["text"]
    assert bumped["structuredContent"] == {"result": 2}
    assert shouted["content"] == [{"type": "text", "text": "HI"}]
    assert scaled_result["content"] == [{"type": "text", "text": "40"}]
