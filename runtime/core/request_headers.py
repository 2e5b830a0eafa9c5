"""The request metadata headers of Streamable HTTP in the stateless era (2026-07-28).

``streamable-http.md``, "Request Metadata": every POST mirrors body fields into headers so
intermediaries can route without parsing JSON. The standard ones (``MCP-Protocol-Version``,
``Mcp-Method``, ``Mcp-Name``) follow from the message alone and the transport computes them
(``standard_headers``). ``Mcp-Param-{Name}`` needs the called tool's ``inputSchema``, which
only the client sees (in ``tools/list`` results): ``ToolHeaders`` keeps that registry, checks
each tool's ``x-mcp-header`` annotations, and computes the headers of a ``tools/call``.

The server's check of the same headers (``http/_binding.py``) reads the rules from here too
(``NAME_SOURCES``, the sentinel, ``header_annotations``), so both sides agree on them.

The two meet through ``HeaderHook``: the transport puts one in ``Connection.extra`` under
``REQUEST_HEADERS`` and asks its ``provider`` (if a lifecycle set one) for extra headers per
message. No httpx here: the stateless client imports this whatever its transport.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from mcpbind.generated.names import (
    META_PROTOCOL_VERSION as PROTOCOL_VERSION,
    PROMPTS_GET,
    RESOURCES_READ,
    TASKS_CANCEL,
    TASKS_GET,
    TASKS_UPDATE,
    TOOLS_CALL,
)

if TYPE_CHECKING:
    from .jsonvalue import JsonValue

__all__ = [
    "NAME_SOURCES",
    "PROTOCOL_VERSION_META",
    "REQUEST_HEADERS",
    "SENTINEL_END",
    "SENTINEL_START",
    "HeaderHook",
    "ToolHeaders",
    "encode_value",
    "header_annotations",
    "standard_headers",
    "tool_header_error",
]

logger = logging.getLogger("mcpbind.runtime.http")

#: The ``Connection.extra`` key under which an HTTP transport offers its ``HeaderHook``.
REQUEST_HEADERS: Final = "mcpbind.request_headers"
#: The ``_meta`` key whose value ``MCP-Protocol-Version`` must equal.
PROTOCOL_VERSION_META: Final = PROTOCOL_VERSION
#: The spec's table: the methods whose ``Mcp-Name`` comes from ``params.name`` / ``params.uri``.
NAME_SOURCES: Final[Mapping[str, str]] = {
    TOOLS_CALL: "name",
    PROMPTS_GET: "name",
    RESOURCES_READ: "uri",
    # The tasks extension (SEP-2663 "Routing Headers"): the task a request is about.
    TASKS_GET: "taskId",
    TASKS_UPDATE: "taskId",
    TASKS_CANCEL: "taskId",
}
#: The Base64 sentinel a value that is not plain header text travels in (``Value Encoding``).
SENTINEL_START: Final = "=?base64?"
SENTINEL_END: Final = "?="
_X_MCP_HEADER: Final = "x-mcp-header"
_PRIMITIVES: Final = frozenset({"string", "integer", "boolean"})
#: RFC 9110 ``tchar``: what a header field name may be made of.
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: Keywords whose values are data, not subschemas: an ``x-mcp-header`` key in them is no annotation.
_DATA_KEYWORDS: Final = frozenset({"const", "enum", "default", "examples", _X_MCP_HEADER})

Provider = Callable[[Mapping[str, Any]], Mapping[str, str]]


@dataclass
class HeaderHook:
    """Set by a transport in ``Connection.extra``; a lifecycle installs ``provider``."""

    provider: Provider | None = None

    def headers_for(self, message: Mapping[str, Any]) -> Mapping[str, str]:
        return self.provider(message) if self.provider is not None else {}


def _plain(value: str) -> bool:
    """True if ``value`` can go into a header as is (``Value Encoding``)."""
    # ASCII and printable: 0x20..0x7E, so no control character (tab included) gets through.
    if not (value.isascii() and value.isprintable()) or value != value.strip(" "):
        return False
    return not (value.startswith(SENTINEL_START) and value.endswith(SENTINEL_END))


def encode_value(value: str) -> str:
    """``value`` as a header value: as is if header-safe, else the Base64 sentinel form."""
    if _plain(value):
        return value
    return SENTINEL_START + base64.b64encode(value.encode("utf-8")).decode("ascii") + SENTINEL_END


def standard_headers(message: Mapping[str, Any]) -> dict[str, str]:
    """``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` of a stateless-era request;
    empty for any other message (a handshake-era one carries no ``_meta`` version)."""
    params: JsonValue = message.get("params")
    meta: JsonValue = params.get("_meta") if type(params) is dict else None
    version: JsonValue = meta.get(PROTOCOL_VERSION_META) if type(meta) is dict else None
    method = message.get("method")
    if type(version) is not str or type(method) is not str:
        return {}
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    source = NAME_SOURCES.get(method)
    name: JsonValue = params.get(source) if source is not None and type(params) is dict else None
    if type(name) is str:
        headers["Mcp-Name"] = encode_value(name)
    return headers


def _header_text(value: Any) -> str | None:
    """A parameter value as header text (string as is, integer decimal, boolean lowercase);
    None for null, absence or a type the annotation does not allow."""
    if type(value) is bool:
        return "true" if value else "false"
    if type(value) is int:
        return str(value)
    if type(value) is float and value.is_integer():
        return str(int(value))
    if type(value) is str:
        return value
    return None


def _primitive(schema: Mapping[str, Any]) -> bool:
    kind: JsonValue = schema.get("type")
    if type(kind) is str:
        return kind in _PRIMITIVES
    if type(kind) is list:
        named = [k for k in kind if k != "null"]
        return bool(named) and all(k in _PRIMITIVES for k in named)
    return False


def _annotations(
    schema: JsonValue,
    path: tuple[str, ...],
    static: bool,
    found: list[tuple[tuple[str, ...], bool, Any]],
) -> None:
    """Every ``x-mcp-header`` in ``schema``: its property path, whether only ``properties``
    led there, and the annotated subschema (as ``(path, static, schema)``)."""
    if type(schema) is list:
        for item in schema:
            _annotations(item, path, False, found)
        return
    if type(schema) is not dict:
        return
    if _X_MCP_HEADER in schema:
        found.append((path, static and bool(path), schema))
    value: JsonValue
    for key, value in schema.items():
        if key in _DATA_KEYWORDS:
            continue
        if key == "properties" and type(value) is dict:
            for name, sub in value.items():
                _annotations(sub, (*path, name), static, found)
        else:
            _annotations(value, path, False, found)


def tool_header_error(tool: Mapping[str, Any]) -> str | None:
    """Why ``tool``'s ``x-mcp-header`` annotations are invalid (``server/tools.md``), or None."""
    seen: dict[str, str] = {}
    found: list[tuple[tuple[str, ...], bool, Any]] = []
    _annotations(tool.get("inputSchema"), (), True, found)
    for path, static, schema in found:
        where = ".".join(path) or "the schema root"
        name = schema[_X_MCP_HEADER]
        if not static:
            return f"x-mcp-header on {where} is not reachable through properties alone"
        if type(name) is not str or not name:
            return f"x-mcp-header of {where} is empty or not a string"
        if not _TOKEN.fullmatch(name):
            return f"x-mcp-header {name!r} of {where} is not an HTTP field-name token"
        if not _primitive(schema):
            return f"x-mcp-header {name!r} is on {where}, which is not a string, integer or boolean"
        other = seen.get(name.lower())
        if other is not None:
            return f"x-mcp-header {name!r} of {where} repeats that of {other} (case-insensitively)"
        seen[name.lower()] = where
    return None


def header_annotations(input_schema: Any) -> list[tuple[str, tuple[str, ...]]]:
    """The ``x-mcp-header`` annotations of a valid tool's ``inputSchema``, as (header name,
    property path); none at all if they break the rules (``tool_header_error``)."""
    if tool_header_error({"inputSchema": input_schema}) is not None:
        return []
    found: list[tuple[tuple[str, ...], bool, Any]] = []
    _annotations(input_schema, (), True, found)
    return [(schema[_X_MCP_HEADER], path) for path, _, schema in found]


@dataclass
class ToolHeaders:
    """What ``tools/list`` taught about ``x-mcp-header``: tool name -> (header, property path)."""

    tools: dict[str, list[tuple[str, tuple[str, ...]]]] = field(default_factory=lambda: {})

    def learn(self, result: JsonValue) -> Any:
        """``result`` (a raw ``tools/list`` result) without its invalid tools, which are logged;
        the valid ones' annotations are remembered."""
        if type(result) is not dict or type(result.get("tools")) is not list:
            return result
        kept: list[Any] = []
        tool: JsonValue
        for tool in result["tools"]:
            if type(tool) is not dict or type(tool.get("name")) is not str:
                kept.append(tool)
                continue
            error = tool_header_error(tool)
            if error is not None:
                logger.warning("left out tool %r of tools/list: %s", tool["name"], error)
                self.tools.pop(tool["name"], None)
                continue
            self.tools[tool["name"]] = header_annotations(tool.get("inputSchema"))
            kept.append(tool)
        if len(kept) == len(result["tools"]):
            return result
        return {**result, "tools": kept}

    def headers_for(self, message: Mapping[str, Any]) -> Mapping[str, str]:
        """The ``Mcp-Param-*`` headers of a ``tools/call`` of a known tool; else none."""
        params: JsonValue = message.get("params")
        if message.get("method") != TOOLS_CALL or type(params) is not dict:
            return {}
        name: JsonValue = params.get("name")
        annotated = self.tools.get(name) if type(name) is str else None
        arguments: JsonValue = params.get("arguments")
        if not annotated or type(arguments) is not dict:
            return {}
        headers: dict[str, str] = {}
        for header, path in annotated:
            value: JsonValue = arguments
            for step in path:
                value = value.get(step) if type(value) is dict else None
            text = _header_text(value)
            if text is not None:
                headers[f"Mcp-Param-{header}"] = encode_value(text)
        return headers
