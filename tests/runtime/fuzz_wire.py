"""What both fuzzing peers (``fuzz_stdio.py``, ``fuzz_http.py``) share on the wire: how a
message is encoded, the messages they send themselves (``initialize``, the liveness probe),
and what every answer must be.
"""

from __future__ import annotations

import json
from typing import Any, Final

import orjson
from mcpbind.runtime import INTERNAL_ERROR

__all__ = [
    "ABSENT",
    "ANSWER_TIMEOUT",
    "STATELESS",
    "STATELESS_META",
    "answer_key",
    "encode",
    "has_lone_surrogate",
    "initialize",
    "no_traceback",
    "probe_message",
    "responses_in",
    "well_formed",
]

STATELESS: Final = "2026-07-28"
#: The ``_meta`` a 2026-07-28 client sends with every request.
STATELESS_META: Final[dict[str, Any]] = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientCapabilities": {},
}
#: Seconds an answer may take before the server counts as hung.
ANSWER_TIMEOUT = 20.0
#: A message's ``id`` when it has none (``None`` is an id of its own).
ABSENT: Final = object()


def has_lone_surrogate(value: Any) -> bool:
    """Whether a lone surrogate is anywhere in ``value``: its JSON cannot be read as UTF-8
    text, so the only answer is a parse error (id null), even to a notification."""
    if type(value) is str:
        return any("\ud800" <= c <= "\udfff" for c in value)
    if type(value) is dict:
        return any(has_lone_surrogate(k) or has_lone_surrogate(v) for k, v in value.items())
    if type(value) is list:
        return any(has_lone_surrogate(v) for v in value)
    return False


def encode(message: Any) -> bytes:
    """The message's JSON: UTF-8 where orjson can write it, else escaped by the standard
    library (integers beyond 64 bits, lone surrogates as ``\\ud800``)."""
    try:
        return orjson.dumps(message)
    except orjson.JSONEncodeError:
        return json.dumps(message).encode()


def initialize(
    request_id: str | int, revision: str, capabilities: dict[str, Any]
) -> dict[str, Any]:
    """A handshake-era client's ``initialize`` request."""
    params = {
        "protocolVersion": revision,
        "capabilities": capabilities,
        "clientInfo": {"name": "fuzz", "version": "0"},
    }
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def probe_message(revision: str, probe_id: str) -> dict[str, Any]:
    """The liveness probe: ``ping`` (``server/discover`` in the stateless era)."""
    if revision == STATELESS:
        params = {"_meta": STATELESS_META}
        return {"jsonrpc": "2.0", "id": probe_id, "method": "server/discover", "params": params}
    return {"jsonrpc": "2.0", "id": probe_id, "method": "ping"}


def no_traceback(text: str) -> None:
    assert "Traceback (most recent call last)" not in text, text[:2000]
    assert '.py", line ' not in text, text[:2000]


def well_formed(answer: Any) -> None:
    """A JSON-RPC response: version, id, and exactly one of a result or a proper error."""
    assert type(answer) is dict, answer
    assert answer.get("jsonrpc") == "2.0", answer
    assert "id" in answer and type(answer["id"]) in (int, str, type(None)), answer
    assert ("result" in answer) != ("error" in answer), answer
    if "error" in answer:
        error = answer["error"]
        assert type(error) is dict and type(error.get("code")) is int, answer
        assert type(error.get("message")) is str, answer
        # Bad input is the client's error: a handler that failed on it answers -32603.
        assert error["code"] != INTERNAL_ERROR, answer


def responses_in(parsed: Any) -> list[dict[str, Any]]:
    """The responses among what a server wrote (a batch's array counts each)."""
    items = parsed if type(parsed) is list else [parsed]
    return [item for item in items if type(item) is dict and "method" not in item]


def answer_key(request_id: Any) -> Any:
    """A request id as the server reads it back (an id that is no JSON-RPC id: None)."""
    if type(request_id) is str:
        return request_id
    if type(request_id) is int:
        return request_id
    return None
