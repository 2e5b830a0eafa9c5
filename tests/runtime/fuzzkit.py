"""Fuzzing every client-to-server method of every pinned revision against real servers: what
is sent.

Shared by ``tests/runtime/test_fuzz_methods.py`` (a few examples per method) and
``bench/fuzz.py`` (many). A message is drawn from the revision's ``schema.json``
(hypothesis-jsonschema, ``generated_helpers.strategy_for``), then mutated (members dropped,
added or of the wrong type; huge, deep, odd Unicode, lone surrogates; params that are no
object; ids of every kind) or replaced by a raw frame (invalid UTF-8, truncated JSON, batches,
huge ids). The peers send it to a server process (``fuzz_stdio.py``: ``app_server.py`` on
stdio; ``fuzz_http.py``: ``conformance_app.py`` on Streamable HTTP) and check what every
answer must be (``fuzz_wire.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, Final

from fuzz_wire import STATELESS, STATELESS_META
from generated_helpers import REVISIONS, definitions, strategy_for
from hypothesis import strategies as st

__all__ = [
    "CASES",
    "RAW_FRAMES",
    "messages",
    "methods_of",
    "mutated",
    "raw_frames",
    "record",
]


def methods_of(revision: str) -> list[tuple[str, str, bool]]:
    """(definition, method, is a request) of each message a client sends in ``revision``."""
    found = []
    defs = definitions(revision)
    for union, is_request in (("ClientRequest", True), ("ClientNotification", False)):
        schema = defs[union].schema
        refs = [item["$ref"] for item in schema["anyOf"]] if "anyOf" in schema else []
        names = [ref.rsplit("/", 1)[1] for ref in refs] or [union]
        if not refs:  # one message only: the union is the definition itself
            method = schema["properties"]["method"]["const"]
            found.append((union, method, is_request))
            continue
        for name in names:
            method = defs[name].schema["properties"]["method"]["const"]
            found.append((name, method, is_request))
    return found


CASES: list[tuple[str, str, str, bool]] = [
    (revision, name, method, is_request)
    for revision in REVISIONS
    for name, method, is_request in methods_of(revision)
]

# -- mutations --------------------------------------------------------------------------------

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
odd_text = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=40),
    st.sampled_from(
        ["\x00", "\u202e\u2066evil", "\uffff\ufffe", "💥" * 50, "e\u0301" * 30, "\r\n\t", "\\"]
    ),
    st.sampled_from(["\ud800", "lone \udfff surrogate", "\udc80\ud800"]),
)


def _huge(kind: int) -> Any:
    if kind == 0:
        return "x" * 300_000
    if kind == 1:
        return list(range(20_000))
    return {f"k{i}": i for i in range(5_000)}


def _deep(depth: int, as_dict: bool) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"a": value} if as_dict else [value]
    return value


def _paths(value: Any, at: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    """Every place inside ``value`` (dict keys, list indices), down to six levels."""
    if len(at) >= 6:
        return
    items = (
        value.items() if type(value) is dict else enumerate(value) if type(value) is list else ()
    )
    for key, inner in items:
        yield (*at, key)
        yield from _paths(inner, (*at, key))


def _replaced(value: Any, path: tuple[Any, ...], replacement: Any) -> Any:
    """A copy of ``value`` with what is at ``path`` replaced."""
    if not path:
        return replacement
    head, rest = path[0], path[1:]
    if type(value) is dict:
        return {**value, head: _replaced(value[head], rest, replacement)}
    copy = list(value)
    copy[head] = _replaced(value[head], rest, replacement)
    return copy


@st.composite
def mutated(draw: st.DrawFn, value: Any) -> Any:
    """``value`` (a drawn params object) changed in one of the ways the module names."""
    kind = draw(
        st.sampled_from(
            ["none", "drop", "extra", "wrong", "huge", "deep", "odd", "not-object", "known"]
            + ["nested"] * 3
        )
    )
    if kind == "none":
        return value
    if kind == "nested":
        paths = list(_paths(value, ()))
        if not paths:
            return value
        path = draw(st.sampled_from(paths))
        replacement = draw(st.one_of(json_value, odd_text, st.builds(_huge, st.integers(0, 2))))
        return _replaced(value, path, replacement)
    if kind == "not-object":
        return draw(st.one_of(st.lists(json_leaf, max_size=3), json_leaf))
    target = value if isinstance(value, dict) else {}
    target = dict(target)
    keys = sorted(target)
    if kind == "drop" and keys:
        del target[draw(st.sampled_from(keys))]
        return target
    known_key = bool(keys) and draw(st.booleans())
    key = draw(st.sampled_from(keys)) if known_key else draw(st.text(max_size=10))
    if kind == "extra":
        target[draw(st.text(min_size=1, max_size=10))] = draw(json_value)
    elif kind == "wrong":
        target[key] = draw(json_value)
    elif kind == "huge":
        target[key] = _huge(draw(st.integers(0, 2)))
    elif kind == "deep":
        target[key] = _deep(draw(st.integers(50, 250)), draw(st.booleans()))
    elif kind == "odd":
        target[key] = draw(odd_text)
    else:  # "known": a name the server has, so the handler behind it runs
        target["name"] = draw(st.sampled_from(KNOWN_NAMES))
        if draw(st.booleans()):
            target["arguments"] = draw(st.dictionaries(st.sampled_from(KNOWN_ARGS), json_value))
    return target


#: Tool, prompt and argument names of the example servers, so that handlers run too (not
#: ``slow``, which counts to its ``steps``: drawn huge, it runs for ever, as it should).
KNOWN_NAMES: Final = [
    "add", "weather", "greet", "echo", "review", "paint", "test_simple_text",
    "test_error_handling", "test_prompt_with_arguments", "test_tool_with_progress",
]  # fmt: skip
KNOWN_ARGS: Final = ["a", "b", "city", "steps", "code", "language", "colour", "arg1", "text"]

request_ids = st.one_of(
    st.integers(min_value=1, max_value=2**53),
    st.text(min_size=1, max_size=30),
)
odd_ids = st.one_of(
    st.integers(min_value=2**64, max_value=2**80),
    st.just(-1),
    st.just(""),
    st.just("x" * 5000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
)


@st.composite
def messages(draw: st.DrawFn, revision: str, name: str, is_request: bool) -> dict[str, Any]:
    """A message of definition ``name``, drawn from the schema and then mutated."""
    drawn = draw(strategy_for(revision, name), label=name)
    params = drawn.get("params") if isinstance(drawn, dict) else None
    if revision == STATELESS and isinstance(params, dict):
        found = params.get("_meta")
        meta = found if isinstance(found, dict) else {}
        params = {**params, "_meta": {**meta, **STATELESS_META}}
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": drawn["method"]}
    new_params = draw(mutated(params))
    if new_params is not None or draw(st.booleans()):
        message["params"] = new_params
    if is_request:
        message["id"] = draw(st.one_of(request_ids, request_ids, odd_ids))
    return message


RAW_FRAMES: Final[list[bytes]] = [
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff\xfe"}}',
    b'{"jsonrpc":"2.0","id":2,"method":"tools/list"',
    b'{"jsonrpc":"2.0","id":3,"method":',
    b"[]",
    b"[1,2,3]",
    b'[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"nope"},7]',
    b'[{"jsonrpc":"2.0","method":"notifications/initialized"}]',
    b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":-0.0,"method":"ping"}',
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a":' * 5000 + b"1" + b"}" * 5000,
    b"null",
    b'"just a string"',
    b"42",
    b"{}",
    b'{"jsonrpc":"1.0","id":6,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":7,"method":7}',
    b'{"jsonrpc":"2.0","id":8,"method":"ping","params":"no"}',
    b'{"jsonrpc":"2.0","id":9,"result":{}}',
    b'{"jsonrpc":"2.0","id":10,"error":{"code":"x"}}',
    b'{"jsonrpc":"2.0","id":11,"method":"\xc3\x28"}',
    b"\xef\xbb\xbf" + b'{"jsonrpc":"2.0","id":12,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":13,"method":"ping","params":{"_meta":{"progressToken":NaN}}}',
    b'{"jsonrpc":"2.0","id":14,"method":"ping","id":15}',
    b"\x00\x01\x02",
]
raw_frames = st.one_of(
    st.sampled_from(RAW_FRAMES),
    st.binary(max_size=200).filter(lambda frame: b"\n" not in frame),
    st.builds(lambda frame, cut: frame[:cut], st.sampled_from(RAW_FRAMES), st.integers(1, 60)),
)


def record(transport: str, revision: str, method: str) -> None:
    """Count one example checked, for ``bench/fuzz.py`` (``MCPBIND_FUZZ_REPORT``: a file)."""
    report = os.environ.get("MCPBIND_FUZZ_REPORT")
    if report:
        with open(report, "a") as file:
            file.write(f"{transport}\t{revision}\t{method}\n")
