"""Arguments models deferred to the first call or listing (``_schema.Signature.model``): only
where making them cannot fail, so every registration error is still raised at registration,
and what a client lists is the same bytes as from models made at once."""

from __future__ import annotations

import json
from typing import Any

import pytest
from app_helpers import STATELESS, wire
from mcpbind.runtime.app import App, Context, _schema
from pydantic import BaseModel

pytestmark = pytest.mark.anyio


class Weather(BaseModel):
    city: str
    temperature_c: float


def _made(app: App) -> dict[str, bool]:
    """Whether each tool's, prompt's and resource's arguments model has been made yet."""
    entries: dict[str, Any] = {**app.tools, **app.prompts, **app.resources}
    return {name: entry.signature._model is not None for name, entry in entries.items()}


def _example(app: App) -> App:
    """The example app's kinds of registration, and a few more plain signatures."""

    @app.tool()
    def echo(text: str, times: int = 1, loud: bool | None = None, note=None) -> str:  # type: ignore[no-untyped-def]
        return text * times

    @app.tool(name="weather", title="Weather")
    async def weather(city: str) -> Weather:
        return Weather(city=city, temperature_c=21.5)

    @app.tool()
    async def count(steps: int, ctx: Context) -> str:
        return f"{steps} {ctx.revision}"

    @app.resource("config://app", mime_type="application/json")
    def config() -> str:
        return "{}"

    @app.resource("items://{item}")
    def item(item: str) -> str:
        return item

    @app.prompt()
    def greet(name: str, formal: bool = False) -> str:
        return f"Greet {name}."

    return app


async def test_plain_signatures_make_no_model_until_first_needed() -> None:
    """Plain scalars (and the injected context) make neither the class nor its validator at
    registration; a call makes its own, a listing those it lists; a model's return type
    builds its output adapter by the first listing."""
    app = _example(App("deferred"))
    assert not any(_made(app).values()), _made(app)
    assert "output" not in vars(app.tools["weather"])  # ``ToolEntry.output``, on first use
    async with wire(app, "2025-11-25") as peer:
        result = await peer.call("count", steps=2)
        assert result["content"][0]["text"] == "2 2025-11-25"
        assert _made(app)["count"] and not _made(app)["echo"]
        await peer.result("tools/list")
        assert _made(app)["echo"] and _made(app)["weather"] and not _made(app)["greet"]
        await peer.result("prompts/list")
        assert _made(app)["greet"]
    assert app.tools["weather"].output is not None


@pytest.mark.parametrize("revision", ["2025-11-25", "2025-03-26", STATELESS])
async def test_listings_are_the_bytes_of_models_made_at_once(
    revision: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tools/list``, ``prompts/list`` and the templates, deferred, against the same app
    whose every arguments model was made at registration (no signature taken as plain)."""

    async def listings(app: App) -> list[bytes]:
        async with wire(app, revision) as peer:
            methods = ("tools/list", "prompts/list", "resources/templates/list")
            return [json.dumps(await peer.result(m)).encode() for m in methods]

    deferred = _example(App("same"))
    assert not any(_made(deferred).values())
    deferred_bytes = await listings(deferred)
    with monkeypatch.context() as patched:
        patched.setattr(_schema, "_is_plain", lambda annotation, default: False)
        at_once = _example(App("same"))
    # (``config`` has no parameters, so no ``_is_plain`` to ask: deferred either way.)
    assert all(made for name, made in _made(at_once).items() if name != "config://app")
    assert deferred_bytes == await listings(at_once)


def _no_name(app: App) -> None:
    app.add_tool(lambda text: text)


def _no_prompt_name(app: App) -> None:
    app.prompt()(lambda text: text)


def _positional_only(app: App) -> None:
    def tool(text: str, /) -> str:
        return text

    app.tool()(tool)


def _star_args(app: App) -> None:
    def tool(*texts: str) -> str:
        return "".join(texts)

    app.tool()(tool)


def _underscore(app: App) -> None:
    def tool(text: str, _hidden: int = 0) -> str:
        return text

    app.tool()(tool)


def _unresolved(app: App) -> None:
    def tool(text: Missing) -> str:  # type: ignore[name-defined]  # noqa: F821
        return str(text)

    app.tool()(tool)


def _no_schema(app: App) -> None:
    def tool(text: str) -> bytes:
        return text.encode()

    app.tool(structured_output=True)(tool)


def _template_mismatch(app: App) -> None:
    def resource(other: str) -> str:
        return other

    app.resource("items://{item}")(resource)


def _pydantic_refuses(app: App) -> None:
    def prompt(model_config: int = 1) -> str:
        return str(model_config)

    app.prompt()(prompt)


ERRORS = {
    "tool without a name": (_no_name, "name"),
    "prompt without a name": (_no_prompt_name, "name"),
    "positional-only parameter": (_positional_only, "plain named parameter"),
    "*args": (_star_args, "plain named parameter"),
    "underscored parameter": (_underscore, "must not start with '_'"),
    "unresolvable annotation": (_unresolved, "cannot resolve"),
    "structured output without a schema": (_no_schema, "no JSON schema"),
    "template's variables": (_template_mismatch, "template's variables"),
    "a name pydantic refuses": (_pydantic_refuses, "not iterable"),
}


@pytest.mark.parametrize("kind", list(ERRORS))
def test_each_registration_error_is_raised_at_registration(kind: str) -> None:
    register, message = ERRORS[kind]
    app = App("errors")
    with pytest.raises(TypeError, match=message):
        register(app)


def test_a_name_pydantic_warns_of_warns_at_registration() -> None:
    """A parameter shadowing a ``BaseModel`` attribute: pydantic's warning comes at once."""
    app = App("warned")

    def tool(model_fields: int) -> str:
        return str(model_fields)

    with pytest.warns(UserWarning, match="shadows an attribute"):
        app.tool()(tool)
    assert _made(app)["tool"]
