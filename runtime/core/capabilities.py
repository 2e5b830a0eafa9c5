"""Capability objects: built from dotted paths, asked about, merged. Every layer reads them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from .jsonvalue import JsonValue

__all__ = ["capability_tree", "has_capability", "merge"]


def capability_tree(paths: Iterable[str], shape: Mapping[str, Any] | None) -> dict[str, Any]:
    """Build a capability object from dotted paths (``"resources.subscribe"``).

    ``shape`` (the revision's ``methods.CAPABILITIES`` entry for ``ServerCapabilities`` or
    ``ClientCapabilities``) says whether a leaf is a flag (``subscribe: true``) or an object
    (``tools: {}``); read from the generated table, so no capability class is defined.
    """
    tree: dict[str, Any] = {}
    for path in paths:
        node: dict[str, Any] = tree
        known: Mapping[str, Any] = shape or {}
        parts = path.split(".")
        for depth, part in enumerate(parts):
            member: Any = known.get(part)
            if depth == len(parts) - 1:
                if member is True:
                    node[part] = True
                elif not isinstance(node.get(part), dict):
                    node[part] = {}
            else:
                child: JsonValue = node.get(part)
                if not isinstance(child, dict):
                    child = node[part] = {}
                node = child
                known = cast("Mapping[str, Any]", member) if isinstance(member, Mapping) else {}
    return tree


def has_capability(capabilities: Mapping[str, Any], path: str) -> bool:
    """Whether a capability object advertises a dotted path (present, and not false)."""
    node: JsonValue | Mapping[str, Any] = capabilities
    for part in path.split("."):
        if not isinstance(node, Mapping) or node.get(part) in (None, False):
            return False
        node = node[part]
    return True


def merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge ``extra`` into a copy of ``base`` (user capabilities over derived ones)."""
    out = dict(base)
    value: JsonValue | Mapping[str, Any]
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out
