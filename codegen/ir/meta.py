"""The ``_meta`` keys a revision reserves for the protocol (``io.modelcontextprotocol/clientInfo``).

A schema names them in two ways, and both are read. As properties: 2026-07-28's
``RequestMetaObject``, ``ResultMetaObject``... declare ``io.modelcontextprotocol/protocolVersion``
and the others. In prose only: 2025-11-25's ``RelatedTaskMetadata`` says to put it "in the
`_meta` field under the key `io.modelcontextprotocol/related-task`" and declares no property.

A key counts only when its prefix is reserved for MCP (``MetaObject``'s rule: the prefix's second
label is ``modelcontextprotocol`` or ``mcp``), so an unprefixed key (``progressToken``, which is
also a params field of ``notifications/progress``) and an application's own keys never do, and
an extension identifier quoted as an example (``"io.modelcontextprotocol/tasks"``) is not a key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..jsonvalues import is_array, is_object
from .model import JSONSchema

__all__ = ["is_reserved_meta_key", "reserved_meta_keys"]

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_RESERVED_KEY = re.compile(rf"{_LABEL}\.(?:modelcontextprotocol|mcp)(?:\.{_LABEL})*/{_NAME}")
# The one sentence a schema uses for a key it declares no property for.
_PROSE_KEY = re.compile(r"`_meta` field under the key `([^`]+)`")


def is_reserved_meta_key(key: str) -> bool:
    """Whether ``key`` is a ``_meta`` key with a prefix reserved for MCP."""
    return _RESERVED_KEY.fullmatch(key) is not None


def _named_keys(node: Any) -> Iterator[str]:
    if is_object(node):
        properties = node.get("properties")
        if is_object(properties):
            yield from properties
        description = node.get("description")
        if isinstance(description, str):
            yield from _PROSE_KEY.findall(description)
        for value in node.values():
            yield from _named_keys(value)
    elif is_array(node):
        for value in node:
            yield from _named_keys(value)


def reserved_meta_keys(definitions: dict[str, JSONSchema]) -> tuple[str, ...]:
    """Every MCP-reserved ``_meta`` key the definitions name, sorted."""
    return tuple(sorted({key for key in _named_keys(definitions) if is_reserved_meta_key(key)}))
