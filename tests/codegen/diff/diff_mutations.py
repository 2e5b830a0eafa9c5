"""Mutations of the tiny schema in ``diff_schema``: each builds a function that changes one
thing in a copy of its definitions (a union member, a property, ``required``, closing an
object), for the rule tests to diff against the base.
"""

from __future__ import annotations

from typing import Any

from diff_schema import Defs, Mutation, ref

__all__ = [
    "AUDIO",
    "EXTRA",
    "add_member",
    "both",
    "closed",
    "del_prop",
    "drop_member",
    "props",
    "require",
    "set_prop",
    "unrequire",
]

#: A definition no message carries, and a content member the base's ``Content`` lacks.
EXTRA = {"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "integer"}}}
AUDIO = {
    "type": "object",
    "properties": {"type": {"const": "audio", "type": "string"}, "data": {"type": "string"}},
    "required": ["type", "data"],
}


def props(defs: Defs, name: str) -> dict[str, Any]:
    result: dict[str, Any] = defs[name]["properties"]
    return result


def add_member(union: str, name: str, schema: Defs) -> Mutation:
    def mutate(defs: Defs) -> None:
        defs[name] = schema
        defs[union]["anyOf"].append(ref(name))

    return mutate


def drop_member(union: str, name: str) -> Mutation:
    def mutate(defs: Defs) -> None:
        defs[union]["anyOf"].remove(ref(name))

    return mutate


def both(*mutations: Mutation) -> Mutation:
    def mutate(defs: Defs) -> None:
        for m in mutations:
            m(defs)

    return mutate


def set_prop(definition: str, prop: str, schema: Any) -> Mutation:
    def mutate(defs: Defs) -> None:
        props(defs, definition)[prop] = schema

    return mutate


def del_prop(definition: str, prop: str) -> Mutation:
    def mutate(defs: Defs) -> None:
        del props(defs, definition)[prop]
        if prop in defs[definition].get("required", []):
            defs[definition]["required"].remove(prop)

    return mutate


def require(definition: str, prop: str) -> Mutation:
    def mutate(defs: Defs) -> None:
        defs[definition]["required"].append(prop)

    return mutate


def unrequire(definition: str, prop: str) -> Mutation:
    def mutate(defs: Defs) -> None:
        defs[definition]["required"].remove(prop)

    return mutate


def closed(definition: str) -> Mutation:
    def mutate(defs: Defs) -> None:
        defs[definition]["additionalProperties"] = False

    return mutate
