"""Framing and classification: the per-message code that never touches pydantic."""

from __future__ import annotations

import pytest
from mcpbind.runtime.core import jsonrpc as rpc


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, rpc.REQUEST),
        ({"jsonrpc": "2.0", "id": "a", "method": "ping", "params": {}}, rpc.REQUEST),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, rpc.NOTIFICATION),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, rpc.RESPONSE),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"}}, rpc.ERROR_RESPONSE),
        ({"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": "x"}}, rpc.ERROR_RESPONSE),
    ],
)
def test_classify_valid(message: dict[str, object], expected: int) -> None:
    assert rpc.classify(message) == expected


@pytest.mark.parametrize(
    ("message", "answer_id", "answer"),
    [
        ([1, 2], None, True),
        ("text", None, True),
        ({"jsonrpc": "1.0", "id": 3, "method": "ping"}, 3, True),
        ({"id": 3, "method": "ping"}, 3, True),
        ({"jsonrpc": "2.0", "id": 3}, 3, True),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None, True),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None, True),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None, True),
        ({"jsonrpc": "2.0", "id": 4, "method": 7}, 4, True),
        ({"jsonrpc": "1.0", "id": 3, "result": {}}, 3, False),
        ({"jsonrpc": "2.0", "id": 2.5, "result": {}}, None, False),
    ],
)
def test_classify_invalid(message: object, answer_id: object, answer: bool) -> None:
    verdict = rpc.classify(message)
    assert isinstance(verdict, rpc.Invalid)
    assert verdict.request_id == answer_id
    assert verdict.answer is answer


def test_decode_marks_bad_json() -> None:
    assert isinstance(rpc.decode(b"{nope"), rpc.Malformed)
    assert rpc.decode(b'{"a": 1}') == {"a": 1}


def test_encode_has_no_newline() -> None:
    assert b"\n" not in rpc.encode({"text": "line one\nline two"})


def test_framer_splits_and_joins() -> None:
    framer = rpc.LineFramer(1000)
    assert framer.feed(b'{"a":1}\n') == [b'{"a":1}']
    assert framer.feed(b'{"b":') == []
    assert framer.feed(b'2}\n{"c":3}\n\n{"d"') == [b'{"b":2}', b'{"c":3}']
    assert framer.feed(b":4}\n") == [b'{"d":4}']
    assert framer.tail() is None


def test_framer_bounds_a_huge_line_and_recovers() -> None:
    framer = rpc.LineFramer(100)
    frames = []
    for _ in range(50):
        frames += framer.feed(b"x" * 64)
    frames += framer.feed(b'xx\n{"ok":1}\n')
    assert isinstance(frames[0], rpc.Malformed)
    assert frames[1:] == [b'{"ok":1}']
    assert len(framer._buffer) == 0


def test_framer_tail_without_newline() -> None:
    framer = rpc.LineFramer(100)
    assert framer.feed(b'{"a":1}') == []
    assert framer.tail() == b'{"a":1}'


BIG = 123456789012345678901  # beyond 64 bits: orjson alone would read it as a float


@pytest.mark.parametrize(
    "frame",
    [
        b'{"id": 123456789012345678901}',
        '{"id": 123456789012345678901}',
        bytearray(b'{"id": 123456789012345678901}'),
        b'{"x": "1", "id": 123456789012345678901}',
    ],
)
def test_decode_keeps_an_integer_beyond_64_bits_exact(frame: object) -> None:
    decoded = rpc.decode(frame)  # type: ignore[arg-type]
    assert decoded["id"] == BIG and type(decoded["id"]) is int


def test_decode_many_short_numbers_is_the_fast_parse() -> None:
    """More than 19 digits in all but no run of 19: still every number as it was written."""
    numbers = [1234567, 7654321, 1111111, 2222222, 3333333]
    assert rpc.decode(b'{"a": [1234567,7654321,1111111,2222222,3333333]}') == {"a": numbers}
