"""List the capability flags each side can advertise, walking ``Client/ServerCapabilities``."""

from __future__ import annotations

from typing import Any

from ..jsonvalues import is_object
from .model import CapabilityFlag, JSONSchema
from .refs import ref_name

SIDES = (("client", "ClientCapabilities"), ("server", "ServerCapabilities"))


def _kind(schema: Any) -> str:
    if not is_object(schema):
        return "any"
    kind = schema.get("type")
    if kind == "object" and "properties" not in schema:
        return "map" if schema.get("additionalProperties") not in (None, True, {}) else "object"
    return str(kind) if isinstance(kind, str) else "any"


def _walk(
    defs: dict[str, JSONSchema], side: str, schema: Any, path: tuple[str, ...], seen: frozenset[str]
) -> list[CapabilityFlag]:
    target = ref_name(schema)
    if target is not None:
        if target in seen:
            return []
        seen = seen | {target}
        schema = defs.get(target, {})
    flags: list[CapabilityFlag] = []
    props = schema.get("properties") if is_object(schema) else None
    if path:
        flags.append(CapabilityFlag(side, path, "object" if props else _kind(schema)))
    for name, sub in sorted(props.items() if is_object(props) else ()):
        flags.extend(_walk(defs, side, sub, (*path, name), seen))
    return flags


def build_capabilities(defs: dict[str, JSONSchema]) -> tuple[CapabilityFlag, ...]:
    flags: list[CapabilityFlag] = []
    for side, definition in SIDES:
        if definition in defs:
            flags.extend(_walk(defs, side, {"$ref": f"#/$defs/{definition}"}, (), frozenset()))
    return tuple(flags)
