"""Every rule with its tags, its documentation and its severity; named categories; selectors.

The core rules (methods, capabilities, definitions, properties, unions, the server surface) are
tagged here by hand; the keyword families (``constraints``, ``containers``, ``applicators``,
``values``) carry their tags in their ``Spec``s. A *selector* names a set of rules, wherever a
user names rules (``--only``, the ignore file, the config file's severity table):

* a rule ID, ``MAXIMUM_DECREASED``, or a glob over IDs, ``MAXIMUM_*``;
* a tag, ``direction:senders``, ``area:constraint``, ``kind:values``, ``action:increased``;
* a category (``CATEGORIES``): ``wire``, ``bindings``, ``docs``...; ``*`` is every rule.

Categories and tags are properties of rules, but for one: where a change comes from is not its
rule's. ``extension`` (and its tag form ``area:extension``) selects the changes an extension
schema layered over a revision brought (``origins.py``), whatever their rule; ``extension:NAME``
(or ``NAME@VERSION``) those of one pinned extension. So a selector resolves to a ``Selection``:
rules, and for these, the origin a change must have.

An unknown selector is an error naming the closest known one.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from ..errors import CodegenError
from ..pins import get_extension_pin
from . import applicators, constraints, containers, rules, values
from .rules import SURFACE_RULES, Rule, fixed_impact
from .tags import Action, Area, Direction, Kind, Spec, Tags, direction_of

__all__ = [
    "CATEGORIES",
    "KEYWORD_RULES",
    "RULE_DOCS",
    "SPECS",
    "TAGS",
    "Category",
    "Selection",
    "SelectorError",
    "can_break_bindings",
    "categories_of",
    "resolve",
    "rule_listing",
    "rule_severity",
    "select",
    "specificity",
]

_A, _K, _X = Area, Kind, Action
_ANY = Direction.BOTH
# Core rules: area, kind, action, and whom they can break when a circumstance decides it (the
# others' direction is read from their fixed impact in ``rules``).
_CORE: dict[Rule, tuple[Area, Kind, Action, Direction | None]] = {
    Rule.METHOD_ADDED: (_A.METHOD, _K.EXISTENCE, _X.ADDED, Direction.RECEIVERS),
    Rule.METHOD_REMOVED: (_A.METHOD, _K.EXISTENCE, _X.REMOVED, None),
    Rule.METHOD_DIRECTION_ADDED: (_A.METHOD, _K.EXISTENCE, _X.ADDED, Direction.RECEIVERS),
    Rule.METHOD_DIRECTION_REMOVED: (_A.METHOD, _K.EXISTENCE, _X.REMOVED, None),
    Rule.METHOD_RESULT_CHANGED: (_A.METHOD, _K.TYPE, _X.CHANGED, _ANY),
    Rule.NOTIFICATION_ADDED: (_A.METHOD, _K.EXISTENCE, _X.ADDED, None),
    Rule.NOTIFICATION_REMOVED: (_A.METHOD, _K.EXISTENCE, _X.REMOVED, None),
    Rule.NOTIFICATION_DIRECTION_ADDED: (_A.METHOD, _K.EXISTENCE, _X.ADDED, None),
    Rule.NOTIFICATION_DIRECTION_REMOVED: (_A.METHOD, _K.EXISTENCE, _X.REMOVED, None),
    Rule.CAPABILITY_ADDED: (_A.CAPABILITY, _K.EXISTENCE, _X.ADDED, None),
    Rule.CAPABILITY_REMOVED: (_A.CAPABILITY, _K.EXISTENCE, _X.REMOVED, None),
    Rule.DEFINITION_ADDED: (_A.DEFINITION, _K.EXISTENCE, _X.ADDED, None),
    Rule.DEFINITION_REMOVED: (_A.DEFINITION, _K.EXISTENCE, _X.REMOVED, None),
    Rule.DEFINITION_RENAMED: (_A.DEFINITION, _K.EXISTENCE, _X.RENAMED, None),
    Rule.PROPERTY_ADDED: (_A.PROPERTY, _K.EXISTENCE, _X.ADDED, _ANY),
    Rule.PROPERTY_REMOVED: (_A.PROPERTY, _K.EXISTENCE, _X.REMOVED, _ANY),
    Rule.PROPERTY_REQUIRED_ADDED: (_A.PROPERTY, _K.REQUIREDNESS, _X.ADDED, None),
    Rule.PROPERTY_REQUIRED_REMOVED: (_A.PROPERTY, _K.REQUIREDNESS, _X.REMOVED, None),
    Rule.TYPE_WIDENED: (_A.PROPERTY, _K.TYPE, _X.WIDENED, None),
    Rule.TYPE_NARROWED: (_A.PROPERTY, _K.TYPE, _X.NARROWED, None),
    Rule.TYPE_CHANGED: (_A.PROPERTY, _K.TYPE, _X.CHANGED, None),
    Rule.REFERENCE_CHANGED: (_A.DEFINITION, _K.TYPE, _X.CHANGED, _ANY),
    Rule.ENUM_VALUE_ADDED: (_A.PROPERTY, _K.VALUES, _X.ADDED, None),
    Rule.ENUM_VALUE_REMOVED: (_A.PROPERTY, _K.VALUES, _X.REMOVED, None),
    Rule.CONST_CHANGED: (_A.PROPERTY, _K.VALUES, _X.CHANGED, None),
    Rule.UNION_MEMBER_ADDED: (_A.UNION, _K.STRUCTURE, _X.ADDED, None),
    Rule.UNION_MEMBER_REMOVED: (_A.UNION, _K.STRUCTURE, _X.REMOVED, None),
    Rule.ADDITIONAL_PROPERTIES_OPENED: (_A.PROPERTY, _K.STRUCTURE, _X.OPENED, None),
    Rule.ADDITIONAL_PROPERTIES_CLOSED: (_A.PROPERTY, _K.STRUCTURE, _X.CLOSED, None),
    Rule.DESCRIPTION_CHANGED: (_A.DEFINITION, _K.DOCUMENTATION, _X.CHANGED, None),
    Rule.METHOD_BECAME_INPUT_REQUEST: (_A.METHOD, _K.STRUCTURE, _X.CHANGED, None),
    Rule.METHOD_BECAME_REQUEST: (_A.METHOD, _K.STRUCTURE, _X.CHANGED, None),
    Rule.SERVER_REQUEST_REMOVED: (_A.METHOD, _K.EXISTENCE, _X.REMOVED, None),
    Rule.METHOD_CAPABILITY_CHANGED: (_A.CAPABILITY, _K.STRUCTURE, _X.CHANGED, None),
    Rule.DEPRECATED: (_A.DEFINITION, _K.LIFECYCLE, _X.ADDED, None),
    Rule.UNDEPRECATED: (_A.DEFINITION, _K.LIFECYCLE, _X.REMOVED, None),
    Rule.DIALECT_CHANGED: (_A.DIALECT, _K.STRUCTURE, _X.CHANGED, None),
    Rule.TOOL_ADDED: (_A.SURFACE, _K.EXISTENCE, _X.ADDED, None),
    Rule.TOOL_REMOVED: (_A.SURFACE, _K.EXISTENCE, _X.REMOVED, None),
    Rule.TOOL_ARGUMENT_ADDED: (_A.SURFACE, _K.EXISTENCE, _X.ADDED, Direction.SENDERS),
    Rule.TOOL_ARGUMENT_REMOVED: (_A.SURFACE, _K.EXISTENCE, _X.REMOVED, Direction.SENDERS),
    Rule.TOOL_ARGUMENT_REQUIRED: (_A.SURFACE, _K.REQUIREDNESS, _X.ADDED, None),
    Rule.TOOL_ARGUMENT_OPTIONAL: (_A.SURFACE, _K.REQUIREDNESS, _X.REMOVED, None),
    Rule.OUTPUT_SCHEMA_ADDED: (_A.SURFACE, _K.EXISTENCE, _X.ADDED, None),
    Rule.OUTPUT_SCHEMA_REMOVED: (_A.SURFACE, _K.EXISTENCE, _X.REMOVED, None),
    Rule.TOOL_ANNOTATION_CHANGED: (_A.SURFACE, _K.VALUES, _X.CHANGED, Direction.SENDERS),
    Rule.RESOURCE_ADDED: (_A.SURFACE, _K.EXISTENCE, _X.ADDED, None),
    Rule.RESOURCE_REMOVED: (_A.SURFACE, _K.EXISTENCE, _X.REMOVED, None),
    Rule.RESOURCE_MIME_TYPE_CHANGED: (_A.SURFACE, _K.VALUES, _X.CHANGED, None),
    Rule.RESOURCE_TEMPLATE_ADDED: (_A.SURFACE, _K.EXISTENCE, _X.ADDED, None),
    Rule.RESOURCE_TEMPLATE_REMOVED: (_A.SURFACE, _K.EXISTENCE, _X.REMOVED, None),
    Rule.RESOURCE_TEMPLATE_VARIABLES_CHANGED: (_A.SURFACE, _K.STRUCTURE, _X.CHANGED, None),
    Rule.RESOURCE_TEMPLATE_URI_CHANGED: (_A.SURFACE, _K.VALUES, _X.CHANGED, None),
    Rule.PROMPT_ADDED: (_A.SURFACE, _K.EXISTENCE, _X.ADDED, None),
    Rule.PROMPT_REMOVED: (_A.SURFACE, _K.EXISTENCE, _X.REMOVED, None),
    Rule.PROMPT_ARGUMENT_ADDED: (_A.SURFACE, _K.EXISTENCE, _X.ADDED, Direction.SENDERS),
    Rule.PROMPT_ARGUMENT_REMOVED: (_A.SURFACE, _K.EXISTENCE, _X.REMOVED, None),
    Rule.PROMPT_ARGUMENT_REQUIRED: (_A.SURFACE, _K.REQUIREDNESS, _X.ADDED, None),
    Rule.PROMPT_ARGUMENT_OPTIONAL: (_A.SURFACE, _K.REQUIREDNESS, _X.REMOVED, None),
    Rule.SERVER_CAPABILITY_ADDED: (_A.SURFACE, _K.EXISTENCE, _X.ADDED, None),
    Rule.SERVER_CAPABILITY_REMOVED: (_A.SURFACE, _K.EXISTENCE, _X.REMOVED, None),
}
# Core rules whose bindings effect a circumstance decides (a required property, a result kind).
_CIRCUMSTANTIAL_BINDINGS = frozenset(
    {Rule.PROPERTY_ADDED, Rule.PROPERTY_REMOVED, Rule.METHOD_RESULT_CHANGED}
)

#: Every keyword family's rules, by rule.
SPECS: dict[Rule, Spec] = {
    spec.rule: spec
    for family in (constraints, containers, applicators, values)
    for spec in family.SPECS
}


# The keywords the core rules read (the families' rules name theirs in their ``Spec``).
_CORE_KEYWORDS: dict[str, tuple[Rule, ...]] = {
    "type": (Rule.TYPE_WIDENED, Rule.TYPE_NARROWED, Rule.TYPE_CHANGED),
    "properties": (Rule.PROPERTY_ADDED, Rule.PROPERTY_REMOVED),
    "required": (Rule.PROPERTY_REQUIRED_ADDED, Rule.PROPERTY_REQUIRED_REMOVED),
    "$ref": (Rule.REFERENCE_CHANGED,),
    "items": (Rule.TYPE_WIDENED, Rule.TYPE_NARROWED, Rule.TYPE_CHANGED),
    "additionalProperties": (Rule.ADDITIONAL_PROPERTIES_OPENED, Rule.ADDITIONAL_PROPERTIES_CLOSED),
    "anyOf": (Rule.UNION_MEMBER_ADDED, Rule.UNION_MEMBER_REMOVED),
    "oneOf": (Rule.UNION_MEMBER_ADDED, Rule.UNION_MEMBER_REMOVED),
    "enum": (Rule.ENUM_VALUE_ADDED, Rule.ENUM_VALUE_REMOVED),
    "const": (Rule.CONST_CHANGED,),
    "description": (Rule.DESCRIPTION_CHANGED,),
    "markdownDescription": (Rule.DESCRIPTION_CHANGED,),
    "$schema": (Rule.DIALECT_CHANGED,),
    "$defs": (Rule.DEFINITION_ADDED, Rule.DEFINITION_REMOVED, Rule.DEFINITION_RENAMED),
    "definitions": (Rule.DEFINITION_ADDED, Rule.DEFINITION_REMOVED, Rule.DEFINITION_RENAMED),
}


def _core_tags(rule: Rule, entry: tuple[Area, Kind, Action, Direction | None]) -> Tags:
    area, kind, action, direction = entry
    return Tags(direction or direction_of(rules.impact(rule)), area, kind, action)


#: Every rule's tags.
TAGS: dict[Rule, Tags] = {
    rule: SPECS[rule].tags if rule in SPECS else _core_tags(rule, _CORE[rule]) for rule in Rule
}
#: Every rule's documentation: what it means and whom it breaks.
RULE_DOCS: dict[Rule, str] = {
    rule: SPECS[rule].doc if rule in SPECS else rules.CORE_DOCS[rule] for rule in Rule
}


def _keyword_rules() -> dict[str, frozenset[Rule]]:
    found: dict[str, set[Rule]] = {k: set(v) for k, v in _CORE_KEYWORDS.items()}
    for spec in SPECS.values():
        if spec.keyword != "*":
            found.setdefault(spec.keyword, set()).add(spec.rule)
    found["additionalItems"] = {Rule.ITEMS_CLOSED, Rule.ITEMS_OPENED}  # draft-07's items rest
    return {keyword: frozenset(found[keyword]) for keyword in sorted(found)}


#: JSON Schema keyword -> the rules that read it: every keyword a pinned schema or the 2020-12
#: dialect uses has one (tests/codegen/diff/test_diff_keywords.py).
KEYWORD_RULES: dict[str, frozenset[Rule]] = _keyword_rules()


def can_break_bindings(rule: Rule) -> bool:
    """Whether a change of ``rule`` can break code importing the generated bindings."""
    if rule in SPECS:
        return SPECS[rule].impact.bindings
    if rule in _CIRCUMSTANTIAL_BINDINGS:
        return True
    fixed = fixed_impact(rule)
    return fixed is not None and fixed.bindings and rule not in SURFACE_RULES


_PROTOCOL = (Area.METHOD, Area.CAPABILITY)
_SCHEMA = (Area.DEFINITION, Area.PROPERTY, Area.UNION)
_NULLABILITY = (Rule.NULLABLE_ADDED, Rule.NULLABLE_REMOVED)


@dataclass(frozen=True)
class Category:
    """A named set of rules a user can pick, and what it holds in one sentence. A category
    ``by_origin`` selects changes by where they come from, not by rule (``extension``)."""

    doc: str
    test: Callable[[Rule, Tags], bool]
    by_origin: bool = False


CATEGORIES: dict[str, Category] = {
    "wire": Category(
        "rules that can break a peer on the wire (direction is not none)",
        lambda r, t: t.direction is not Direction.NONE,
    ),
    "bindings": Category(
        "rules that can break code importing the generated bindings",
        lambda r, t: can_break_bindings(r),
    ),
    "docs": Category(
        "documentation and lifecycle: descriptions, titles, examples, comments, deprecations",
        lambda r, t: t.kind in (Kind.DOCUMENTATION, Kind.LIFECYCLE),
    ),
    "protocol": Category(
        "the method, notification and capability tables", lambda r, t: t.area in _PROTOCOL
    ),
    "schema": Category(
        "definitions, their properties and unions (structure, types, requiredness)",
        lambda r, t: t.area in _SCHEMA,
    ),
    "constraints": Category(
        "value constraints: bounds, lengths, patterns, formats, multipleOf, uniqueness",
        lambda r, t: t.kind is Kind.CONSTRAINTS,
    ),
    "values": Category(
        "values: enum, const, default, nullability, readOnly/writeOnly",
        lambda r, t: t.kind is Kind.VALUES or r in _NULLABILITY,
    ),
    "dialect": Category(
        "the JSON Schema dialect and its identifiers ($schema, $id, $anchor, $dynamicRef...)",
        lambda r, t: t.area is Area.DIALECT,
    ),
    "surface": Category(
        "a server's surface (two `mcpbind inspect --json` snapshots)",
        lambda r, t: t.area is Area.SURFACE,
    ),
    "extension": Category(
        "changes an extension schema layered over a revision brought (by the change's origin, "
        "any rule; `extension:NAME` for one extension)",
        lambda r, t: True,
        by_origin=True,
    ),
}
#: The selectors that name changes by origin, whatever their rule (any extension).
_ANY_EXTENSION = ("extension", f"area:{Area.EXTENSION.value}")
_ONE_EXTENSION = "extension:"


def categories_of(rule: Rule, origin: str | None = None) -> list[str]:
    """The categories ``rule`` belongs to, in ``CATEGORIES`` order; with ``origin`` (a change
    an extension brought) also the categories that select by origin."""
    return [
        name
        for name, category in CATEGORIES.items()
        if (origin is not None if category.by_origin else category.test(rule, TAGS[rule]))
    ]


@dataclass(frozen=True)
class Selection:
    """What a selector names: a set of rules and, for the origin selectors, the extension a
    change must come from (``*``: any; a name, or ``name@version``). ``origin`` None: any
    origin, the revision's own changes included."""

    rules: frozenset[Rule]
    origin: str | None = None

    def matches(self, rule: Rule, origin: str | None) -> bool:
        """Whether a change of ``rule`` from ``origin`` (None: the revision) is selected."""
        if rule not in self.rules:
            return False
        if self.origin is None:
            return True
        if origin is None:
            return False
        return self.origin in ("*", origin) or self.origin == origin.partition("@")[0]


class SelectorError(ValueError):
    """An unknown selector; the message names the closest known one."""


#: Every tag a selector may name, whether or not a rule has it yet.
_LABELS = frozenset(
    f"{key}:{value}"
    for key, values in (
        ("direction", Direction),
        ("area", Area),
        ("kind", Kind),
        ("action", Action),
    )
    for value in values
)


def _vocabulary() -> list[str]:
    return [*(r.value for r in Rule), *sorted(_LABELS), *CATEGORIES, "*"]


def select(selector: str) -> Selection:
    """What ``selector`` names (see the module docstring); ``SelectorError`` if nothing."""
    text = selector.strip()
    if text in _ANY_EXTENSION:
        return Selection(frozenset(Rule), "*")
    if text.startswith(_ONE_EXTENSION):
        name, _, version = text.removeprefix(_ONE_EXTENSION).partition("@")
        try:
            pin = get_extension_pin(name, version or None)  # a pinned one, so a typo is an error
        except CodegenError as exc:
            raise SelectorError(f"{text!r}: {exc} (see `mcpbind diff rules`)") from None
        return Selection(frozenset(Rule), pin.label if version else pin.name)
    return Selection(_rules(text))


def resolve(selector: str) -> frozenset[Rule]:
    """The rules ``selector`` names; ``SelectorError`` if none. An origin selector names every
    rule (``select`` says which changes)."""
    return select(selector).rules


def _rules(text: str) -> frozenset[Rule]:
    if text == "*":
        return frozenset(Rule)
    if text in CATEGORIES:
        category = CATEGORIES[text]
        return frozenset(r for r in Rule if category.test(r, TAGS[r]))
    if ":" in text and text in _LABELS:
        return frozenset(r for r in Rule if text in TAGS[r].labels())
    if ":" in text:
        found: frozenset[Rule] = frozenset()
    elif any(c in text for c in "*?["):
        found = frozenset(r for r in Rule if fnmatchcase(r.value, text))
    else:
        found = frozenset(r for r in Rule if r.value == text)
    if not found:
        close = difflib.get_close_matches(text, _vocabulary(), n=1, cutoff=0.5)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise SelectorError(f"unknown rule or tag {text!r}{hint} (see `mcpbind diff rules`)")
    return found


def specificity(selector: str) -> int:
    """How narrowly a selector names rules: an ID (3) over a glob (2), a tag (1), a category."""
    text = selector.strip()
    if text == "*" or text in CATEGORIES:
        return 0
    if ":" in text:
        return 1
    return 2 if any(c in text for c in "*?[") else 3


def rule_severity(rule: Rule) -> str:
    """The severity ``mcpbind diff rules`` lists: fixed, or the range a circumstance decides."""
    if rule in SPECS:
        return SPECS[rule].impact.severity.value
    fixed = fixed_impact(rule)
    if fixed is not None:
        return fixed.severity.value
    if rule is Rule.TOOL_ARGUMENT_REMOVED:
        return "potentially-breaking..breaking"  # an open input schema, or a closed one
    return "compatible..breaking"


def rule_listing(selected: frozenset[Rule] | None = None) -> list[dict[str, Any]]:
    """``mcpbind diff rules --format json``: each rule with its severity, tags and categories."""
    return [
        {
            "rule": rule.value,
            "severity": rule_severity(rule),
            "bindings": can_break_bindings(rule),
            "keyword": SPECS[rule].keyword if rule in SPECS else None,
            "tags": TAGS[rule].to_json(),
            "categories": categories_of(rule),
            "doc": RULE_DOCS[rule],
        }
        for rule in Rule
        if selected is None or rule in selected
    ]
