"""The 2026-07-28 header rules as functions: decoding, annotations, comparison, order."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from mcpbind.runtime.transports.http.binding import (
    HEADER_MISMATCH,
    HeaderFacts,
    ToolHeader,
    _check_facts_slowly,
    check_facts,
    check_request,
    decode_value,
    header_annotations,
)

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def b64(raw: bytes) -> str:
    return "=?base64?" + base64.b64encode(raw).decode() + "?="


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [
        ("us-west1", "us-west1"),
        ("  padded\t", "padded"),
        (b64("Hello, 世界".encode()), "Hello, 世界"),
        (b64(b" padded "), " padded "),
        (b64(b"line1\nline2"), "line1\nline2"),
        (b64(b"=?base64?literal?="), "=?base64?literal?="),
        ("=?base64?SGVsbG8", "=?base64?SGVsbG8"),  # no suffix: a literal
        ("SGVsbG8=?=", "SGVsbG8=?="),  # no prefix: a literal
        ("=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?="),  # markers are case-sensitive
        ("=?base64?SGVsbG8?=", None),  # bad padding
        ("=?base64?SGVs!!!bG8=?=", None),  # not the alphabet
        (b64(b"\xff\xfe"), None),  # not UTF-8
        ("caf\xe9", None),  # not ASCII
        ("a\x01b", None),  # a control character
    ],
)
def test_decode_value(raw: str, decoded: str | None) -> None:
    assert decode_value(raw) == decoded


def schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def test_header_annotations_follow_the_schema_rules() -> None:
    nested = schema(
        region={"type": "string", "x-mcp-header": "Region"},
        options=schema(depth={"type": "integer", "x-mcp-header": "Depth"}),
        plain={"type": "string"},
    )
    assert header_annotations(nested) == [
        ToolHeader("region", ("region",)),
        ToolHeader("depth", ("options", "depth")),
    ]
    for broken in (
        schema(a={"type": "string", "x-mcp-header": ""}),
        schema(a={"type": "string", "x-mcp-header": "My Region"}),
        schema(a={"type": "string", "x-mcp-header": "Région"}),
        schema(a={"type": "number", "x-mcp-header": "Score"}),
        schema(a={"type": "object", "x-mcp-header": "Data"}),
        schema(
            a={"type": "string", "x-mcp-header": "X"}, b={"type": "string", "x-mcp-header": "x"}
        ),
    ):
        assert header_annotations(broken) == []
    assert header_annotations(None) == []


def call(**arguments: Any) -> dict[str, Any]:
    params = {"name": "t", "arguments": arguments, "_meta": META}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


def headers(**values: str) -> dict[str, list[str]]:
    base = {"mcp-method": ["tools/call"], "mcp-name": ["t"]}
    return {**base, **{f"mcp-param-{k}": [v] for k, v in values.items()}}


ANNOTATED = [ToolHeader("n", ("n",)), ToolHeader("b", ("b",)), ToolHeader("s", ("s",))]


@pytest.mark.parametrize(
    ("arguments", "sent", "ok"),
    [
        ({"n": 42}, {"n": "42"}, True),
        ({"n": 42}, {"n": "42.0"}, True),
        ({"n": 42}, {"n": "4.2e1"}, True),
        ({"n": 42}, {"n": "43"}, False),
        ({"n": 42}, {"n": "1" * 5000}, False),
        ({"n": -7}, {"n": b64(b"-7")}, True),
        ({"b": True}, {"b": "true"}, True),
        ({"b": True}, {"b": "True"}, False),
        ({"s": "x"}, {}, False),  # the value is in the body, the header is not
        ({"s": None}, {}, True),  # null: nothing to mirror
        ({}, {}, True),
        ({"s": "X"}, {"s": "x"}, False),
    ],
)
def test_param_headers_compare_by_type(
    arguments: dict[str, Any], sent: dict[str, str], ok: bool
) -> None:
    refusal = check_request(headers(**sent), call(**arguments), "2026-07-28", ANNOTATED)
    assert (refusal is None) == ok, refusal
    if refusal is not None:
        assert refusal.code == HEADER_MISMATCH


def test_order_of_refusals() -> None:
    """Missing version header, then missing _meta fields (-32602), then mismatches."""
    no_meta = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    refusal = check_request({"mcp-method": ["tools/list"]}, no_meta, None)
    assert refusal is not None and refusal.code == HEADER_MISMATCH
    refusal = check_request({"mcp-method": ["tools/list"]}, no_meta, "2026-07-28")
    assert refusal is not None and refusal.code == -32602
    refusal = check_request(headers(), call(), "2099-01-01")
    assert refusal is not None and refusal.code == HEADER_MISMATCH
    repeated = {**headers(), "mcp-protocol-version": ["2026-07-28", "2026-07-28"]}
    refusal = check_request(repeated, call(), "2026-07-28")
    assert refusal is not None and "more than once" in refusal.message


_VALUE = st.sampled_from(["tools/call", "tools/list", "prompts/get", "t", "other", " t ", ""])
_ABSENT = st.none()


@st.composite
def _facts_and_messages(draw: st.DrawFn) -> tuple[HeaderFacts, dict[str, Any], str | None]:
    """Header sets and bodies that agree, or differ in one place or several."""
    mcp: dict[str, list[str]] = {}
    for header in ("mcp-method", "mcp-name"):
        values = draw(st.lists(_VALUE, max_size=2))
        if values:
            mcp[header] = values
    params: Any = draw(
        st.one_of(
            st.none(),
            st.just([]),
            st.fixed_dictionaries(
                {},
                optional={
                    "name": st.one_of(_VALUE, st.integers()),
                    "uri": _VALUE,
                    "_meta": st.one_of(
                        st.just(META),
                        st.fixed_dictionaries(
                            {},
                            optional={
                                "io.modelcontextprotocol/protocolVersion": st.sampled_from(
                                    ["2026-07-28", "2025-11-25", 7]
                                ),
                                "io.modelcontextprotocol/clientCapabilities": st.one_of(
                                    st.just({}), st.just([]), st.none()
                                ),
                            },
                        ),
                        st.just("meta"),
                    ),
                },
            ),
        )
    )
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": draw(_VALUE)}
    if params is not None:
        message["params"] = params
    version = draw(st.sampled_from(["2026-07-28", "2025-11-25", None]))
    return HeaderFacts(mcp), message, version


@settings(max_examples=300, deadline=None)
@given(_facts_and_messages())
def test_check_facts_one_pass_agrees_with_the_steps(
    case: tuple[HeaderFacts, dict[str, Any], str | None],
) -> None:
    """The one-pass acceptance of a request that agrees with its headers answers as the
    step-by-step checks do, refusal for refusal."""
    facts, message, version = case
    assert check_facts(facts, message, version) == _check_facts_slowly(facts, message, version)
