"""What a request brings in, checked before anything acts on it: its headers' form, its
``mcp-*`` headers (stateless era), and the JSON-RPC body of a POST.

Every header the endpoint parses has a form: visible ASCII (space and tab allowed inside),
bounded in length. A malformed one is refused with 400 and a JSON-RPC error here, so that no
later step (an event store parsing ``Last-Event-ID``, a session lookup) sees it: ``²`` is a
digit to Python and 5,000 digits are too many for ``int``, and both used to end in a 500.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from mcpbind.runtime.core import jsonrpc as rpc
from mcpbind.runtime.core.bounded import remember
from mcpbind.runtime.core.budget import READ_FACTOR, SMALL_MESSAGE, MemoryBudget
from mcpbind.runtime.core.errors import INVALID_REQUEST, PARSE_ERROR
from starlette.types import Receive, Scope, Send

from .asgi import (
    CONNECTION_ERROR,
    CONTROL_BYTES,
    Disconnected,
    OverBudget,
    TooLarge,
    error,
    hold,
    read_headers,
    read_rest,
    refuse_busy,
)
from .binding import HeaderFacts
from .common import JSON, LAST_EVENT_ID, PROTOCOL_VERSION, SESSION_ID, accepted

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = ["HeaderView", "header_view", "malformed_header", "mcp_headers", "parse_post"]

#: The longest value accepted per header the endpoint reads (others: ``DEFAULT_LIMIT``).
LIMITS: Final = {
    SESSION_ID: 256,
    PROTOCOL_VERSION: 64,
    LAST_EVENT_ID: 256,
    "content-length": 19,
}
DEFAULT_LIMIT: Final = 8192
#: Headers whose value is one token: no spaces inside.
_TOKENS: Final = frozenset({SESSION_ID, PROTOCOL_VERSION, LAST_EVENT_ID, "content-length"})
_MCP: Final = b"mcp-"
#: The ``mcp-*`` header the stateless era ignores (``MCP-Protocol-Version`` is collected too,
#: so that a repeated one is refused).
_READ_ELSEWHERE: Final = frozenset({SESSION_ID.encode()})


def _well_formed(value: str) -> bool:
    if "\t" in value:
        value = value.replace("\t", " ")
    return value.isascii() and value.isprintable()


def malformed_header(headers: dict[str, str]) -> str | None:
    """The name of the first header whose value is malformed, or None."""
    for name, value in headers.items():
        if len(value) > LIMITS.get(name, DEFAULT_LIMIT) or not _well_formed(value):
            return name
        if name in _TOKENS and (" " in value.strip() or "\t" in value.strip()):
            return name
    content_length = headers.get("content-length")
    if content_length is not None and not (content_length.isascii() and content_length.isdigit()):
        return "content-length"
    return None


def mcp_headers(scope: Scope) -> tuple[dict[str, list[str]], str | None]:
    """The ``Mcp-Method``/``Mcp-Name``/``Mcp-Param-*`` headers of a request, by lower-case
    name, every value kept (repeats are refused later); and the first malformed one's name."""
    found: dict[str, list[str]] = {}
    bad: str | None = None
    for raw, value in scope["headers"]:
        if raw.startswith(_MCP) and raw not in _READ_ELSEWHERE:
            name = raw.decode("latin-1").lower()
            text = value.decode("latin-1")
            if bad is None and (len(text) > DEFAULT_LIMIT or not _well_formed(text)):
                bad = name
            found.setdefault(name, []).append(text)
    return found, bad


class HeaderView:
    """What the endpoint reads from one exact set of request headers: the headers it uses (by
    lower-case name), the first malformed one, and (made on first use) the ``mcp-*`` ones.

    Also what every POST asks of them, worked out once: whether ``Accept`` admits (JSON,
    SSE), whether ``Content-Type`` is JSON, the protocol version, and ``admitted_by``, the
    ``HostGuard`` that found ``Host`` and ``Origin`` allowed (set by the endpoint; another
    guard checks them anew)."""

    __slots__ = (
        "_facts",
        "_mcp",
        "_raw",
        "accept",
        "admitted_by",
        "headers",
        "json_body",
        "malformed",
        "version",
    )

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        headers = self.headers = read_headers({"headers": raw})
        self.malformed = malformed_header(headers)
        self._mcp: tuple[dict[str, list[str]], str | None] | None = None
        self._facts: HeaderFacts | None = None
        self.accept = accepted(headers.get("accept"))
        self.json_body = _json_type(headers)
        self.admitted_by: object | None = None
        version = headers.get(PROTOCOL_VERSION)
        #: ``MCP-Protocol-Version``, stripped (None without one).
        self.version = version.strip() if version is not None else None

    def mcp(self) -> tuple[dict[str, list[str]], str | None]:
        """``mcp_headers`` of these headers (shared: not to be changed)."""
        if self._mcp is None:
            self._mcp = mcp_headers({"headers": self._raw})
        return self._mcp

    def facts(self) -> HeaderFacts:
        """What the ``mcp-*`` headers say on their own (``binding.HeaderFacts``; shared)."""
        if self._facts is None:
            self._facts = HeaderFacts(self.mcp()[0])
        return self._facts


#: Views by the exact raw headers: a client sends the same ones request after request, and
#: reading and checking them was a tenth of a stateless-era POST. Any byte that differs is
#: another key, so nothing is reused for headers it was not made from.
_views: dict[tuple[Any, ...], HeaderView] = {}
#: Distinct header sets kept (all dropped when full: varying headers just miss).
MAX_VIEWS: Final = 256


def header_view(scope: Scope) -> HeaderView:
    """The ``HeaderView`` of a request's headers, reused for a header set seen before."""
    raw = scope["headers"]
    try:
        key = tuple(raw)
        view = _views.get(key)
    except TypeError:  # unhashable items (lists): not cached
        return HeaderView(raw)
    if view is None:
        view = remember(_views, key, HeaderView(key), MAX_VIEWS)
    return view


def _json_type(headers: dict[str, str]) -> bool:
    """Whether ``Content-Type`` says JSON (parameters allowed)."""
    content_type = headers.get("content-type", "")
    return content_type == JSON or content_type.split(";", 1)[0].strip().lower() == JSON


async def parse_post(
    receive: Receive,
    send: Send,
    headers: dict[str, str],
    limit: int,
    budget: MemoryBudget,
    json_body: bool | None = None,
) -> tuple[list[Any], bool, int] | None:
    """The POSTed messages, whether it was a batch, and the body's length when it is what a
    session holds a request at (``Envelope.size``: up to ``SMALL_MESSAGE``, else 0, and the
    session measures it parsed); or None once refused.

    The body's bytes are held in the memory ``budget`` while it is read and parsed (``held_for``);
    one that does not fit is refused unread with 503 and ``Retry-After`` (what it carries, once
    parsed, is held by the session that admits it, at its parsed size). ``json_body``: whether
    ``Content-Type`` says JSON, when known (``HeaderView.json_body``)."""
    if not (_json_type(headers) if json_body is None else json_body):
        await error(
            send,
            415,
            CONNECTION_ERROR,
            "Unsupported Media Type: Content-Type must be application/json",
        )
        return None
    declared = headers.get("content-length")  # ``declared_length``, inline: every POST
    expected = int(declared) if declared is not None and declared.isdigit() else 0
    try:
        if expected > limit:
            raise TooLarge
        if expected > CONTROL_BYTES:
            body = await read_rest(
                receive, None, hold(budget, 0, expected * READ_FACTOR), limit, budget
            )
        else:
            # A small body is read whatever the budget holds (``CONTROL_BYTES``): held at its
            # declared length by one add, ``charge`` without its call.
            used = budget.used = budget.used + expected
            if used > budget.peak:
                budget.peak = used
            try:
                message = await receive()
            except BaseException:
                budget.used -= expected
                raise
            body = message.get("body", b"")
            size = len(body)
            # The common case: the whole body in one message, as small as declared or smaller
            # (the held bytes are then set to its size); anything else is read on.
            if (
                size <= CONTROL_BYTES
                and size <= limit
                and message["type"] == "http.request"
                and not message.get("more_body", False)
            ):
                if size != expected:  # held at its size now: the difference either way
                    budget.charge(size - expected)
            else:
                body = await read_rest(receive, message, expected, limit, budget)
    except TooLarge:
        await error(send, 413, CONNECTION_ERROR, f"Payload Too Large: the limit is {limit} bytes")
        return None
    except OverBudget as exc:
        await refuse_busy(send, exc)
        return None
    except Disconnected:
        return None
    size = len(body)
    try:
        parsed = rpc.decode(body)
    finally:
        budget.release(size * READ_FACTOR if size > CONTROL_BYTES else size)  # ``held_for``
        del body
    if parsed.__class__ is dict:
        # One message, most often a valid request (``rpc.classify``'s REQUEST, inline); read
        # through ``one``, typed, as ``parsed`` stays ``Any`` for the list below.
        one: dict[str, Any] = parsed
        request_id: Any = one.get("id")
        if not (
            one.get("jsonrpc") == "2.0"
            and type(one.get("method")) is str
            and (type(request_id) is int or type(request_id) is str)
        ):
            kind = rpc.classify(one)
            if isinstance(kind, rpc.Invalid):
                await error(
                    send, 400, kind.code, f"Invalid Request: {kind.reason}", kind.request_id
                )
                return None
        return [parsed], False, size if size <= SMALL_MESSAGE else 0
    if isinstance(parsed, rpc.Malformed):
        await error(send, 400, PARSE_ERROR, f"Parse error: {parsed.reason}")
        return None
    shape: JsonValue = parsed  # checked below, while ``parsed`` stays Any for the list
    batch = type(shape) is list
    messages: list[Any] = parsed if batch else [parsed]
    if not messages:
        await error(send, 400, INVALID_REQUEST, "Invalid Request: empty batch")
        return None
    for message in messages:
        kind = rpc.classify(message)
        if isinstance(kind, rpc.Invalid):
            await error(send, 400, kind.code, f"Invalid Request: {kind.reason}", kind.request_id)
            return None
    return messages, batch, size if size <= SMALL_MESSAGE else 0
