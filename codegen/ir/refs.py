"""JSON Schema reference helpers shared by the IR stages."""

from __future__ import annotations

from typing import Any

from ..jsonvalues import is_array, is_object

DEFS_PREFIX = "#/$defs/"
_PREFIXES = ("#/$defs/", "#/definitions/")


def ref_to(name: str) -> dict[str, str]:
    return {"$ref": DEFS_PREFIX + name}


def ref_name(node: Any) -> str | None:
    """The definition a ``{"$ref": ...}`` node points at, or None for anything else."""
    if is_object(node):
        ref = node.get("$ref")
        if isinstance(ref, str):
            for prefix in _PREFIXES:
                if ref.startswith(prefix):
                    return ref[len(prefix) :]
    return None


def definitions_of(document: dict[str, Any]) -> dict[str, Any]:
    """The definitions object of a draft-07 (``definitions``) or 2020-12 (``$defs``) schema."""
    defs = document.get("$defs", document.get("definitions"))
    return defs if is_object(defs) else {}


def union_members(schema: Any) -> list[str]:
    """Names referenced by an ``anyOf``/``oneOf`` union definition, in schema order."""
    if not is_object(schema):
        return []
    members = schema.get("anyOf", schema.get("oneOf", []))
    names = [ref_name(m) for m in members] if is_array(members) else []
    return [n for n in names if n is not None]


def const_of(schema: Any, prop: str) -> Any:
    """The ``const`` value of property ``prop`` (single-value enums count), or None."""
    if not is_object(schema):
        return None
    node = schema.get("properties", {}).get(prop)
    if not is_object(node):
        return None
    if "const" in node:
        return node["const"]
    enum = node.get("enum")
    if is_array(enum) and len(enum) == 1:
        return enum[0]
    return None
