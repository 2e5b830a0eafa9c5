"""``Route.dump_result``: a handler's typed result is dumped as it is, anything else validated."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from mcpbind.generated import v2026_07_28
from mcpbind.generated.v2025_11_25 import METHODS, types
from mcpbind.runtime.core import routing as _routing
from mcpbind.runtime.core.routing import BuiltResult, Route
from mcpbind.runtime.eras.crossera import cross_era_check
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


def test_a_built_result_is_served_as_built(validated: list[Any]) -> None:
    """A ``BuiltResult`` (the app's own ``tools/call`` answer) is not validated again: it is
    served as a plain dict, and a route's ``check`` gets its class."""
    seen: list[Any] = []
    built = BuiltResult(lambda: types.CallToolResult, {"content": [{"text": "hi", "type": "text"}]})
    data = Route(SPEC, check=lambda kind, data, params: seen.append(kind)).dump_result(built)
    assert type(data) is dict
    assert data == {"content": [{"text": "hi", "type": "text"}]}
    assert validated == []
    assert seen == [types.CallToolResult]


def test_a_built_result_still_meets_the_cross_era_check() -> None:
    """Served under another revision, a built result is checked as a model of its class is:
    one valid under its own revision but not the served one (a ``_meta`` member 2026-07-28
    types) raises the same ``ValidationError``."""
    served = v2026_07_28.METHODS["tools/call"]
    check = cross_era_check(served, frozenset({"resultType"}))
    stamp = {"resultType": "complete"}
    good = BuiltResult(lambda: types.CallToolResult, {"content": [{"text": "hi", "type": "text"}]})
    data = Route(SPEC, stamp=stamp, check=check).dump_result(good)
    assert data == {"content": [{"text": "hi", "type": "text"}], "resultType": "complete"}
    meta = {"io.modelcontextprotocol/serverInfo": 5}
    bad = BuiltResult(lambda: types.CallToolResult, {"_meta": meta, "content": []})
    with pytest.raises(ValidationError) as built_error:
        Route(SPEC, stamp=stamp, check=check).dump_result(bad)
    with pytest.raises(ValidationError) as model_error:
        model = types.CallToolResult(meta=meta, content=[])
        Route(SPEC, stamp=stamp, check=check).dump_result(model)
    assert built_error.value.errors() == model_error.value.errors()


def test_a_built_result_answering_a_task_request_is_validated(validated: list[Any]) -> None:
    """A task-augmented request's result is the task: a built ``CallToolResult`` is not one,
    and fails as a plain dict would."""
    built = BuiltResult(lambda: types.CallToolResult, {"content": []})
    params = {"name": "echo", "task": {}}
    with pytest.raises(ValidationError) as built_error:
        Route(SPEC).dump_result(built, params)
    with pytest.raises(ValidationError) as dict_error:
        Route(SPEC).dump_result({"content": []}, params)
    assert built_error.value.errors() == dict_error.value.errors()
    assert validated == [types.CreateTaskResult, types.CreateTaskResult]


def test_a_built_results_class_is_asked_only_by_a_check() -> None:
    """Without a cross-era check nothing asks a built result's class: a plain result is served
    without creating it."""
    asked: list[bool] = []

    def kind() -> Any:
        asked.append(True)
        return types.CallToolResult

    Route(SPEC).dump_result(BuiltResult(kind, {"content": []}))
    assert asked == []
    Route(SPEC, check=lambda kind, data, params: None).dump_result(
        BuiltResult(kind, {"content": []})
    )
    assert asked == [True]
