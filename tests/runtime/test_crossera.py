"""The cross-era result check, proven per pair of classes (``eras/crossera.py``), decides as the
full validation it replaces: on every result method of every handshake revision served in the
stateless era, for results drawn from the schema (valid) and the same with members the served
revision types otherwise (invalid there), and for each kind of difference two schemas can have
(made up below). Where it fails, it raises the full validation's own ``ValidationError``.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal

import pytest
from generated_helpers import hypothesis_jsonschema_shims, strategy_for
from hypothesis import HealthCheck, Phase, given, settings, strategies as st
from mcpbind import generated
from mcpbind.runtime.core.bindings import dumper, validator
from mcpbind.runtime.core.revisions import HANDSHAKE_REVISIONS, STATELESS_REVISIONS
from mcpbind.runtime.eras import stateless
from mcpbind.runtime.eras.crossera import cross_era_check, proof_function, prove
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

EXAMPLES = 4
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,
    ],
)


def _pairs() -> list[tuple[str, str, str, str]]:
    """(handler revision, served revision, method, the handler's result class name) for every
    method served in the stateless era that the handler's revision has too."""
    cases = []
    for served in STATELESS_REVISIONS:
        target = generated.load(served)
        for method in target.METHODS:
            for revision in HANDSHAKE_REVISIONS:
                source = generated.load(revision).METHODS.get(method)
                if source is None:
                    continue
                for kind in typing.get_args(source.result_type) or (source.result_type,):
                    cases.append((revision, served, method, kind.__name__))
    return cases


PAIRS = _pairs()


@pytest.fixture(scope="module", autouse=True)
def _shims() -> Iterator[None]:
    with hypothesis_jsonschema_shims():
        yield


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        call()
    except ValidationError as exc:
        return ("invalid", exc.title, exc.errors(include_url=False, include_context=False))
    return "valid"


def _agree(kind: Any, target: Any, data: dict[str, Any], stamped: frozenset[str]) -> str:
    """The proven path and the full validation decide alike on ``data``; the proof, and its
    written-out function, claim to hold only where the full validation passes."""
    full = _outcome(lambda: validator(target)(data))
    holds = prove(kind, target, stamped).holds(data)
    assert proof_function(kind, target, stamped)(data) == holds
    if holds:
        assert full == "valid"
    check = cross_era_check(_Spec(target), stamped)  # type: ignore[arg-type]
    assert _outcome(lambda: check(kind, data, None)) == full
    return "valid" if full == "valid" else "invalid"


class _Spec:
    """What ``cross_era_check`` reads of a method's spec."""

    def __init__(self, result_type: Any) -> None:
        self.result_type = result_type
        self.task_result_type = None


def _served(revision: str, served: str, method: str, name: str) -> tuple[Any, Any, frozenset[str]]:
    kind = getattr(generated.load(revision).types, name)
    spec = generated.load(served).METHODS[method]
    stamp = stateless._cross_era_stamp(spec)  # pyright: ignore[reportPrivateUsage]
    return kind, spec.result_type, frozenset(stamp)


def _stamped(kind: Any, target: Any, data: dict[str, Any], stamp: frozenset[str]) -> None:
    """As ``Route.dump_result`` completes a result (``_NEUTRAL``'s values)."""
    neutral = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
    if data.get("resultType") in (None, "complete"):
        for key in stamp:
            data.setdefault(key, neutral[key])


def test_every_pair_is_covered() -> None:
    assert len(PAIRS) >= 30
    assert {case[0] for case in PAIRS} == set(HANDSHAKE_REVISIONS)


@pytest.mark.parametrize(("revision", "served", "method", "name"), PAIRS)
@SETTINGS
@given(data=st.data())
def test_valid_results_agree(
    revision: str, served: str, method: str, name: str, data: st.DataObject
) -> None:
    kind, target, stamp = _served(revision, served, method, name)
    drawn = data.draw(strategy_for(revision, name))
    dumped = dumper(kind)(validator(kind)(drawn))
    _stamped(kind, target, dumped, stamp)
    _agree(kind, target, dumped, stamp)


#: Members the 2026-07-28 types type more narrowly than older revisions do (or at all), with
#: values that are wrong there.
_NARROWER: dict[str, list[Any]] = {
    "_meta": [5, "x", [1]],
    "resultType": ["bogus", 5],
    "ttlMs": ["soon", -1.5, True],
    "cacheScope": ["everyone", 3],
    "title": [5, None],
    "icons": ["x", [5]],
    "lastModified": [5],
    "annotations": [{"lastModified": 5}, 7],
    "structuredContent": [[1, 2], "x"],
    "inputSchema": [{"type": "array"}],
    "size": ["big", 1.5],
}


def _mutate(value: Any, data: st.DataObject, depth: int = 0) -> Any:
    """``value`` with some of its objects given a member from ``_NARROWER``."""
    if isinstance(value, dict):
        value = {key: _mutate(item, data, depth + 1) for key, item in value.items()}
        if data.draw(st.booleans()):
            key = data.draw(st.sampled_from(sorted(_NARROWER)))
            value[key] = data.draw(st.sampled_from(_NARROWER[key]))
        return value
    if isinstance(value, list):
        return [_mutate(item, data, depth + 1) for item in value]
    return value


@pytest.mark.parametrize(("revision", "served", "method", "name"), PAIRS)
@SETTINGS
@given(data=st.data())
def test_results_with_narrower_members_agree(
    revision: str, served: str, method: str, name: str, data: st.DataObject
) -> None:
    """Results valid for the handler's revision, with members the served revision may refuse:
    whatever the full validation says, the check says, with the same error."""
    kind, target, stamp = _served(revision, served, method, name)
    drawn = _mutate(data.draw(strategy_for(revision, name)), data)
    try:
        instance = validator(kind)(drawn)
    except ValidationError:
        return  # not a result of the handler's revision: it never reaches the check
    dumped = dumper(kind)(instance)
    _stamped(kind, target, dumped, stamp)
    _agree(kind, target, dumped, stamp)


def test_the_bench_echo_result_is_proven_without_validation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """2025-11-25's echo result under 2026-07-28: nothing of it is validated (no ``_meta``)."""
    kind, target, stamp = _served("2025-11-25", "2026-07-28", "tools/call", "CallToolResult")
    types = generated.load("2025-11-25").types
    data = dumper(kind)(types.CallToolResult(content=[types.TextContent(text="hi")]))
    _stamped(kind, target, data, stamp)
    assert proof_function(kind, target, stamp)(data)
    bad = {**data, "_meta": {"io.modelcontextprotocol/related-task": {}}}
    assert _agree(kind, target, bad, stamp) == "valid"


# -- each kind of difference, between made-up source and target models ----------------------


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Item(_Open):
    kind: Literal["a"]
    label: str | None = None


class ItemB(_Open):
    kind: Literal["b"]


class ItemT(_Open):
    kind: Literal["a"]
    label: int | None = None  # narrower than the source's


class Source(_Open):
    name: str
    note: str | None = None
    count: int | None = None
    ratio: float = 0.5
    items: list[Annotated[Item | ItemB, Field(discriminator="kind")]] = []
    extra_data: dict[str, Any] | None = None


class Target(_Open):
    name: str  # the same: proven
    note: str  # required here
    count: int  # not nullable here
    ratio: float = 0.5  # the same, but a float may be NaN: not proven
    items: list[Annotated[ItemT, Field(discriminator="kind")]] = []  # a member less
    extra_data: Any = None  # takes anything: proven
    level: Literal["x", "y"] | None = None  # the target's own


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str


class Checked(_Open):
    name: str

    @field_validator("name")
    @classmethod
    def _short(cls, value: str) -> str:
        if len(value) > 3:
            raise ValueError("too long")
        return value


KINDS: list[tuple[str, Any, dict[str, Any], str]] = [
    ("same fields, nothing else", Target, {"name": "n", "note": "x", "count": 1}, "valid"),
    ("a required member left out", Target, {"name": "n", "count": 1}, "invalid"),
    (
        "null where the target refuses it",
        Target,
        {"name": "n", "note": "x", "count": None},
        "invalid",
    ),
    (
        "a narrower type in a list item",
        Target,
        {"name": "n", "note": "x", "count": 1, "items": [{"kind": "a", "label": "l"}]},
        "invalid",
    ),
    (
        "a list item the narrower type takes",
        Target,
        {"name": "n", "note": "x", "count": 1, "items": [{"kind": "a", "label": None}]},
        "valid",
    ),
    (
        "a union member the target lacks",
        Target,
        {"name": "n", "note": "x", "count": 1, "items": [{"kind": "b"}]},
        "invalid",
    ),
    (
        "a target's own member, wrong",
        Target,
        {"name": "n", "note": "x", "count": 1, "level": "z"},
        "invalid",
    ),
    (
        "a target's own member, right",
        Target,
        {"name": "n", "note": "x", "count": 1, "level": "x"},
        "valid",
    ),
    (
        "NaN where the source allows it",
        Target,
        {"name": "n", "note": "x", "count": 1, "ratio": math.nan},
        "valid",
    ),
    (
        "anything where the target takes anything",
        Target,
        {"name": "n", "note": "x", "count": 1, "extra_data": {"k": [1]}},
        "valid",
    ),
    ("an extra member the target forbids", Closed, {"name": "n", "other": 1}, "invalid"),
    ("a validator of the target's own", Checked, {"name": "long name"}, "invalid"),
]


@pytest.mark.parametrize(("case", "target", "values", "expected"), KINDS, ids=[k[0] for k in KINDS])
def test_each_kind_of_difference(
    case: str, target: Any, values: dict[str, Any], expected: str
) -> None:
    """``values`` make a valid ``Source``; under ``target`` they are ``expected``, and the check
    decides so, raising the full validation's error."""
    instance = Source.model_validate(values)
    data = dumper(Source)(instance)
    assert _agree(Source, target, data, frozenset()) == expected


def test_a_stamped_member_is_never_taken_as_proven() -> None:
    """A key the runtime may stamp after the dump is checked even where the source declares it
    alike: its value need not be the source's."""
    data = {"name": "n", "note": "x", "count": 1, "level": "x"}

    class WithLevel(Source):
        level: Literal["x", "y"] | None = None

    dumped = dumper(WithLevel)(WithLevel.model_validate(data))
    dumped["level"] = "z"  # as if stamped
    assert prove(WithLevel, Target, frozenset({"level"})).holds(dumped) is False
    assert _agree(WithLevel, Target, dumped, frozenset({"level"})) == "invalid"


def _nested(inner: Any, depth: int) -> Any:
    for _ in range(depth):
        inner = list[inner]  # type: ignore[valid-type]
    return inner


class DeepSource(_Open):
    deep: _nested(Item, 16)  # type: ignore[valid-type]


class DeepTarget(_Open):
    deep: _nested(ItemT, 16)  # type: ignore[valid-type]


@pytest.mark.parametrize(("label", "expected"), [(None, "valid"), ("l", "invalid")])
def test_a_proof_deeper_than_its_written_function_agrees(label: str | None, expected: str) -> None:
    """Past the written function's depth the proof objects take over; the answer is the same."""
    value: Any = {"kind": "a", "label": label}
    for _ in range(16):
        value = [value]
    data = dumper(DeepSource)(DeepSource.model_validate({"deep": value}))
    assert _agree(DeepSource, DeepTarget, data, frozenset()) == expected
