"""Capability objects: built from dotted paths, asked about, merged. Every layer reads them."""

from __future__ import annotations

import typing
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from .jsonvalue import JsonValue

__all__ = ["capability_tree", "has_capability", "merge"]


def _field_shape(model: Any, name: str) -> tuple[bool, Any]:
    """Whether capability field ``name`` of ``model`` is a boolean flag, and its sub-model."""
    fields = getattr(model, "model_fields", None)
    if not fields or name not in fields:
        return False, None
    annotation = fields[name].annotation
    args = typing.get_args(annotation) or (annotation,)
    # A strict flag is ``Annotated[bool, Strict()]`` (``StrictBool``).
    args = tuple(
        typing.get_args(a)[0] if typing.get_origin(a) is typing.Annotated else a for a in args
    )
    is_flag = bool in args
    sub = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), None)
    return is_flag, sub


def capability_tree(paths: Iterable[str], model: Any) -> dict[str, Any]:
    """Build a capability object from dotted paths (``"resources.subscribe"``).

    ``model`` (the revision's ``ServerCapabilities``/``ClientCapabilities``) says whether a leaf is
    a flag (``subscribe: true``) or an object (``tools: {}``).
    """
    tree: dict[str, Any] = {}
    for path in paths:
        node, cls = tree, model
        parts = path.split(".")
        for depth, part in enumerate(parts):
            is_flag, sub = _field_shape(cls, part)
            if depth == len(parts) - 1:
                if is_flag:
                    node[part] = True
                elif not isinstance(node.get(part), dict):
                    node[part] = {}
            else:
                child: JsonValue = node.get(part)
                if not isinstance(child, dict):
                    child = node[part] = {}
                node, cls = child, sub
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
