"""Raw ASGI helpers: reading headers and bodies, writing whole responses and SSE heads.

No request or response objects on the hot path: a POST decodes only the headers it reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from mcpbind.runtime.core import jsonrpc as rpc
from mcpbind.runtime.core.admission import SERVER_UNAVAILABLE
from mcpbind.runtime.core.budget import READ_FACTOR, SMALL_MESSAGE, MemoryBudget
from mcpbind.runtime.core.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from starlette.types import Message, Receive, Scope, Send

from .common import JSON, LAST_EVENT_ID, PROTOCOL_VERSION, SESSION_ID, SSE

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = [
    "CONNECTION_ERROR",
    "CONTROL_BYTES",
    "ERROR_STATUS",
    "READ_HEADERS",
    "RETRY_AFTER",
    "Disconnected",
    "OverBudget",
    "TooLarge",
    "declared_length",
    "error",
    "header_list",
    "held_for",
    "hold",
    "read_body",
    "read_headers",
    "read_rest",
    "refuse_busy",
    "respond",
    "sse_headers",
    "status_for",
]

#: The JSON-RPC code for a transport-level refusal that has no better code (the SDKs agree).
CONNECTION_ERROR: Final = -32000

#: A body this small is read even when the memory budget is spent: pings, cancellations and
#: responses must go on, and a small request is then refused by its session (-31503). Their
#: number is bounded by the connections the HTTP server accepts.
CONTROL_BYTES: Final = SMALL_MESSAGE

#: HTTP statuses of JSON-RPC errors answered at once to a stateless-era request; others are 200.
ERROR_STATUS: Final = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
    # Busy (bounds or memory budget): not handled, to be retried (with ``Retry-After``).
    SERVER_UNAVAILABLE: 503,
}

#: The request headers the transport reads (handlers reach all of them through ``request``).
READ_HEADERS: Final = {
    name.encode(): name
    for name in (
        "host",
        "origin",
        "accept",
        "content-type",
        "content-length",
        SESSION_ID,
        PROTOCOL_VERSION,
        LAST_EVENT_ID,
    )
}


def read_headers(scope: Scope) -> dict[str, str]:
    """The headers the transport reads, by lower-case name (the first of repeated ones, as
    starlette); decoding only these saved a few percent of a POST."""
    found: dict[str, str] = {}
    for raw, value in scope["headers"]:
        name = READ_HEADERS.get(raw)
        if name is not None and name not in found:
            found[name] = value.decode("latin-1")
    return found


def header_list(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]


async def respond(
    send: Send,
    status: int,
    body: bytes = b"",
    content_type: str | None = JSON,
    headers: dict[str, str] | None = None,
) -> None:
    """A whole response in two ASGI messages (uvicorn writes each at once)."""
    raw = [(b"content-length", b"%d" % len(body))]
    if body and content_type is not None:
        raw.append((b"content-type", content_type.encode("latin-1")))
    if headers:
        raw += header_list(headers)
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def error(
    send: Send,
    status: int,
    code: int,
    message: str,
    request_id: int | str | None = None,
    data: Any = None,
    **headers: str,
) -> None:
    """An HTTP error whose body is a JSON-RPC error (without id unless one is known)."""
    body = rpc.encode(rpc.error_response(request_id, code, message, data))
    await respond(send, status, body, JSON, headers or None)


def status_for(response: JsonValue) -> int:
    """The HTTP status of a JSON answer in the stateless era: an error's code decides it
    (streamable-http.md: 400 for refusals of the request, 404 for an unknown method)."""
    error_body: JsonValue = response.get("error") if type(response) is dict else None
    code: JsonValue = error_body.get("code") if type(error_body) is dict else None
    return ERROR_STATUS.get(code, 200) if type(code) is int else 200


class TooLarge(Exception):
    pass


class Disconnected(Exception):
    pass


class OverBudget(Exception):
    """The body does not fit in the process's memory budget (answered 503, unread)."""


#: Seconds a client refused for the memory budget is told to wait (``Retry-After``).
RETRY_AFTER: Final = "1"


async def refuse_busy(send: Send, exc: OverBudget) -> None:
    """503 with ``Retry-After`` and -31503 busy: a body the memory budget had no room for."""
    await error(
        send,
        503,
        SERVER_UNAVAILABLE,
        f"Service Unavailable: busy: {exc}; retry later",
        data={"reason": "busy"},
        **{"retry-after": RETRY_AFTER},
    )


async def read_body(
    receive: Receive, headers: dict[str, str], limit: int, budget: MemoryBudget | None = None
) -> bytes:
    """The body, at most ``limit`` bytes. With a ``budget``, its bytes are held there as they
    arrive (the declared length at once), a body over ``CONTROL_BYTES`` at ``READ_FACTOR``
    times its size (the bytes, their parse and its result to come): on return the budget holds
    ``held_for(len(body))`` for the caller to release; on an exception it holds nothing of it."""
    expected = declared_length(headers)
    if expected > limit:
        raise TooLarge
    held = 0
    if budget is not None and expected:
        held = hold(budget, 0, held_for(expected))
    return await read_rest(receive, None, held, limit, budget)


def declared_length(headers: dict[str, str]) -> int:
    """``Content-Length`` as a number (0 without one: the body is read to learn it)."""
    declared = headers.get("content-length")
    return int(declared) if declared is not None and declared.isdigit() else 0


async def read_rest(
    receive: Receive,
    first: Message | None,
    held: int,
    limit: int,
    budget: MemoryBudget | None,
) -> bytes:
    """``read_body`` from its first message on (``first``, already received, or None), with
    ``held`` bytes of it held in ``budget`` already (released here on an exception)."""
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            message = first if first is not None else await receive()
            first = None
            if message["type"] == "http.disconnect":
                raise Disconnected
            chunk: bytes = message.get("body", b"")
            if chunk:
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    raise TooLarge
                if budget is not None and size > held:  # ``held_for``, inline: per chunk
                    held = hold(budget, held, size * READ_FACTOR if size > CONTROL_BYTES else size)
            if not message.get("more_body", False):
                break
    except BaseException:
        if budget is not None:
            budget.release(held)
        raise
    if budget is not None and held > size and held > (keep := held_for(size)):
        budget.release(held - keep)
    # Joined once: adding each chunk to the body copied it over and over (quadratic).
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def held_for(size: int) -> int:
    """What a body of ``size`` bytes is held at while it is read and parsed."""
    return size * READ_FACTOR if size > CONTROL_BYTES else size


def hold(budget: MemoryBudget, held: int, total: int) -> int:
    """Hold ``total`` bytes in all (``held`` already are), or raise ``OverBudget``, with the
    ``held`` bytes still held: the caller releases them (releasing them here too gave them back
    twice, and the budget's count went below zero)."""
    more = total - held
    if not budget.reserve(more):
        if total > CONTROL_BYTES:
            raise OverBudget(budget.refusal(more))
        budget.charge(more)
    return total


def sse_headers(extra: dict[str, str]) -> list[tuple[bytes, bytes]]:
    """SSE responses must not be cached or buffered by proxies (nginx honours the last one)."""
    return [
        (b"content-type", SSE.encode()),
        (b"cache-control", b"no-cache, no-transform"),
        (b"x-accel-buffering", b"no"),
        *header_list(extra),
    ]
