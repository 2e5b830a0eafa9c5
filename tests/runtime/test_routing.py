"""``Route.dump_result``: a handler's typed result is dumped as it is, anything else validated."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from mcpbind.generated.v2025_11_25 import METHODS, types
from mcpbind.runtime.core import routing as _routing
from mcpbind.runtime.core.routing import Route
from pydantic import ValidationError

SPEC = METHODS["tools/call"]


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The types ``dump_result`` asked a validator for."""
    asked: list[Any] = []
    real = _routing.validator

    def spy(tp: Any) -> Callable[[Any], Any]:
        asked.append(tp)
        return real(tp)

    monkeypatch.setattr(_routing, "validator", spy)
    return asked


def test_a_typed_result_is_not_validated_again(validated: list[Any]) -> None:
    result = types.CallToolResult(content=[types.TextContent(text="hi")])
    data = Route(SPEC).dump_result(result, {"name": "echo"})
    assert data == {"content": [{"type": "text", "text": "hi"}]}
    assert validated == []


def test_a_dict_result_is_validated(validated: list[Any]) -> None:
    data = Route(SPEC).dump_result({"content": [{"type": "text", "text": "hi"}]}, None)
    assert data == {"content": [{"type": "text", "text": "hi"}]}
    assert validated == [types.CallToolResult]


def test_an_invalid_dict_result_is_caught() -> None:
    with pytest.raises(ValidationError):
        Route(SPEC).dump_result({"content": [{"type": "text"}]}, None)


def test_a_model_of_another_type_is_checked_when_the_route_says_so(validated: list[Any]) -> None:
    """A handler written for another revision: its result is handed to the route's ``check``
    once, with its class (which the check's proof is keyed by), as dumped and stamped."""
    seen: list[tuple[Any, Any, Any]] = []

    def check(kind: Any, data: Any, params: dict[str, Any] | None) -> None:
        seen.append((kind, data, params))

    result = types.CallToolResult(content=[types.TextContent(text="hi")])
    Route(SPEC, stamp={"resultType": "complete"}, check=check).dump_result(result, None)
    assert seen == [
        (
            types.CallToolResult,
            {"content": [{"type": "text", "text": "hi"}], "resultType": "complete"},
            None,
        )
    ]
    assert validated == []


def test_a_dict_result_is_checked_as_the_class_it_validated_into() -> None:
    seen: list[Any] = []
    Route(SPEC, check=lambda kind, data, params: seen.append(kind)).dump_result(
        {"content": []}, None
    )
    assert seen == [types.CallToolResult]
