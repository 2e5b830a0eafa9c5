"""The 2026-07-28 HTTP binding: request headers mirrored from the body, checked against it.

A stateless-era POST carries ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` (for
``tools/call``, ``resources/read``, ``prompts/get``) and one ``Mcp-Param-{Name}`` per argument
the called tool marks with ``x-mcp-header`` (streamable-http.md, "Request Metadata"). An
intermediary may route on them, so the server must refuse a request whose headers say
something its body does not: HTTP 400 with ``HeaderMismatch`` (-32020). Values may come in the
Base64 sentinel ``=?base64?...?=``; names compare case-insensitively, values case-sensitively,
surrounding whitespace is not part of a value, integers compare numerically.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Final

from mcpbind.generated.names import (
    META_CLIENT_CAPABILITIES as CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION as META_VERSION,
)
from mcpbind.runtime.core.errors import HEADER_MISMATCH, INVALID_PARAMS
from mcpbind.runtime.core.request_headers import (
    NAME_SOURCES,
    SENTINEL_END,
    SENTINEL_START,
    header_annotations as annotated,
)

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = [
    "HEADER_MISMATCH",
    "META_VERSION",
    "HeaderFacts",
    "Refusal",
    "ToolHeader",
    "check_facts",
    "check_params",
    "check_request",
    "decode_value",
    "header_annotations",
    "meta_version",
]

#: ``HeaderMismatch``: headers missing, malformed, or saying other than the body.
METHOD_HEADER: Final = "mcp-method"
NAME_HEADER: Final = "mcp-name"
PARAM_PREFIX: Final = "mcp-param-"
#: The longest integer header compared numerically (JavaScript's safe range fits in 17).
_MAX_NUMBER: Final = 40


@dataclass(frozen=True)
class Refusal:
    """Why a request is refused: the JSON-RPC error to answer (HTTP 400)."""

    code: int
    message: str


@dataclass(frozen=True)
class ToolHeader:
    """One ``x-mcp-header`` annotation: the header (lower case) and the argument path."""

    header: str
    path: tuple[str, ...]


def meta_version(message: JsonValue) -> Any:
    """``params._meta["io.modelcontextprotocol/protocolVersion"]`` of a message, or None."""
    params: JsonValue = message.get("params") if type(message) is dict else None
    meta: JsonValue = params.get("_meta") if type(params) is dict else None
    return meta.get(META_VERSION) if type(meta) is dict else None


def decode_value(raw: str) -> str | None:
    """A header value as the client meant it: surrounding whitespace dropped, the Base64
    sentinel decoded (strict alphabet and padding, UTF-8); None if malformed."""
    value = raw.strip(" \t")
    if not (value.isascii() and value.isprintable()):
        return None
    if (
        value.startswith(SENTINEL_START)
        and value.endswith(SENTINEL_END)
        and len(value) >= len(SENTINEL_START) + len(SENTINEL_END)
    ):
        try:
            return base64.b64decode(value[len(SENTINEL_START) : -2], validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return None
    return value


def header_annotations(schema: Any) -> list[ToolHeader]:
    """The valid ``x-mcp-header`` annotations of a tool's ``inputSchema``, by the rules the
    client applies (``_request_headers``): a definition breaking them has none, as clients
    drop such tools (they will not send its headers, so none can be required)."""
    return [ToolHeader(name.lower(), path) for name, path in annotated(schema)]


def _at(arguments: JsonValue, path: Sequence[str]) -> Any:
    node: JsonValue = arguments
    for key in path:
        if type(node) is not dict:
            return None
        node = node.get(key)
    return node


def _same(header: str, value: Any) -> bool:
    """Whether a decoded header value says ``value`` (integers numerically: ``42.0`` is 42)."""
    if type(value) is bool:
        return header == ("true" if value else "false")
    if type(value) is int:
        if len(header) > _MAX_NUMBER:
            return False
        try:
            return Decimal(header) == value
        except InvalidOperation:
            return False
    return type(value) is str and header == value


class HeaderFacts:
    """What the ``mcp-*`` headers of one exact header set say on their own, worked out once
    (``_intake.HeaderView`` keeps them): a repeated routing header's refusal, and the
    ``Mcp-Method`` and ``Mcp-Name`` values as sent (None if absent) and decoded."""

    __slots__ = ("method", "method_raw", "name", "name_key", "name_raw", "repeated")

    def __init__(self, headers: Mapping[str, list[str]]) -> None:
        self.repeated: Refusal | None = None
        for name, values in headers.items():
            if len(values) > 1:
                self.repeated = Refusal(
                    HEADER_MISMATCH, f"Header mismatch: {name} appears more than once"
                )
                break
        said = headers.get(METHOD_HEADER)
        self.method_raw = said[0] if said else None
        self.method = decode_plain(said[0]) if said else None
        #: Where a request of that method names its target (``NAME_SOURCES``), found once.
        self.name_key = NAME_SOURCES.get(self.method) if self.method is not None else None
        said = headers.get(NAME_HEADER)
        self.name_raw = said[0] if said else None
        self.name = decode_value(said[0]) if said else None


def check_request(
    headers: Mapping[str, list[str]],
    message: dict[str, Any],
    version: str | None,
    tool_headers: Sequence[ToolHeader] = (),
) -> Refusal | None:
    """Check a stateless-era request's headers against its body.

    ``headers`` maps each lower-case ``mcp-*`` header name to its values (a repeated routing
    header is a refusal: the one an intermediary read may not be the one checked here);
    ``version`` is ``MCP-Protocol-Version``; ``tool_headers`` the called tool's annotations.
    """
    refusal = check_facts(HeaderFacts(headers), message, version)
    return refusal if refusal is not None else check_params(headers, message, tool_headers)


def check_facts(facts: HeaderFacts, message: dict[str, Any], version: str | None) -> Refusal | None:
    """``check_request`` but for the tool's ``Mcp-Param-*`` headers (``check_params``), from
    the headers' ``HeaderFacts``."""
    # The request that agrees with its headers, as nearly all do, in one pass; anything else
    # goes the long way below, which names what is wrong.
    params: JsonValue = message.get("params")
    if type(params) is dict and facts.repeated is None and version is not None:
        meta: JsonValue = params.get("_meta")
        if (
            type(meta) is dict
            and meta.get(META_VERSION) == version
            and type(meta.get(CLIENT_CAPABILITIES)) is dict
            and facts.method == message["method"]  # None (absent, undecodable) never equals it
        ):
            key = facts.name_key  # the body's method's: it equals the header's
            named: JsonValue = params.get(key) if key is not None else None
            if type(named) is not str or facts.name == named:
                return None
    return _check_facts_slowly(facts, message, version)


def _check_facts_slowly(
    facts: HeaderFacts, message: dict[str, Any], version: str | None
) -> Refusal | None:
    """``check_facts`` step by step: the first refusal that applies."""
    if facts.repeated is not None:
        return facts.repeated
    params: JsonValue = message.get("params")
    meta: JsonValue = params.get("_meta") if type(params) is dict else None
    if version is None:
        return Refusal(HEADER_MISMATCH, "Header mismatch: MCP-Protocol-Version header missing")
    if type(meta) is not dict:
        meta = {}
    body_version = meta.get(META_VERSION)
    if body_version is None or type(meta.get(CLIENT_CAPABILITIES)) is not dict:
        return Refusal(
            INVALID_PARAMS,
            f"Invalid params: _meta must carry {META_VERSION!r} and {CLIENT_CAPABILITIES!r}",
        )
    if body_version != version:
        return Refusal(
            HEADER_MISMATCH,
            f"Header mismatch: MCP-Protocol-Version header value {version!r} does not match "
            f"body value {body_version!r}",
        )
    method = message["method"]
    said = facts.method_raw
    if said is None:
        return Refusal(HEADER_MISMATCH, "Header mismatch: Mcp-Method header missing")
    if facts.method != method:
        return Refusal(
            HEADER_MISMATCH,
            f"Header mismatch: Mcp-Method header value {said.strip()!r} does not match "
            f"body value {method!r}",
        )
    key = NAME_SOURCES.get(method)
    named: JsonValue = params.get(key) if key is not None and type(params) is dict else None
    if type(named) is str:
        said = facts.name_raw
        if said is None:
            return Refusal(HEADER_MISMATCH, "Header mismatch: Mcp-Name header missing")
        if facts.name != named:
            return Refusal(
                HEADER_MISMATCH,
                f"Header mismatch: Mcp-Name header value {said.strip()!r} does not match "
                f"body value {named!r}",
            )
    return None


def check_params(
    headers: Mapping[str, list[str]], message: dict[str, Any], tool_headers: Sequence[ToolHeader]
) -> Refusal | None:
    """Check the ``Mcp-Param-*`` headers of a ``tools/call`` against its arguments."""
    if not tool_headers:
        return None
    params: JsonValue = message.get("params")
    arguments: JsonValue = params.get("arguments") if type(params) is dict else None
    for annotation in tool_headers:
        value = _at(arguments, annotation.path)
        if value is None:
            continue  # nothing to mirror: the client omits the header
        name = PARAM_PREFIX + annotation.header
        said = headers.get(name)
        if not said:
            return Refusal(HEADER_MISMATCH, f"Header mismatch: {name} header missing")
        decoded = decode_value(said[0])
        if decoded is None or not _same(decoded, value):
            return Refusal(
                HEADER_MISMATCH,
                f"Header mismatch: {name} header value {said[0].strip()!r} does not match the body",
            )
    return None


def decode_plain(raw: str) -> str | None:
    """A header value that is never Base64-encoded (``Mcp-Method``), whitespace dropped."""
    value = raw.strip(" \t")
    return value if value.isascii() and value.isprintable() else None
