"""Each keyword rule, triggered by a pair of small schemas, judged for the side that sends it.

Every pair is put in two places of the tiny schema: a property of ``ThingRequestParams`` (the
client sends it, the server reads it) and of ``ThingResult`` (the server sends it). A tightening
must hit the sender (the client in the first place, the server in the second), a loosening the
receiver: the direction table of docs/diff-rules.md, checked for every rule. And every keyword a
pinned schema or the 2020-12 dialect uses has a rule.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from diff_schema import Defs
from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]
from mcpbind.codegen.diff import Change, Rule, Severity
from mcpbind.codegen.diff.compare import KNOWN_KEYWORDS, DefinitionComparer
from mcpbind.codegen.diff.taxonomy import KEYWORD_RULES, SPECS, TAGS
from mcpbind.codegen.load import load_revision
from mcpbind.codegen.pins import load_pins

S: dict[str, Any] = {"type": "string"}
N: dict[str, Any] = {"type": "number"}
A: dict[str, Any] = {"type": "array"}
OBJ: dict[str, Any] = {"type": "object"}
TUPLE: dict[str, Any] = {**A, "prefixItems": [S]}
IF: dict[str, Any] = {"if": {"const": 1}}

# rule -> (old, new): the smallest pair of schemas that fires it.
PAIRS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "MULTIPLE_OF_ADDED": (N, {**N, "multipleOf": 2}),
    "MULTIPLE_OF_REMOVED": ({**N, "multipleOf": 2}, N),
    "MULTIPLE_OF_NARROWED": ({**N, "multipleOf": 0.5}, {**N, "multipleOf": 1.5}),
    "MULTIPLE_OF_WIDENED": ({**N, "multipleOf": 4}, {**N, "multipleOf": 2}),
    "MULTIPLE_OF_CHANGED": ({**N, "multipleOf": 2}, {**N, "multipleOf": 3}),
    "UNIQUE_ITEMS_ADDED": (A, {**A, "uniqueItems": True}),
    "UNIQUE_ITEMS_REMOVED": ({**A, "uniqueItems": True}, A),
    "PATTERN_ADDED": (S, {**S, "pattern": "^a"}),
    "PATTERN_REMOVED": ({**S, "pattern": "^a"}, S),
    "PATTERN_CHANGED": ({**S, "pattern": "^a"}, {**S, "pattern": "^b"}),
    "FORMAT_ADDED": (S, {**S, "format": "date"}),
    "FORMAT_REMOVED": ({**S, "format": "date"}, S),
    "FORMAT_NARROWED": ({**S, "format": "uri-reference"}, {**S, "format": "uri"}),
    "FORMAT_WIDENED": ({**S, "format": "uri"}, {**S, "format": "uri-reference"}),
    "FORMAT_CHANGED": ({**S, "format": "date"}, {**S, "format": "uuid"}),
    "PROPERTY_NAMES_ADDED": (OBJ, {**OBJ, "propertyNames": {"pattern": "^a"}}),
    "PROPERTY_NAMES_REMOVED": ({**OBJ, "propertyNames": {"pattern": "^a"}}, OBJ),
    "PATTERN_PROPERTY_ADDED": (OBJ, {**OBJ, "patternProperties": {"^x": S}}),
    "PATTERN_PROPERTY_REMOVED": ({**OBJ, "patternProperties": {"^x": S}}, OBJ),
    "DEPENDENT_REQUIRED_ADDED": (OBJ, {**OBJ, "dependentRequired": {"a": ["b"]}}),
    "DEPENDENT_REQUIRED_REMOVED": ({**OBJ, "dependentRequired": {"a": ["b"]}}, OBJ),
    "DEPENDENT_SCHEMA_ADDED": (OBJ, {**OBJ, "dependentSchemas": {"a": {"required": ["b"]}}}),
    "DEPENDENT_SCHEMA_REMOVED": ({**OBJ, "dependentSchemas": {"a": {"required": ["b"]}}}, OBJ),
    "DEPENDENCY_ADDED": (OBJ, {**OBJ, "dependencies": {"a": ["b"]}}),
    "DEPENDENCY_REMOVED": ({**OBJ, "dependencies": {"a": ["b"]}}, OBJ),
    "UNEVALUATED_PROPERTIES_CLOSED": (OBJ, {**OBJ, "unevaluatedProperties": False}),
    "UNEVALUATED_PROPERTIES_OPENED": ({**OBJ, "unevaluatedProperties": False}, OBJ),
    "PREFIX_ITEMS_ADDED": (A, TUPLE),
    "PREFIX_ITEMS_REMOVED": (TUPLE, A),
    "PREFIX_ITEM_ADDED": (TUPLE, {**A, "prefixItems": [S, S]}),
    "PREFIX_ITEM_REMOVED": ({**A, "prefixItems": [S, S]}, TUPLE),
    "ITEMS_CLOSED": (TUPLE, {**TUPLE, "items": False}),
    "ITEMS_OPENED": ({**TUPLE, "items": False}, TUPLE),
    "CONTAINS_ADDED": (A, {**A, "contains": S}),
    "CONTAINS_REMOVED": ({**A, "contains": S}, A),
    "UNEVALUATED_ITEMS_CLOSED": (A, {**A, "unevaluatedItems": False}),
    "UNEVALUATED_ITEMS_OPENED": ({**A, "unevaluatedItems": False}, A),
    "NOT_ADDED": (S, {**S, "not": {"const": "x"}}),
    "NOT_REMOVED": ({**S, "not": {"const": "x"}}, S),
    "NOT_CHANGED": ({**S, "not": {"const": "x"}}, {**S, "not": {"const": "y"}}),
    "IF_ADDED": (S, {**S, **IF, "then": {"minLength": 1}}),
    "IF_REMOVED": ({**S, **IF, "then": {"minLength": 1}}, S),
    "IF_CHANGED": ({**S, **IF, "then": S}, {**S, "if": {"const": 2}, "then": S}),
    "THEN_ADDED": ({**S, **IF}, {**S, **IF, "then": {"minLength": 1}}),
    "THEN_REMOVED": ({**S, **IF, "then": {"minLength": 1}}, {**S, **IF}),
    "ELSE_ADDED": ({**S, **IF}, {**S, **IF, "else": {"minLength": 1}}),
    "ELSE_REMOVED": ({**S, **IF, "else": {"minLength": 1}}, {**S, **IF}),
    "ALL_OF_MEMBER_ADDED": ({"allOf": [S]}, {"allOf": [S, {"minLength": 1}]}),
    "ALL_OF_MEMBER_REMOVED": ({"allOf": [S, {"minLength": 1}]}, {"allOf": [S]}),
    "UNION_BECAME_EXCLUSIVE": ({"anyOf": [S, N]}, {"oneOf": [S, N]}),
    "UNION_BECAME_INCLUSIVE": ({"oneOf": [S, N]}, {"anyOf": [S, N]}),
    "DYNAMIC_REF_ADDED": (S, {**S, "$dynamicRef": "#meta"}),
    "DYNAMIC_REF_REMOVED": ({**S, "$dynamicRef": "#meta"}, S),
    "DYNAMIC_REF_CHANGED": ({**S, "$dynamicRef": "#meta"}, {**S, "$dynamicRef": "#other"}),
    "RECURSIVE_REF_CHANGED": (S, {**S, "$recursiveRef": "#"}),
    "RECURSIVE_ANCHOR_CHANGED": (S, {**S, "$recursiveAnchor": True}),
    "VOCABULARY_CHANGED": (S, {**S, "$vocabulary": {"urn:x": True}}),
    "EMBEDDED_DIALECT_CHANGED": (
        {**S, "$schema": "http://json-schema.org/draft-07/schema#"},
        {**S, "$schema": "https://json-schema.org/draft/2020-12/schema"},
    ),
    "CONST_ADDED": (S, {**S, "const": "a"}),
    "CONST_REMOVED": ({**S, "const": "a"}, S),
    "ENUM_ADDED": (S, {**S, "enum": ["a", "b"]}),
    "ENUM_REMOVED": ({**S, "enum": ["a", "b"]}, S),
    "TYPE_ADDED": ({"minLength": 1}, {"minLength": 1, **S}),
    "TYPE_REMOVED": ({"minLength": 1, **S}, {"minLength": 1}),
    "ITEMS_ADDED": (A, {**A, "items": S}),
    "ITEMS_REMOVED": ({**A, "items": S}, A),
    "ADDITIONAL_PROPERTIES_SCHEMA_ADDED": (
        {**OBJ, "properties": {"a": S}},
        {**OBJ, "properties": {"a": S}, "additionalProperties": S},
    ),
    "ADDITIONAL_PROPERTIES_SCHEMA_REMOVED": (
        {**OBJ, "properties": {"a": S}, "additionalProperties": S},
        {**OBJ, "properties": {"a": S}},
    ),
    "NULLABLE_ADDED": (S, {"type": ["string", "null"]}),
    "NULLABLE_REMOVED": ({"type": ["string", "null"]}, S),
    "DEFAULT_ADDED": (S, {**S, "default": "a"}),
    "DEFAULT_REMOVED": ({**S, "default": "a"}, S),
    "DEFAULT_CHANGED": ({**S, "default": "a"}, {**S, "default": "b"}),
    "TITLE_CHANGED": ({**S, "title": "A"}, {**S, "title": "B"}),
    "EXAMPLES_CHANGED": ({**S, "examples": ["a"]}, {**S, "examples": ["b"]}),
    "COMMENT_CHANGED": ({**S, "$comment": "a"}, {**S, "$comment": "b"}),
    "UNKNOWN_KEYWORD_ADDED": (S, {**S, "x-vendor": 1}),
    "UNKNOWN_KEYWORD_REMOVED": ({**S, "x-vendor": 1}, S),
    "UNKNOWN_KEYWORD_CHANGED": ({**S, "x-vendor": 1}, {**S, "x-vendor": 2}),
}
for _keyword in (
    "minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains",
    "maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains",
):  # fmt: skip
    _stem = "".join(f"_{c}" if c.isupper() else c.upper() for c in _keyword)
    PAIRS[f"{_stem}_ADDED"] = (N, {**N, _keyword: 1})
    PAIRS[f"{_stem}_REMOVED"] = ({**N, _keyword: 1}, N)
    PAIRS[f"{_stem}_INCREASED"] = ({**N, _keyword: 1}, {**N, _keyword: 2})
    PAIRS[f"{_stem}_DECREASED"] = ({**N, _keyword: 2}, {**N, _keyword: 1})
for _keyword, _stem, _value in (
    ("contentEncoding", "CONTENT_ENCODING", "base64"),
    ("contentMediaType", "CONTENT_MEDIA_TYPE", "application/json"),
    ("contentSchema", "CONTENT_SCHEMA", OBJ),
    ("$id", "SCHEMA_ID", "urn:a"),
    ("$anchor", "ANCHOR", "a"),
    ("$dynamicAnchor", "DYNAMIC_ANCHOR", "a"),
    ("readOnly", "READ_ONLY", True),
    ("writeOnly", "WRITE_ONLY", True),
    ("deprecated", "DEPRECATED_FLAG", True),
):
    PAIRS[f"{_stem}_ADDED"] = (S, {**S, _keyword: _value})
    PAIRS[f"{_stem}_REMOVED"] = ({**S, _keyword: _value}, S)
    if isinstance(_value, str) or _value is OBJ:
        _other = A if _value is OBJ else f"{_value}2"
        PAIRS[f"{_stem}_CHANGED"] = ({**S, _keyword: _value}, {**S, _keyword: _other})

# Where the pair is put, who sends that value and who reads it.
PLACES = {
    "params": ("ThingRequestParams", "client", "server"),
    "result": ("ThingResult", "server", "client"),
}
B, C = Severity.BREAKING, Severity.COMPATIBLE
# The IR hoists an inline allOf into a definition and merges it (shapes.effective): these rules
# fire where a schema is compared as it stands (a tool's inputSchema in a surface diff).
STANDALONE = frozenset({"ALL_OF_MEMBER_ADDED", "ALL_OF_MEMBER_REMOVED"})


def _in(probe: dict[str, Any]) -> dict[str, Any]:
    return {**OBJ, "properties": {"probe": probe}}


def put(definition: str, schema: dict[str, Any]) -> Callable[[Defs], None]:
    def mutate(defs: Defs) -> None:
        defs[definition]["properties"]["probe"] = json.loads(json.dumps(schema))

    return mutate


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("rule", sorted(PAIRS))
def test_keyword_rule_fires_and_hits_the_side_its_direction_names(
    rule: str, place: str, diff_of: Callable[..., list[Change]]
) -> None:
    definition, sender, receiver = PLACES[place]
    old, new = PAIRS[rule]
    if rule in STANDALONE:
        [found] = DefinitionComparer({}, {}, {}).schemas(_in(old), _in(new), definition)
        assert (found.rule.value, found.path) == (rule, f"{definition}.probe")
        assert found.impact == SPECS[found.rule].impact
        return
    changes = diff_of(put(definition, old), put(definition, new), include_descriptions=True)
    assert [c.rule.value for c in changes] == [rule], changes
    [change] = changes
    assert change.path.startswith(f"{definition}.probe"), change
    spec = SPECS[Rule(rule)]
    assert change.severity is spec.impact.severity and change.bindings is spec.impact.bindings
    expected = {
        "senders": (sender,),
        "receivers": (receiver,),
        "both": tuple(sorted((sender, receiver))),
        "none": (),
    }[TAGS[change.rule].direction.value]
    assert change.affects == expected, change
    assert (change.old, change.new) != (None, None) or "null" in change.message


def test_every_keyword_rule_has_a_pair() -> None:
    assert set(PAIRS) == {rule.value for rule in SPECS}


def test_a_maximum_lowered_breaks_whoever_sends_the_field(
    diff_of: Callable[..., list[Change]],
) -> None:
    """The table in docs/diff-rules.md, one row read the other way: a field the server sends."""
    old, new = {**N, "maximum": 10}, {**N, "maximum": 5}
    [lowered] = diff_of(put("ThingResult", old), put("ThingResult", new))
    assert lowered.rule is Rule.MAXIMUM_DECREASED and lowered.severity is B
    assert lowered.affects == ("server",) and "maximum 5 (was 10)" in lowered.message
    assert (lowered.old, lowered.new) == (10, 5)
    [raised] = diff_of(put("ThingResult", new), put("ThingResult", old))
    assert raised.rule is Rule.MAXIMUM_INCREASED and raised.affects == ("client",)


def test_a_null_union_member_is_nullability(diff_of: Callable[..., list[Change]]) -> None:
    old, new = {"anyOf": [S, N]}, {"anyOf": [S, N, {"type": "null"}]}
    [change] = diff_of(put("ThingResult", old), put("ThingResult", new))
    assert change.rule is Rule.NULLABLE_ADDED and change.bindings
    [change] = diff_of(put("ThingResult", {**S, "enum": ["a"]}),
                       put("ThingResult", {**S, "enum": ["a", None]}))  # fmt: skip
    assert change.rule is Rule.NULLABLE_ADDED


def test_items_false_closes_an_array_without_a_tuple(diff_of: Callable[..., list[Change]]) -> None:
    old, new = {**A, "items": S}, {**A, "items": False}
    [change] = diff_of(put("ThingResult", old), put("ThingResult", new))
    assert change.rule is Rule.ITEMS_CLOSED and change.affects == ("server",)


def test_documentation_rules_are_hidden_unless_asked(diff_of: Callable[..., list[Change]]) -> None:
    old, new = PAIRS["TITLE_CHANGED"]
    assert diff_of(put("ThingResult", old), put("ThingResult", new)) == []


def _keywords(node: Any, found: set[str]) -> None:
    """Every keyword used in a schema document (property names are not keywords)."""
    if isinstance(node, list):
        for item in node:
            _keywords(item, found)
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        found.add(key)
        if key in ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"):
            for sub in value.values() if isinstance(value, dict) else ():
                _keywords(sub, found)
        elif key not in ("enum", "const", "default", "examples", "required", "$vocabulary"):
            _keywords(value, found)


def test_every_keyword_of_every_pinned_schema_has_a_rule() -> None:
    used: set[str] = set()
    for revision in load_pins():
        _keywords(load_revision(revision).document, used)
    assert used - set(KEYWORD_RULES) == set(), "a pinned schema uses a keyword without a rule"
    assert {"minimum", "maxItems", "format", "enum", "additionalProperties"} <= used


def test_every_keyword_of_the_2020_12_dialect_has_a_rule() -> None:
    dialect = {
        keyword
        for uri in REGISTRY
        if "draft/2020-12" in uri
        for keyword in REGISTRY.contents(uri).get("properties", {})
    }
    assert len(dialect) > 50
    assert dialect - set(KEYWORD_RULES) == set()


def test_the_comparison_reads_exactly_the_keywords_that_have_rules() -> None:
    annotations_without_rules = {"markdownDescription"}
    assert set(KEYWORD_RULES) - KNOWN_KEYWORDS == set()
    assert KNOWN_KEYWORDS - set(KEYWORD_RULES) <= annotations_without_rules


def test_pinned_schemas_are_under_the_path_the_test_reads(tmp_path: Path) -> None:
    assert load_revision("2026-07-28").document["$defs"]


# Rules whose mirror is judged on another ground: a default removed, a readOnly or writeOnly
# added changes what an omitted or ignored value means, and the reverse changes nothing.
ONE_SIDED = frozenset({"DEFAULT_REMOVED", "READ_ONLY_ADDED", "WRITE_ONLY_ADDED"})
_SWAPS = (
    ("_ADDED", "_REMOVED"),
    ("_INCREASED", "_DECREASED"),
    ("_WIDENED", "_NARROWED"),
    ("_OPENED", "_CLOSED"),
    ("_EXCLUSIVE", "_INCLUSIVE"),
)


def _mirror(rule: str) -> str:
    for a, b in _SWAPS:
        for x, y in ((a, b), (b, a)):
            if rule.endswith(x):
                return rule.removesuffix(x) + y
    return rule  # a change both ways, or one without a counterpart


@pytest.mark.parametrize("rule", sorted(set(PAIRS) - STANDALONE))
def test_swapping_the_pair_gives_the_mirror_rule(
    rule: str, diff_of: Callable[..., list[Change]]
) -> None:
    old, new = PAIRS[rule]
    back = diff_of(put("ThingResult", new), put("ThingResult", old), include_descriptions=True)
    mirror = _mirror(rule)
    expected = mirror if mirror in PAIRS else rule
    if rule in ("RECURSIVE_REF_CHANGED", "RECURSIVE_ANCHOR_CHANGED", "VOCABULARY_CHANGED"):
        expected = rule  # one rule for either way
    assert [c.rule.value for c in back] == [expected]
    forward = TAGS[Rule(rule)].direction.value
    backward = TAGS[back[0].rule].direction.value
    swapped = {"senders": "receivers", "receivers": "senders"}
    if mirror != rule and expected == mirror and forward in swapped and rule not in ONE_SIDED:
        assert backward == swapped[forward], (rule, forward, backward)


def test_types_that_accept_the_same_values_are_no_change(
    diff_of: Callable[..., list[Change]],
) -> None:
    same = {"type": ["number", "integer"]}
    assert diff_of(put("ThingResult", N), put("ThingResult", same)) == []
