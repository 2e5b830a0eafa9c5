"""Read IR schemas as shapes: flatten ``allOf``, name types, summarise a node in a few words.

The comparison and the rename matcher both need to see "what a value may be" without its prose;
these helpers are the one place that decides how, so the two agree.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from ..ir import JSONSchema
from ..ir.refs import ref_name
from ..jsonvalues import JSONObject, is_array, is_object

# Keywords that document a schema without constraining it.
ANNOTATIONS = frozenset(
    {"description", "title", "examples", "$comment", "default", "deprecated", "markdownDescription"}
)
UNION_KEYS = ("anyOf", "oneOf")
# Numeric and length bounds: for a ``min`` bound a smaller new value widens, for ``max`` a larger.
LOWER_BOUNDS = frozenset({"minimum", "exclusiveMinimum", "minItems", "minLength", "minProperties"})
UPPER_BOUNDS = frozenset({"maximum", "exclusiveMaximum", "maxItems", "maxLength", "maxProperties"})


def union_members(node: Any) -> list[Any] | None:
    """The members of an ``anyOf``/``oneOf`` node, or None when it is not a union."""
    if is_object(node):
        for key in UNION_KEYS:
            members = node.get(key)
            if is_array(members):
                return members
    return None


def resolve(node: Any, defs: Mapping[str, Any]) -> Any:
    """Follow a ``$ref`` chain to the schema it names (a dangling ref resolves to itself)."""
    seen: set[str] = set()
    while (target := ref_name(node)) is not None and target in defs and target not in seen:
        seen.add(target)
        node = defs[target]
    return node


def effective(schema: Any, defs: Mapping[str, Any]) -> Any:
    """``schema`` with ``allOf`` merged into one object, so inherited properties compare as own.

    Later parts override earlier ones property by property (``{type: integer}`` then
    ``{const: -32042}`` gives both keywords); ``required`` is the union of all parts.
    """
    return _effective(schema, defs, frozenset())


def _effective(schema: Any, defs: Mapping[str, Any], seen: frozenset[str]) -> Any:
    if not is_object(schema) or not is_array(schema.get("allOf")):
        return schema
    merged: JSONSchema = {k: v for k, v in schema.items() if k != "allOf"}
    props: dict[str, Any] = {}
    required: list[str] = []
    for part in schema["allOf"]:
        target = ref_name(part)
        if target is not None:
            if target in seen or target not in defs:
                continue
            part = _effective(defs[target], defs, seen | {target})
        if not is_object(part):
            continue
        part_props: JSONObject = part.get("properties") or {}
        for prop, sub in part_props.items():
            base = props.get(prop)
            props[prop] = {**base, **sub} if is_object(base) and is_object(sub) else sub
        required.extend(r for r in part.get("required", []) if r not in required)
        for key, value in part.items():
            if key not in ("properties", "required", "description"):
                merged.setdefault(key, value)
    own: JSONObject = schema.get("properties") or {}
    for prop, sub in own.items():
        props[prop] = sub
    required.extend(r for r in schema.get("required", []) if r not in required)
    merged["type"] = "object"
    merged["properties"] = props
    if required:
        merged["required"] = required
    return merged


def types_of(node: Any) -> frozenset[str] | None:
    """The JSON types a node allows by its ``type`` keyword; None when it has none."""
    if not is_object(node):
        return None
    kind = node.get("type")
    if isinstance(kind, str):
        return frozenset({kind})
    if is_array(kind):
        return frozenset(k for k in kind if isinstance(k, str))
    return None


def covers(wide: frozenset[str], narrow: frozenset[str]) -> bool:
    """True when every type in ``narrow`` is allowed by ``wide`` (``number`` allows ``integer``)."""
    return all(t in wide or (t == "integer" and "number" in wide) for t in narrow)


def is_open(additional: Any) -> bool:
    """Absent, ``true`` and ``{}`` all allow any extra property."""
    return additional is None or additional is True or additional == {}


def is_any(node: Any) -> bool:
    """A schema that constrains nothing (``{}``, or only annotations)."""
    return is_object(node) and all(k in ANNOTATIONS for k in node)


def strip(node: Any) -> Any:
    """The node without annotations at any depth (property names are kept, whatever they are)."""
    if is_object(node):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ANNOTATIONS:
                continue
            if key == "properties" and is_object(value):
                out[key] = {p: strip(v) for p, v in value.items()}
            else:
                out[key] = strip(value)
        return out
    if is_array(node):
        return [strip(v) for v in node]
    return node


def literal(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def describe(node: Any) -> str:
    """A short human summary of what a node allows: ``array[ContentBlock]``, ``"ref/resource"``."""
    if not is_object(node):
        return "any" if node is True or node is None else "nothing"
    target = ref_name(node)
    if target is not None:
        return target
    members = union_members(node)
    if members is not None:
        return " | ".join(describe(m) for m in members)
    if is_array(node.get("allOf")):
        return " & ".join(describe(m) for m in node["allOf"])
    if "const" in node:
        return literal(node["const"])
    if is_array(node.get("enum")):
        return " | ".join(literal(v) for v in node["enum"])
    kinds = types_of(node)
    if kinds is None:
        return "object" if node.get("properties") else "any"
    if kinds == frozenset({"array"}):
        return f"array[{describe(node.get('items', {}))}]"
    if kinds == frozenset({"object"}):
        additional = node.get("additionalProperties")
        if not node.get("properties") and is_object(additional) and additional:
            return f"map[{describe(additional)}]"
        return "object"
    text = "|".join(sorted(kinds))
    fmt = node.get("format")
    return f"{text} ({fmt})" if isinstance(fmt, str) else text


def signature(node: Any, stable: frozenset[str]) -> str:
    """A name-independent type tag: refs keep their target only when it exists on both sides."""
    if not is_object(node):
        return "any"
    target = ref_name(node)
    if target is not None:
        return f"ref:{target}" if target in stable else "ref"
    if union_members(node) is not None:
        return "union"
    if "const" in node:
        return f"const:{literal(node['const'])}"
    if "enum" in node:
        return "enum"
    kinds = types_of(node)
    if kinds == frozenset({"array"}):
        return f"array:{signature(node.get('items', {}), stable)}"
    return "|".join(sorted(kinds)) if kinds else "any"


def features(schema: Any, stable: frozenset[str], core: bool = False) -> frozenset[tuple[str, ...]]:
    """The comparable facts of a definition, ignoring prose: its shape for rename matching.

    ``core`` keeps only required properties: the part of a shape that a later revision extending
    it with optional fields still has.
    """
    return frozenset(_features(schema, stable, core))


def _features(schema: Any, stable: frozenset[str], core: bool) -> Iterator[tuple[str, ...]]:
    if not is_object(schema):
        return
    target = ref_name(schema)
    if target is not None:
        yield ("alias", signature(schema, stable))
    for member in union_members(schema) or []:
        yield ("member", signature(member, stable))
    required = schema.get("required", [])
    properties: JSONObject = schema.get("properties") or {}
    for prop, sub in properties.items():
        if core and prop not in required:
            continue
        yield ("property", prop, signature(sub, stable))
        if is_object(sub) and "const" in sub:
            yield ("const", prop, literal(sub["const"]))
    for prop in required:
        yield ("required", prop)
    enum: object = schema.get("enum", [])
    for value in enum if is_array(enum) else ():
        yield ("enum", literal(value))
    kinds = types_of(schema)
    if kinds is not None:
        yield ("type", "|".join(sorted(kinds)))
    if "additionalProperties" in schema and not is_open(schema["additionalProperties"]):
        yield ("additional", signature(schema["additionalProperties"], stable))
