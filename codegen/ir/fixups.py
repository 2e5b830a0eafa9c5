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

from ..jsonvalues import is_array, is_object
from .model import FixupRecord


@dataclass(frozen=True)
class Fixup:
    name: str
    pointer: str
    reason: str
    apply: Callable[[dict[str, Any]], bool]


def _widen_type_list(node: Any, extra: tuple[str, ...]) -> bool:
    """Add ``extra`` to a ``type`` list holding ``integer``; True if anything was added."""
    if not is_object(node):
        return False
    types = node.get("type")
    if not is_array(types) or "integer" not in types:
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
    """2025-06-18 types the values ``{"type": [string, integer, boolean]}``; later revisions add
    a ``string[]`` member and hold the scalars in ``anyOf``: both forms are widened."""
    content = defs.get("ElicitResult", {}).get("properties", {}).get("content", {})
    values: object = content.get("additionalProperties", {}) if is_object(content) else {}
    if not is_object(values):
        return False
    members = values.get("anyOf", [values])
    return any(_widen_type_list(m, ("number",)) for m in members)


# The two result types the protocol defines (schema.ts: ResultType = "complete" |
# "input_required" | string; basic/index.md): an InputRequiredResult says "input_required", every
# other result of the revision "complete". Extensions may define more, with results of their own.
INPUT_REQUIRED_RESULT = "InputRequiredResult"
BASE_RESULT = "Result"
RESULT_TYPE = "resultType"


def _result_type_constants(defs: dict[str, Any]) -> bool:
    if not is_object(defs.get(INPUT_REQUIRED_RESULT)):
        return False
    changed = False
    for name, schema in defs.items():
        if name == BASE_RESULT or not is_object(schema):
            continue
        props = schema.get("properties", {})
        node = props.get(RESULT_TYPE) if is_object(props) else None
        if not is_object(node) or "const" in node or "enum" in node:
            continue
        if node.get("type") != "string" or RESULT_TYPE not in schema.get("required", []):
            continue
        value = "input_required" if name == INPUT_REQUIRED_RESULT else "complete"
        props[RESULT_TYPE] = {**node, "const": value}
        changed = True
    return changed


def _number_schema_bounds(defs: dict[str, Any]) -> bool:
    props = defs.get("NumberSchema", {}).get("properties", {})
    changed = False
    for key in ("minimum", "maximum", "default"):
        node = props.get(key)
        if is_object(node) and node.get("type") == "integer":
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
        pointer="#/$defs/ElicitResult/properties/content/additionalProperties{,/anyOf}",
        reason="schema.ts: content?: { [key: string]: string | number | boolean (| string[]) }; "
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
    Fixup(
        name="result-type-constants",
        pointer="#/$defs/*Result/properties/resultType",
        reason='schema.ts: ResultType = "complete" | "input_required" | string, and '
        "basic/index.md: an InputRequiredResult's resultType is input_required, a complete "
        "result's complete; the JSON schema types every resultType as any string, so a "
        "request's result union (CallToolResult | InputRequiredResult) cannot be decided by it",
        apply=_result_type_constants,
    ),
)


def apply_fixups(defs: dict[str, Any]) -> tuple[FixupRecord, ...]:
    """Patch ``defs`` in place; the records of the fix-ups that changed something."""
    return tuple(
        FixupRecord(fix.name, fix.pointer, fix.reason) for fix in FIXUPS if fix.apply(defs)
    )
