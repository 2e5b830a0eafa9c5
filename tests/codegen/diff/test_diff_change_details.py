"""What a change says beyond its rule: descriptions only when asked, the difference a bigger
referenced shape makes, an object become a union keeping its old shape, and
``additionalProperties`` values in words (on the tiny schema of ``diff_schema``).
"""

from __future__ import annotations

from collections.abc import Callable

from diff_mutations import closed, props, set_prop
from diff_schema import Defs, ref
from mcpbind.codegen.diff import Change, Rule, Severity

B = Severity.BREAKING
P = Severity.POTENTIALLY_BREAKING
C = Severity.COMPATIBLE


def test_description_changes_are_hidden_unless_asked(
    diff_of: Callable[..., list[Change]],
) -> None:
    new = set_prop("ThingRequestParams", "name", {"type": "string", "description": "Other."})
    assert diff_of(None, new) == []
    [change] = diff_of(None, new, include_descriptions=True)
    assert change.rule is Rule.DESCRIPTION_CHANGED and change.severity is C
    assert (change.path, change.old, change.new) == (
        "ThingRequestParams.name",
        "Which thing.",
        "Other.",
    )
    assert not change.bindings


def test_reference_to_a_bigger_shape_reports_the_difference(
    diff_of: Callable[..., list[Change]],
) -> None:
    def paginated(defs: Defs) -> None:
        defs["PaginatedParams"] = {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "cursor": {"type": "string"},
            },
            "required": ["name"],
        }
        props(defs, "ThingRequest")["params"] = ref("PaginatedParams")

    [change] = [c for c in diff_of(None, paginated) if c.rule is not Rule.DEFINITION_ADDED]
    assert change.rule is Rule.REFERENCE_CHANGED and change.severity is C and change.bindings
    assert (change.old, change.new) == ("ThingRequestParams", "PaginatedParams")
    assert "property 'cursor' added (optional" in change.message

    def stricter(defs: Defs) -> None:
        paginated(defs)
        defs["PaginatedParams"]["required"].append("cursor")

    [change] = [c for c in diff_of(None, stricter) if c.rule is not Rule.DEFINITION_ADDED]
    assert change.rule is Rule.TYPE_NARROWED and change.severity is B
    assert change.affects == ("client",)


def test_object_becoming_a_union_keeps_the_old_shape_as_a_member(
    diff_of: Callable[..., list[Change]],
) -> None:
    def split(defs: Defs) -> None:
        defs["ThingByName"] = defs.pop("ThingRequestParams")
        defs["ThingById"] = {
            "type": "object",
            "properties": {"id": {"type": "integer"}},
            "required": ["id"],
        }
        defs["ThingRequestParams"] = {"anyOf": [ref("ThingByName"), ref("ThingById")]}

    [change] = [c for c in diff_of(None, split) if c.rule is not Rule.DEFINITION_ADDED]
    assert change.rule is Rule.TYPE_WIDENED and change.path == "ThingRequestParams"
    assert change.severity is P and change.affects == ("server",)
    assert "ThingById" in change.message


def test_additional_properties_values_read_as_words(diff_of: Callable[..., list[Change]]) -> None:
    [opened] = diff_of(closed("ThingRequestParams"), None)
    assert (opened.old, opened.new) == (False, "any")
    [closing] = diff_of(None, closed("ThingRequestParams"))
    assert (closing.old, closing.new) == ("any", False)
