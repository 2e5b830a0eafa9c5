"""JSON-RPC 2.0 framing and message classification, on plain dicts.

Everything here runs once per message, so it works on the parsed ``dict`` with a few type checks
and never builds a pydantic model: the generated classes validate params and results, in the
task that handles them, not here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, NoReturn, TypeGuard

import orjson

from .errors import INVALID_REQUEST, PARSE_ERROR

if TYPE_CHECKING:
    from .jsonvalue import JsonValue

__all__ = [
    "ERROR_RESPONSE",
    "INVALID",
    "NOTIFICATION",
    "REQUEST",
    "RESPONSE",
    "Invalid",
    "LineFramer",
    "Malformed",
    "classify",
    "decode",
    "encode",
    "error_response",
    "is_request_id",
]

REQUEST: Final = 1
NOTIFICATION: Final = 2
RESPONSE: Final = 3
ERROR_RESPONSE: Final = 4
INVALID: Final = 5

RequestId = int | str


@dataclass(frozen=True, slots=True)
class Malformed:
    """A frame that is not JSON or too large to parse: the session answers with ``code``
    (-32700, or -32600 for a batch refused unparsed), id null; or a request refused unread
    for the memory budget (-31503), answered with its ``request_id``."""

    reason: str
    code: int = PARSE_ERROR
    request_id: RequestId | None = None


@dataclass(frozen=True, slots=True)
class Invalid:
    """Why a parsed message is not a JSON-RPC message, and the id to answer with, if any.

    ``answer`` is False when the message looked like a response: responses are never answered.
    """

    request_id: RequestId | None
    reason: str
    code: int = INVALID_REQUEST
    answer: bool = True


# 19 digits or more in a row: a number orjson may not hold as an integer (it reads one beyond
# 64 bits as a float, silently), or a long digit string, which the exact parser reads alike.
# Found by mapping every digit to "0" and anything else to " " (C speed, ~2 ns a byte); only
# looked for in a frame with 19 digits in all, which most messages are not.
_DIGITS: Final = b"0123456789"
_DIGITS_AS_ZERO: Final = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_DIGITS: Final = b"0" * 19
#: Above this size the digits are counted one by one instead (``bytes.count``, no copy): the
#: translated copy of a frame of megabytes was one more of it in memory at once.
_COUNT_DIGITS_ABOVE: Final = 64 * 1024
_DIGIT_BYTES: Final = tuple(bytes([b]) for b in _DIGITS)
#: A line longer than this is copied out of the framer's buffer once, through a memoryview; a
#: shorter one by a plain slice (two copies, but cheaper than the view for a small line).
_LONG_LINE: Final = 64 * 1024


def _no_constants(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def decode(frame: bytes | bytearray | memoryview | str) -> Any:
    """Parse one frame; a ``Malformed`` marker instead of raising, so transports stay simple.

    Any JSON integer comes back exact: a frame that may hold one beyond 64 bits is parsed by
    the standard library instead of orjson, which would turn it into a float.
    """
    try:
        parsed = orjson.loads(frame)
    except orjson.JSONDecodeError as exc:
        return Malformed(f"invalid JSON: {exc}")
    data = frame if type(frame) is bytes else _as_bytes(frame)
    size = len(data)
    if size < 19:
        return parsed
    if size > _COUNT_DIGITS_ABOVE:
        digits = sum(data.count(digit) for digit in _DIGIT_BYTES)
    else:
        digits = size - len(data.translate(None, _DIGITS))
    if digits < 19:
        return parsed
    if _LONG_DIGITS not in data.translate(_DIGITS_AS_ZERO):
        return parsed
    return json.loads(data, parse_constant=_no_constants)


def _as_bytes(frame: bytes | bytearray | memoryview | str) -> bytes:
    return frame.encode() if isinstance(frame, str) else bytes(frame)


def encode(message: Any) -> bytes:
    """Serialise a message; the output never holds a raw newline, as stdio framing needs.

    orjson, except for a message holding an integer beyond 64 bits, which it cannot write: the
    standard library writes it exactly.
    """
    try:
        return orjson.dumps(message)
    except orjson.JSONEncodeError as error:
        if "64-bit" not in str(error):  # orjson: "Integer exceeds 64-bit range"
            raise
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode()


def is_request_id(value: object) -> TypeGuard[int | str]:
    """MCP ids are strings or integers: never null, never a float, never a bool."""
    kind = type(value)
    return kind is int or kind is str


def error_response(
    request_id: RequestId | None, code: int, message: str, data: Any = None
) -> dict[str, Any]:
    """A JSON-RPC error response."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def classify(message: JsonValue) -> int | Invalid:
    """Tell what kind of JSON-RPC message a parsed value is.

    Returns ``REQUEST``, ``NOTIFICATION``, ``RESPONSE`` or ``ERROR_RESPONSE``, or an ``Invalid``
    saying how to answer. A request whose ``params`` is not an object is classified as a request:
    rejecting its params is the dispatcher's job (-32602), not the framer's.
    """
    if type(message) is not dict:
        return Invalid(None, "a JSON-RPC message must be a JSON object")
    raw_id = message.get("id")
    has_id = "id" in message
    good_id = is_request_id(raw_id)
    if message.get("jsonrpc") != "2.0":
        looks_like_response = "method" not in message and (
            "result" in message or "error" in message
        )
        return Invalid(
            raw_id if good_id else None,
            'the "jsonrpc" member must be exactly "2.0"',
            answer=not looks_like_response,
        )
    if "method" in message:
        method = message["method"]
        if type(method) is not str:
            return Invalid(raw_id if good_id else None, 'the "method" member must be a string')
        if not has_id:
            return NOTIFICATION
        if not good_id:
            return Invalid(None, "a request id must be a string or an integer")
        return REQUEST
    if "result" in message:
        if not good_id:
            return Invalid(None, "a response id must be a string or an integer", answer=False)
        return RESPONSE
    if "error" in message:
        return ERROR_RESPONSE
    return Invalid(raw_id if good_id else None, 'a request must have a "method" member')


#: What a line dropped without a word reports (``LineFramer.drop(None)``): nothing.
_SILENT: Final = Malformed("dropped")


class LineFramer:
    """Splits a byte stream into newline-delimited frames, with a bound on a frame's size.

    A frame over ``max_size`` is dropped as it streams in (memory stays bounded) and reported as
    ``Malformed`` once its end arrives, so the peer still gets a -32700 for it.
    """

    __slots__ = ("_buffer", "_dropped", "_max_size", "_overflow", "_scan_from")

    def __init__(self, max_size: int) -> None:
        self._buffer = bytearray()
        self._max_size = max_size
        self._overflow = False
        self._dropped: Malformed | None = None
        self._scan_from = 0

    @property
    def pending(self) -> int:
        """Bytes held of the line being read."""
        return len(self._buffer)

    def head(self, size: int) -> bytes:
        """The first ``size`` bytes of the line being read."""
        return bytes(self._buffer[:size])

    def drop(self, marker: Malformed | None) -> None:
        """Drop the line being read, what came of it and the rest as it comes; ``marker`` is
        reported as its frame once its end arrives (None: nothing is)."""
        self._buffer.clear()
        self._scan_from = 0
        self._overflow = True
        self._dropped = marker or _SILENT

    def _skipped(self, frames: list[bytes | Malformed]) -> None:
        marker = self._dropped or Malformed(f"message larger than {self._max_size} bytes")
        self._overflow = False
        self._dropped = None
        if marker is not _SILENT:
            frames.append(marker)

    def feed(self, chunk: bytes) -> list[bytes | Malformed]:
        """Add a chunk; return the frames it completed (blank lines are skipped)."""
        frames: list[bytes | Malformed] = []
        if (
            not self._buffer
            and not self._overflow
            and chunk.endswith(b"\n")
            and chunk.count(b"\n") == 1
        ):
            # The common case on a quiet pipe: one whole message per read, no copying.
            line = chunk[:-1]
            if len(line) > self._max_size:
                frames.append(Malformed(f"message larger than {self._max_size} bytes"))
            elif line.strip():
                frames.append(line)
            return frames
        if self._overflow and not self._buffer:
            # A line being dropped: its bytes are not kept, up to its end.
            end = chunk.find(b"\n")
            if end < 0:
                return frames
            self._skipped(frames)
            chunk = chunk[end + 1 :]
        buffer = self._buffer
        buffer += chunk
        start = 0
        scan = self._scan_from
        while True:
            end = buffer.find(b"\n", scan)
            if end < 0:
                break
            if self._overflow or end - start > self._max_size:
                self._skipped(frames)
            else:
                if end - start > _LONG_LINE:
                    with memoryview(buffer) as view:  # a long line: one copy of it, not two
                        line = bytes(view[start:end])
                else:  # a short one: the plain slice is the cheaper of the two
                    line = bytes(buffer[start:end])
                if line.strip():
                    frames.append(line)
            start = end + 1
            scan = start
        if start:
            del buffer[:start]
        if len(buffer) > self._max_size:
            buffer.clear()
            self._overflow = True
        self._scan_from = len(buffer)
        return frames

    def tail(self) -> bytes | Malformed | None:
        """What is left at end of stream: a last frame without its newline, if any."""
        if self._overflow:
            frames: list[bytes | Malformed] = []
            self._skipped(frames)
            return frames[0] if frames else None
        rest = bytes(self._buffer).strip()
        self._buffer.clear()
        self._scan_from = 0
        return rest or None
