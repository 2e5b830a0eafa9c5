"""Give every inline object of a schema a definition of its own, named by its place.

datamodel-code-generator names inline objects ``Params``, ``Params1`` ... ``Params28``: meaningless,
and different in every revision. Hoisting first makes the name a function of the place alone, so
2024-11-05's inline ``CallToolRequest.params`` is ``CallToolRequestParams`` just as in the revisions
that name it themselves. References are rewritten to ``#/$defs/<name>`` on the way.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import CodegenError
from ..jsonvalues import is_array, is_object
from .model import JSONSchema
from .refs import DEFS_PREFIX, const_of, ref_name

_COMPOSITIONS = ("anyOf", "oneOf")


def pascal(word: str) -> str:
    """``_meta`` -> ``Meta``, ``inputSchema`` -> ``InputSchema``, ``io.x/clientInfo`` -> ``IoXClientInfo``."""
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", word) if p]
    return "".join(p[:1].upper() + p[1:] for p in parts) or "Value"


def is_class_like(node: Any) -> bool:
    """An inline schema that becomes a model class of its own when emitted."""
    if not is_object(node) or "$ref" in node:
        return False
    props = node.get("properties")
    return (is_object(props) and bool(props)) or "allOf" in node


class _Hoister:
    def __init__(self, defs: dict[str, Any]) -> None:
        self.source = defs
        self.out: dict[str, tuple[JSONSchema, str | None]] = {}

    def run(self) -> dict[str, tuple[JSONSchema, str | None]]:
        for name in sorted(self.source):
            self.out[name] = (
                self.visit(self.source[name], name, f"#/$defs/{name}", top=True),
                None,
            )
        return dict(sorted(self.out.items()))

    def fresh_name(self, base: str, pointer: str) -> str:
        for candidate in (base, base + "Inline"):
            if candidate not in self.source and candidate not in self.out:
                return candidate
        raise CodegenError(f"cannot name the inline object at {pointer}: {base!r} is taken")

    def visit(self, node: Any, place: str, pointer: str, top: bool = False) -> Any:
        if is_array(node):
            return [self.visit(v, place, f"{pointer}/{i}") for i, v in enumerate(node)]
        if not is_object(node):
            return node
        target = ref_name(node)
        if target is not None:
            return {**node, "$ref": DEFS_PREFIX + target}
        if not top and is_class_like(node):
            name = self.fresh_name(place, pointer)
            self.out[name] = ({}, pointer)  # reserve the name before descending
            self.out[name] = (self.visit(node, name, pointer, top=True), pointer)
            ref: JSONSchema = {"$ref": DEFS_PREFIX + name}
            if "description" in node:
                ref["description"] = node["description"]
            return ref
        result: JSONSchema = {}
        for key, value in node.items():
            sub = f"{pointer}/{key}"
            if key == "properties" and is_object(value):
                result[key] = {
                    prop: self.visit(schema, place + pascal(prop), f"{sub}/{prop}")
                    for prop, schema in value.items()
                }
            elif key == "items":
                result[key] = self.visit(value, place + "Item", sub)
            elif key == "additionalProperties":
                result[key] = self.visit(value, place + "Value", sub)
            elif key in _COMPOSITIONS and is_array(value):
                result[key] = [
                    self.visit(member, place + self.member_suffix(member, i), f"{sub}/{i}")
                    for i, member in enumerate(value)
                ]
            elif key == "allOf" and is_array(value):
                # allOf members merge into the model being defined here: not classes of their own.
                result[key] = [
                    self.visit(m, place, f"{sub}/{i}", top=True) for i, m in enumerate(value)
                ]
            else:
                result[key] = value
        return result

    @staticmethod
    def member_suffix(member: Any, index: int) -> str:
        for prop in ("type", "method", "mode", "kind"):
            value = const_of(member, prop)
            if isinstance(value, str):
                return pascal(value)
        return f"Option{index}"


def hoist_definitions(defs: dict[str, Any]) -> dict[str, tuple[JSONSchema, str | None]]:
    """Every definition (schema's own and hoisted) -> (normalised schema, origin pointer or None)."""
    return _Hoister(defs).run()
