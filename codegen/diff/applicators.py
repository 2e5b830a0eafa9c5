"""Rules for the 2020-12 applicators no other module reads, and for the dialect's identifiers.

Applicators: ``not``, ``if``/``then``/``else``, ``allOf`` outside an object's inheritance (an
object's ``allOf`` is merged into it by ``shapes.effective``), and a union switching between
``anyOf`` and ``oneOf``. A ``then`` or ``else`` present on both sides under the same ``if`` is
compared by ``recurse``; a changed ``if`` or ``not`` is one rule (its effect on the accepted
values runs both ways).

Identifiers: ``$id``, ``$anchor``, ``$dynamicAnchor``, ``$dynamicRef``, ``$vocabulary``, and a
``$schema`` inside a subschema. They move no message on the wire (but ``$dynamicRef``, which
decides what a node accepts); they matter to tools that reference the schema by them.
"""

from __future__ import annotations

from typing import Any

from ..jsonvalues import is_array
from .deltas import Delta, Recurse, of_spec
from .rules import Variance
from .shapes import describe, literal
from .tags import Action, Area, Kind, Spec, make_spec

__all__ = ["KEYWORDS", "SPECS", "compare", "union_kind"]

_N, _W, _X, _0 = Variance.NARROW, Variance.WIDEN, Variance.BOTH, Variance.NONE
_S, _D = Kind.STRUCTURE, Area.DIALECT
_IDENTIFIERS = (
    ("$id", "SCHEMA_ID", "its URI"),
    ("$anchor", "ANCHOR", "a plain-name anchor"),
    ("$dynamicAnchor", "DYNAMIC_ANCHOR", "a dynamic anchor"),
)


def _identifier_specs() -> list[Spec]:
    out: list[Spec] = []
    for keyword, s, what in _IDENTIFIERS:
        out += [
            make_spec(f"{s}_ADDED", keyword, f"A subschema gained {what} ({keyword}); "
                      "messages are unaffected.", _0, Action.ADDED, _D, _S),
            make_spec(f"{s}_REMOVED", keyword, f"A subschema lost {what} ({keyword}): schemas "
                      "and tools referencing it break; messages are unaffected.", _0,
                      Action.REMOVED, _D, _S),
            make_spec(f"{s}_CHANGED", keyword, f"A subschema's {what} ({keyword}) changed: "
                      "references by the old one break; messages are unaffected.", _0,
                      Action.CHANGED, _D, _S),
        ]  # fmt: skip
    return out


SPECS: tuple[Spec, ...] = (
    make_spec("NOT_ADDED", "not", "A value must now not match a schema: senders of such values "
              "are rejected.", _N, Action.ADDED, kind=_S),
    make_spec("NOT_REMOVED", "not", "A value may now match a schema it had to avoid.", _W,
              Action.REMOVED, kind=_S),
    make_spec("NOT_CHANGED", "not", "The schema a value must not match changed.", _X,
              Action.CHANGED, kind=_S),
    make_spec("IF_ADDED", "if", "A condition (if, with then/else) now applies to a value.", _N,
              Action.ADDED, kind=_S),
    make_spec("IF_REMOVED", "if", "A condition (if, with its then/else) no longer applies.", _W,
              Action.REMOVED, kind=_S),
    make_spec("IF_CHANGED", "if", "A condition's if changed: its then/else apply to other "
              "values.", _X, Action.CHANGED, kind=_S),
    make_spec("THEN_ADDED", "then", "Values matching the condition must now match a then "
              "schema.", _N, Action.ADDED, kind=_S),
    make_spec("THEN_REMOVED", "then", "Values matching the condition no longer need to match a "
              "then schema.", _W, Action.REMOVED, kind=_S),
    make_spec("ELSE_ADDED", "else", "Values not matching the condition must now match an else "
              "schema.", _N, Action.ADDED, kind=_S),
    make_spec("ELSE_REMOVED", "else", "Values not matching the condition no longer need to "
              "match an else schema.", _W, Action.REMOVED, kind=_S),
    make_spec("ALL_OF_MEMBER_ADDED", "allOf", "A value must now also match another schema.",
              _N, Action.ADDED, Area.UNION, _S),
    make_spec("ALL_OF_MEMBER_REMOVED", "allOf", "A value no longer needs to match one of the "
              "schemas it had to match.", _W, Action.REMOVED, Area.UNION, _S),
    make_spec("UNION_BECAME_EXCLUSIVE", "oneOf", "A union's anyOf became oneOf: a value "
              "matching several members is now rejected.", _N, Action.NARROWED, Area.UNION, _S),
    make_spec("UNION_BECAME_INCLUSIVE", "anyOf", "A union's oneOf became anyOf: a value may "
              "now match several members.", _W, Action.WIDENED, Area.UNION, _S),
    *_identifier_specs(),
    make_spec("DYNAMIC_REF_ADDED", "$dynamicRef", "A node now also matches what a dynamic "
              "reference resolves to.", _N, Action.ADDED, _D, _S),
    make_spec("DYNAMIC_REF_REMOVED", "$dynamicRef", "A node no longer follows a dynamic "
              "reference.", _W, Action.REMOVED, _D, _S),
    make_spec("DYNAMIC_REF_CHANGED", "$dynamicRef", "A dynamic reference targets another "
              "anchor.", _X, Action.CHANGED, _D, _S),
    make_spec("VOCABULARY_CHANGED", "$vocabulary", "A meta-schema's vocabularies changed: "
              "validators must support them; messages are unaffected.", _0, Action.CHANGED,
              _D, _S),
    make_spec("RECURSIVE_REF_CHANGED", "$recursiveRef", "2019-09's $recursiveRef was added, "
              "removed or changed (2020-12 replaced it by $dynamicRef).", _X, Action.CHANGED,
              _D, _S),
    make_spec("RECURSIVE_ANCHOR_CHANGED", "$recursiveAnchor", "2019-09's $recursiveAnchor was "
              "added, removed or changed.", _0, Action.CHANGED, _D, _S),
    make_spec("EMBEDDED_DIALECT_CHANGED", "$schema", "A subschema declares another dialect "
              "($schema inside the document).", _0, Action.CHANGED, _D, _S),
)  # fmt: skip
_BY_RULE = {spec.rule.value: spec for spec in SPECS}
KEYWORDS = frozenset(spec.keyword for spec in SPECS)


def _rule(rule: str, path: str, what: str, old: Any = None, new: Any = None) -> Delta:
    return of_spec(_BY_RULE[rule], path, what, old, new)


def _presence(key: str, s: str, was: Any, now: Any, path: str) -> list[Delta]:
    """Added, removed or changed, for keywords compared as values."""
    if was == now:
        return []
    if was is None:
        return [_rule(f"{s}_ADDED", path, f"{key} {literal(now)} added", None, now)]
    if now is None:
        return [_rule(f"{s}_REMOVED", path, f"{key} {literal(was)} removed", was, None)]
    return [_rule(f"{s}_CHANGED", path, f"{key} {literal(now)} (was {literal(was)})", was, now)]


def compare(old: dict[str, Any], new: dict[str, Any], path: str, recurse: Recurse) -> list[Delta]:
    """Every change of this module's keywords between two schema nodes at ``path``."""
    out: list[Delta] = []
    was, now = old.get("not"), new.get("not")
    if was != now:
        out.append(
            _rule("NOT_ADDED", path, "must not match a schema now", None, literal(now))
            if was is None
            else _rule("NOT_REMOVED", path, "no longer must not match a schema", literal(was))
            if now is None
            else _rule("NOT_CHANGED", path, "the schema it must not match changed", literal(was),
                       literal(now))
        )  # fmt: skip
    out += _conditional(old, new, path, recurse)
    out += _all_of(old.get("allOf"), new.get("allOf"), path)
    for keyword, s, _ in _IDENTIFIERS:
        out += _presence(keyword, s, old.get(keyword), new.get(keyword), path)
    out += _presence("$dynamicRef", "DYNAMIC_REF", old.get("$dynamicRef"),
                     new.get("$dynamicRef"), path)  # fmt: skip
    for key, rule in (("$recursiveRef", "RECURSIVE_REF_CHANGED"),
                      ("$recursiveAnchor", "RECURSIVE_ANCHOR_CHANGED")):  # fmt: skip
        was, now = old.get(key), new.get(key)
        if was != now:
            out.append(_rule(rule, path, f"{key} {literal(now)} (was {literal(was)})", was, now))
    if old.get("$vocabulary") != new.get("$vocabulary"):
        was, now = old.get("$vocabulary"), new.get("$vocabulary")
        out.append(_rule("VOCABULARY_CHANGED", path, "$vocabulary changed", was, now))
    if old.get("$schema") != new.get("$schema"):
        was, now = old.get("$schema"), new.get("$schema")
        text = f"$schema {literal(now)} (was {literal(was)})"
        out.append(_rule("EMBEDDED_DIALECT_CHANGED", path, text, was, now))
    return out


def union_kind(old: dict[str, Any], new: dict[str, Any], path: str) -> list[Delta]:
    """A union switching between ``anyOf`` (any member) and ``oneOf`` (exactly one)."""
    if "anyOf" in old and "oneOf" in new and "oneOf" not in old:
        return [_rule("UNION_BECAME_EXCLUSIVE", path, "anyOf became oneOf", "anyOf", "oneOf")]
    if "oneOf" in old and "anyOf" in new and "anyOf" not in old:
        return [_rule("UNION_BECAME_INCLUSIVE", path, "oneOf became anyOf", "oneOf", "anyOf")]
    return []


def _conditional(
    old: dict[str, Any], new: dict[str, Any], path: str, recurse: Recurse
) -> list[Delta]:
    was, now = old.get("if"), new.get("if")
    if was is None and now is None:
        return []  # then and else mean nothing without if
    if was is None:
        return [_rule("IF_ADDED", path, "a condition (if) now applies", None, literal(now))]
    if now is None:
        return [_rule("IF_REMOVED", path, "a condition (if) no longer applies", literal(was))]
    if was != now:
        return [_rule("IF_CHANGED", path, "the condition (if) changed", literal(was), literal(now))]
    out: list[Delta] = []
    for key, s in (("then", "THEN"), ("else", "ELSE")):
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if before is None:
            out.append(_rule(f"{s}_ADDED", path, f"{key} added", None, literal(after)))
        elif after is None:
            out.append(_rule(f"{s}_REMOVED", path, f"{key} removed", literal(before), None))
        else:
            out += recurse(before, after, f"{path}?{key}")
    return out


def _all_of(was: Any, now: Any, path: str) -> list[Delta]:
    """``allOf`` parts by value: an added part narrows, a removed one widens."""
    before = {literal(p): p for p in was} if is_array(was) else {}
    after = {literal(p): p for p in now} if is_array(now) else {}
    out = [
        _rule("ALL_OF_MEMBER_REMOVED", path, f"allOf part {describe(part)} removed", key, None)
        for key, part in before.items()
        if key not in after
    ]
    return out + [
        _rule("ALL_OF_MEMBER_ADDED", path, f"allOf part {describe(part)} added", None, key)
        for key, part in after.items()
        if key not in before
    ]
