"""A tool's result the app built from values it validated (``routing.BuiltResult``) is served
without the session validating it again: the same bytes as the validated answer, in every
revision. Whatever holds the user's own models (a ``CallToolResult``, content blocks), or went
through a middleware, is validated as before: a bad one gets the same error."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import orjson
import pytest
from app_helpers import REVISIONS, wire
from mcpbind import generated
from mcpbind.generated.support import MethodSpec
from mcpbind.runtime.app import App, ToolError
from mcpbind.runtime.app._results import tool_result
from mcpbind.runtime.app._schema import output_type
from mcpbind.runtime.core import routing
from mcpbind.runtime.core.bindings import dump, validator
from mcpbind.runtime.core.errors import INTERNAL_ERROR
from pydantic import BaseModel, RootModel

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
WAV = b"RIFF\x00\x00\x00\x00WAVEfmt "


class Weather(BaseModel):
    city: str
    temperature_c: float


class Numbers(RootModel[list[int]]):
    pass


def built_app() -> App:
    """Tools whose results the app builds itself, one per path of ``_results``."""
    app = App("built")

    @app.tool()
    def echo(text: str) -> str:
        return text

    @app.tool()
    def weather(city: str) -> Weather:
        return Weather(city=city, temperature_c=21.5)

    @app.tool()
    def number() -> int:
        return 3

    @app.tool()
    def flag() -> bool:
        return True

    @app.tool()
    def misfit() -> str:
        return 5  # type: ignore[return-value]

    @app.tool()
    def truth() -> int:
        return True

    @app.tool()
    def mapping() -> dict[str, Any]:
        return {"b": 1, "a": [1.5, None]}

    @app.tool()
    def nothing() -> None:
        return None

    @app.tool()
    def picture() -> bytes:
        return PNG

    @app.tool()
    def sound() -> bytes:
        return WAV

    @app.tool()
    def blob() -> bytes:
        return b"\x00\x01"

    @app.tool()
    def several() -> list[Any]:
        return ["one", PNG]

    @app.tool()
    def refused() -> str:
        raise ToolError("no")

    @app.tool()
    def failing() -> str:
        raise RuntimeError("boom")

    @app.tool(structured_output=True)
    def wrong(city: str) -> Weather:
        return "not weather"  # type: ignore[return-value]

    @app.tool(timeout=0.05)
    async def slow() -> str:
        await anyio.sleep(5)
        return "late"

    return app


BUILT = [
    ("echo", {"text": "hello"}),
    ("weather", {"city": "Oslo"}),
    ("number", {}),
    ("flag", {}),
    ("misfit", {}),
    ("truth", {}),
    ("mapping", {}),
    ("nothing", {}),
    ("picture", {}),
    ("sound", {}),
    ("blob", {}),
    ("several", {}),
    ("refused", {}),
    ("failing", {}),
    ("wrong", {"city": "Oslo"}),
    ("slow", {}),
    ("missing_argument", {}),
]


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The types the session's ``dump_result`` asked a validator for."""
    asked: list[Any] = []
    real = routing.validator

    def spy(tp: Any) -> Callable[[Any], Any]:
        asked.append(tp)
        return real(tp)

    monkeypatch.setattr(routing, "validator", spy)
    yield asked


def _results(validated: list[Any]) -> list[Any]:
    """Of the types validated, the results (params are validated too)."""
    return [t for t in validated if getattr(t, "__name__", "").endswith("Result")]


def _spec(revision: str) -> MethodSpec[Any, Any]:
    spec: MethodSpec[Any, Any] = generated.load(revision).METHODS["tools/call"]
    return spec


def _as_validated(revision: str, result: dict[str, Any]) -> bytes:
    """``result`` as the session answered it before it served built results: validated into
    the revision's result type, and dumped."""
    return orjson.dumps(dump(validator(_spec(revision).result_type)(result)))


@pytest.mark.parametrize("revision", REVISIONS)
async def test_built_results_are_the_validated_bytes(revision: str, validated: list[Any]) -> None:
    app = built_app()
    async with wire(app, revision) as client:
        for name, arguments in BUILT:
            if name == "missing_argument":
                name, arguments = "echo", {}
            result = await client.call(name, **arguments)
            assert orjson.dumps(result) == _as_validated(revision, result), name
    assert _results(validated) == []


def user_app() -> App:
    """Tools that hand the user's own models over: validated by the session."""
    app = App("user")
    types = generated.load("2025-11-25").types

    @app.tool()
    def whole() -> Any:
        return types.CallToolResult(content=[types.TextContent(text="hi")], isError=False)

    @app.tool()
    def block() -> Any:
        return types.TextContent(text="a block")

    @app.tool()
    def blocks() -> list[Any]:
        return ["text", types.TextContent(text="a block")]

    @app.tool()
    def bad_whole() -> Any:
        return types.CallToolResult.model_construct(content="not a list")

    @app.tool()
    def bad_block() -> Any:
        return types.TextContent.model_construct(text=5, type="text")

    @app.tool()
    def bad_blocks() -> list[Any]:
        return ["text", types.TextContent.model_construct(text=5, type="text")]

    @app.tool()
    def listing() -> Numbers:
        return Numbers([1, 2])

    return app


# Dumping a model ``model_construct`` left invalid warns; the session then refuses it.
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")
async def test_user_models_are_validated(validated: list[Any]) -> None:
    app = user_app()
    async with wire(app, "2025-11-25") as client:
        for name in ("whole", "block", "blocks"):
            result = await client.call(name)
            assert orjson.dumps(result) == _as_validated("2025-11-25", result), name
        assert len(_results(validated)) == 3
        for name in ("bad_whole", "bad_block", "bad_blocks", "listing"):
            reply = await client.request("tools/call", {"name": name, "arguments": {}})
            assert reply["error"]["code"] == INTERNAL_ERROR, (name, reply)


async def test_structured_content_that_is_no_object_is_left_to_the_result_class() -> None:
    """2025-11-25's ``structuredContent`` is an object: a list is refused, as before; from
    2026-07-28 any JSON value is."""
    async with wire(user_app(), "2026-07-28") as client:
        result = await client.call("listing")
        assert result["structuredContent"] == [1, 2]


def _middleware_app(change: Callable[[dict[str, Any]], Any]) -> App:
    app = built_app()

    async def middleware(call: Any, call_next: Any) -> Any:
        result = await call_next()
        if call.method != "tools/call":
            return result
        return change(result)

    app.server.add_middleware(middleware)
    return app


def _in_place(result: dict[str, Any]) -> dict[str, Any]:
    result["isError"] = "yes"
    return result


def _replaced(result: dict[str, Any]) -> dict[str, Any]:
    return {"content": "not a list"}


@pytest.mark.parametrize("change", [_in_place, _replaced])
async def test_a_result_a_middleware_changed_is_validated(
    change: Callable[[dict[str, Any]], Any],
) -> None:
    async with wire(_middleware_app(change), "2025-11-25") as client:
        reply = await client.request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
        assert reply["error"]["code"] == INTERNAL_ERROR, reply


async def test_a_result_a_middleware_passed_on_is_the_same(validated: list[Any]) -> None:
    """A middleware sees a plain dict (as before), and what it returns is validated."""
    seen: list[type] = []

    def keep(result: dict[str, Any]) -> dict[str, Any]:
        seen.append(type(result))
        return result

    async with wire(_middleware_app(keep), "2025-11-25") as client:
        result = await client.call("echo", text="x")
    assert seen == [dict]
    assert orjson.dumps(result) == _as_validated("2025-11-25", result)
    assert [t.__name__ for t in _results(validated)] == ["CallToolResult"]


@pytest.mark.parametrize(
    ("annotation", "value"),
    [(str, "hé\u2028"), (int, 3), (int, 2**70), (bool, False), (int, True), (str, 5)],
)
def test_a_plain_return_is_what_its_adapter_makes(annotation: type, value: Any) -> None:
    """A ``-> str``, ``-> int`` or ``-> bool`` tool's value of exactly that type is its
    structured result as it is, without the adapter; the same as the adapter's, which any other
    value still goes through (and may fail)."""
    fast = output_type("tool", annotation)
    slow = output_type("tool", annotation)
    assert fast is not None and slow is not None and fast.plain is annotation
    slow.plain = None
    try:
        expected: Any = tool_result(value, slow, "mcpbind://tool/tool/result")
    except ValueError as exc:  # pydantic's ValidationError
        with pytest.raises(type(exc)):
            tool_result(value, fast, "mcpbind://tool/tool/result")
        return
    served = tool_result(value, fast, "mcpbind://tool/tool/result")
    assert json.dumps(served) == json.dumps(expected)  # in order (orjson: no 70-bit ints)
