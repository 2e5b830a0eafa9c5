"""Header names, content types and SSE framing shared by the HTTP transports.

Kept apart from the server and the client so both frame SSE identically, and so the legacy
HTTP+SSE transport reuses the same encoder.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from mcpbind import generated
from mcpbind.runtime.core.bounded import remember
from mcpbind.runtime.core.jsonrpc import encode

__all__ = [
    "AUTH_HEADERS_KEY",
    "AUTH_RECHECK_KEY",
    "AUTH_SCOPE_KEY",
    "DEFAULT_PROTOCOL_VERSION",
    "FORWARDED_KEY",
    "JSON",
    "LAST_EVENT_ID",
    "PROTOCOL_VERSION",
    "SESSION_ID",
    "SSE",
    "SUPPORTED_VERSIONS",
    "accepted",
    "accepts",
    "encode_event",
]

SESSION_ID: Final = "mcp-session-id"
#: The ASGI scope key under which a protected server keeps the request's verified access token.
AUTH_SCOPE_KEY: Final = "mcpbind.auth"
#: Where a protection may put ``(interval, check)``: an open response's token is checked again
#: with ``await check()`` every ``interval`` seconds, and the response ends when it says False.
AUTH_RECHECK_KEY: Final = "mcpbind.auth.recheck"
#: Where a protection may put headers (a list of byte pairs) for the response of a request it
#: admitted (a resource server's fresh ``DPoP-Nonce``).
AUTH_HEADERS_KEY: Final = "mcpbind.auth.headers"
#: Marks the scope of a request another worker admitted and forwarded here (cluster): served
#: here, never forwarded again, and its DPoP proof's ``jti`` already remembered there.
FORWARDED_KEY: Final = "mcpbind.forwarded"
PROTOCOL_VERSION: Final = "mcp-protocol-version"
LAST_EVENT_ID: Final = "last-event-id"
JSON: Final = "application/json"
SSE: Final = "text/event-stream"

#: What a server assumes when a request carries no ``MCP-Protocol-Version`` (transports.md).
DEFAULT_PROTOCOL_VERSION: Final = "2025-03-26"
#: Every revision mcpbind has bindings for.
SUPPORTED_VERSIONS: Final[tuple[str, ...]] = generated.REVISIONS
#: The first revision whose SSE streams start with a priming event (SEP-1699); older clients
#: would try to parse its empty ``data`` as JSON.
PRIMING_SINCE: Final = "2025-11-25"


_accept_cache: dict[str, tuple[bool, bool]] = {}


def accepted(accept: str | None) -> tuple[bool, bool]:
    """Whether ``Accept`` admits (JSON, SSE); cached, as clients hardly vary it."""
    key = accept or ""
    found = _accept_cache.get(key)
    if found is None:
        found = remember(_accept_cache, key, (accepts(accept, JSON), accepts(accept, SSE)), 64)
    return found


def accepts(header: str | None, media_type: str) -> bool:
    """Whether an ``Accept`` header admits ``media_type`` (wildcards included, q=0 excluded)."""
    if not header:
        return False
    major = media_type.split("/", 1)[0]
    for item in header.split(","):
        parts = [p.strip() for p in item.split(";")]
        kind = parts[0].lower()
        if any(p.replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in parts[1:]):
            continue
        if kind in (media_type, f"{major}/*", "*/*"):
            return True
    return False


def _lines(field: str, value: str) -> Iterable[bytes]:
    for line in value.splitlines() or [""]:
        yield f"{field}: {line}\n".encode()


def encode_event(
    message: Any = None,
    *,
    event_id: str | None = None,
    event: str | None = None,
    retry_ms: int | None = None,
    data: str | None = None,
) -> bytes:
    """One SSE event: ``message`` serialised as JSON, or raw ``data`` (the legacy ``endpoint``
    event), or an empty ``data`` line (a priming event that only carries an id and ``retry``)."""
    out = bytearray()
    if event_id is not None:
        out += f"id: {event_id}\n".encode()
    if event is not None:
        out += f"event: {event}\n".encode()
    if retry_ms is not None:
        out += f"retry: {retry_ms}\n".encode()
    if message is not None:
        out += b"data: " + encode(message) + b"\n"
    elif data is not None:
        for line in _lines("data", data):
            out += line
    else:
        out += b"data: \n"
    out += b"\n"
    return bytes(out)
