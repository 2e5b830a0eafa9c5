"""The emit step that marks optional fields whose schema refuses ``null`` (``ABSENT_IF_NONE``)."""

from __future__ import annotations

from mcpbind.codegen.emit.absent import absent_if_none_fields, admits_null, mark_absent_if_none

DEFS = {
    "Meta": {"type": "object"},
    "Value": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    "Thing": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "title": {"type": "string"},
            "_meta": {"$ref": "#/$defs/Meta"},
            "data": {},
            "value": {"$ref": "#/$defs/Value"},
            "count": {"type": ["integer", "null"]},
        },
        "required": ["name"],
    },
    "Child": {
        "allOf": [
            {"$ref": "#/$defs/Thing"},
            {"type": "object", "properties": {"extra": {"type": "boolean"}}},
        ]
    },
}

SOURCE = """from mcpbind.generated.support import MCPModel
from pydantic import Field


class Thing(MCPModel):
    name: str
    title: str | None = None
    meta: Annotated[Meta | None, Field(alias="_meta")] = None
    data: Any | None = None
    value: Value | None = None
    count: int | None = None


class Child(Thing):
    extra: bool | None = None
"""


def test_null_is_read_from_the_schema() -> None:
    assert admits_null({}, DEFS) and admits_null({"$ref": "#/$defs/Value"}, DEFS)
    assert admits_null({"type": ["integer", "null"]}, DEFS)
    assert not admits_null({"type": "string"}, DEFS)
    assert not admits_null({"$ref": "#/$defs/Meta"}, DEFS)
    assert not admits_null({"const": "x"}, DEFS)
    assert absent_if_none_fields(DEFS) == {
        "Thing": frozenset({"title", "_meta"}),
        "Child": frozenset({"extra"}),
    }


def test_fields_are_marked_in_the_generated_source() -> None:
    marked, count = mark_absent_if_none(SOURCE, absent_if_none_fields(DEFS))
    assert count == 3
    assert "title: Annotated[str | None, ABSENT_IF_NONE] = None" in marked
    assert 'meta: Annotated[Meta | None, Field(alias="_meta"), ABSENT_IF_NONE] = None' in marked
    assert "extra: Annotated[bool | None, ABSENT_IF_NONE] = None" in marked
    # Nullable fields are left as they are: None there is JSON null.
    assert "data: Any | None = None" in marked and "count: int | None = None" in marked
    assert "from mcpbind.generated.support import ABSENT_IF_NONE, MCPModel" in marked
    assert "from typing import Annotated\n" in marked


def test_nothing_to_mark_leaves_the_source_alone() -> None:
    assert mark_absent_if_none(SOURCE, {}) == (SOURCE, 0)
