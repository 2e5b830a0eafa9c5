"""Named patches for known defects of the published schemas.

The JSON schema is generated from ``schema.ts``; in a few places it says less than the TypeScript
source, and a strict reading of it would reject messages real peers send. Each fix-up names the
schema path it patches and why, applies only where the defect is present (so a corrected upstream
schema passes through untouched), and is recorded in the IR so tests can assert where it applied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .model import FixupRecord


@dataclass(frozen=True)
class Fixup:
    name: str
    pointer: str
    reason: str
    apply: Callable[[dict[str, Any]], bool]


def _widen_type_list(node: Any, extra: tuple[str, ...]) -> bool:
    """Add ``extra`` to a ``type`` list holding ``integer``; True if anything was added."""
    if not isinstance(node, dict):
        return False
    types = node.get("type")
    if not isinstance(types, list) or "integer" not in types:
        return False
    missing = [t for t in extra if t not in types]
    if not missing:
        return False
    node["type"] = [*types, *missing]
    return True


def _json_value_scalars(defs: dict[str, Any]) -> bool:
    members = defs.get("JSONValue", {}).get("anyOf", [])
    return any(_widen_type_list(m, ("number", "null")) for m in members)


def _elicit_content_numbers(defs: dict[str, Any]) -> bool:
    content = defs.get("ElicitResult", {}).get("properties", {}).get("content", {})
    values = content.get("additionalProperties", {}) if isinstance(content, dict) else {}
    members = values.get("anyOf", []) if isinstance(values, dict) else []
    return any(_widen_type_list(m, ("number",)) for m in members)


def _number_schema_bounds(defs: dict[str, Any]) -> bool:
    props = defs.get("NumberSchema", {}).get("properties", {})
    changed = False
    for key in ("minimum", "maximum", "default"):
        node = props.get(key)
        if isinstance(node, dict) and node.get("type") == "integer":
            node["type"] = "number"
            changed = True
    return changed


FIXUPS: tuple[Fixup, ...] = (
    Fixup(
        name="json-value-number-and-null",
        pointer="#/$defs/JSONValue/anyOf",
        reason="schema.ts: JSONValue = string | number | boolean | null | JSONObject | JSONArray; "
        "the JSON schema's scalar member allows only string, integer, boolean",
        apply=_json_value_scalars,
    ),
    Fixup(
        name="elicit-result-content-number",
        pointer="#/$defs/ElicitResult/properties/content/additionalProperties/anyOf",
        reason="schema.ts: content?: { [key: string]: string | number | boolean | string[] }; "
        "the JSON schema allows integer but not number",
        apply=_elicit_content_numbers,
    ),
    Fixup(
        name="number-schema-bounds-number",
        pointer="#/$defs/NumberSchema/properties/{minimum,maximum,default}",
        reason="schema.ts: minimum?/maximum?/default?: number (@TJS-type number) of a number "
        "field; release-day schemas of 2025-06-18 and 2025-11-25 say integer",
        apply=_number_schema_bounds,
    ),
)


def apply_fixups(defs: dict[str, Any]) -> tuple[FixupRecord, ...]:
    """Patch ``defs`` in place; the records of the fix-ups that changed something."""
    return tuple(
        FixupRecord(fix.name, fix.pointer, fix.reason) for fix in FIXUPS if fix.apply(defs)
    )
