"""Turn the IR's definitions into the JSON Schema document handed to datamodel-code-generator.

These are emit decisions, not facts about the protocol, so they live here and not in the IR:
formats that pydantic would coerce (``uri`` gains a trailing slash, ``byte`` is decoded) are dropped
so the value stays the string that was sent; every JSON scalar type is a strict Python type
(``x-python-type``): no ``"true"`` for a boolean, no ``true`` for an integer, an ``integer`` is any
JSON number without a fraction (``1e20`` included) and never becomes a float, a ``number`` keeps an
integer an integer, so ``50`` is not re-serialised as ``50.0``; unions whose members all carry a
distinct constant ``method``, ``type`` or ``resultType`` get a discriminator, so the union is
decided by it (never by trying members in turn) and a bad message yields one precise error;
``_meta`` is never required: where a revision requires it (the per-request protocol fields of the
stateless era), the runtime's lifecycle writes it into every request and the receiving lifecycle
checks it before params are validated, so callers build params without it.
"""

from __future__ import annotations

from typing import Any

from ..ir import JSONSchema, RevisionIR
from ..ir.refs import DEFS_PREFIX, const_of, ref_name
from ..jsonvalues import is_array, is_object

COERCING_FORMATS = frozenset({"uri", "uri-reference", "uri-template", "byte", "binary"})
DISCRIMINATOR_PROPERTIES = ("method", "type", "resultType")
META = "_meta"
SUPPORT = "mcpbind.generated.support"
# The strict Python type of each JSON scalar type (``None`` for ``null``).
SCALAR_TYPES: dict[str, str | None] = {
    "string": "pydantic.StrictStr",
    "boolean": "pydantic.StrictBool",
    "integer": f"{SUPPORT}.JSONInteger",
    "number": f"{SUPPORT}.JSONNumber",
    "null": None,
}
PYTHON_TYPE = "x-python-type"


def _strict_scalars(node: JSONSchema) -> JSONSchema:
    """``node`` with its scalar ``type`` spelled as a strict Python type.

    A list of types becomes an ``anyOf`` of one node per type (the generator honours a Python
    type on a single type only); ``number`` with ``integer`` is ``number``, which admits both.
    Constants and enums keep their ``Literal``.
    """
    kind = node.get("type")
    if kind is None or "const" in node or "enum" in node:
        return node
    kinds = kind if is_array(kind) else [kind]
    if not all(k in SCALAR_TYPES for k in kinds):
        return node
    if "number" in kinds:
        kinds = [k for k in kinds if k != "integer"]
    if len(kinds) == 1:
        return {**node, **_scalar(kinds[0])}
    rest = {key: value for key, value in node.items() if key != "type"}
    return {**rest, "anyOf": [_scalar(k) for k in kinds]}


def _scalar(kind: str) -> JSONSchema:
    python = SCALAR_TYPES[kind]
    return {"type": kind} if python is None else {"type": kind, PYTHON_TYPE: python}


def _meta_not_required(node: JSONSchema) -> None:
    required = node.get("required")
    if is_array(required) and META in required:
        rest = [name for name in required if name != META]
        if rest:
            node["required"] = rest
        else:
            del node["required"]


class _Preparer:
    def __init__(self, ir: RevisionIR) -> None:
        self.ir = ir
        self.class_names = {name: d.class_name for name, d in ir.definitions.items()}

    def document(self) -> JSONSchema:
        defs = {
            self.class_names[name]: self.visit(d.schema) for name, d in self.ir.definitions.items()
        }
        return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}

    def visit(self, node: Any) -> Any:
        if is_array(node):
            return [self.visit(v) for v in node]
        if not is_object(node):
            return node
        target = ref_name(node)
        if target is not None:
            return {**node, "$ref": DEFS_PREFIX + self.class_names[target]}
        out: JSONSchema = {}
        for key, value in node.items():
            if key == "format" and value in COERCING_FORMATS:
                continue
            if key == "properties" and is_object(value):
                out[key] = {prop: self.visit(schema) for prop, schema in value.items()}
            elif key in ("const", "enum", "default", "examples", "required"):
                out[key] = value
            else:
                out[key] = self.visit(value)
        out = _strict_scalars(out)
        _meta_not_required(out)
        discriminator = self.discriminator(out)
        if discriminator is not None:
            out["discriminator"] = {"propertyName": discriminator}
        return out

    def discriminator(self, node: JSONSchema) -> str | None:
        members = node.get("anyOf", node.get("oneOf"))
        if not is_array(members) or len(members) < 2:
            return None
        targets = [ref_name(m) for m in members]
        if any(t is None for t in targets):
            return None
        by_class = {d.class_name: d for d in self.ir.definitions.values()}
        for prop in DISCRIMINATOR_PROPERTIES:
            values: list[str] = []
            for target in targets:
                assert target is not None
                definition = by_class.get(target)
                schema = definition.schema if definition else None
                value = const_of(schema, prop)
                if not isinstance(value, str) or prop not in (schema or {}).get("required", []):
                    break
                values.append(value)
            else:
                if len(set(values)) == len(values):
                    return prop
        return None


def prepare_document(ir: RevisionIR) -> JSONSchema:
    """The datamodel-code-generator input for ``ir``: class names as definition names."""
    return _Preparer(ir).document()
