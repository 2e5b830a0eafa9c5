"""Rules for values and annotations: ``const``, ``enum``, ``default``, nullability, ``readOnly``,
``writeOnly``, ``deprecated``, the documentation keywords, and keywords no rule knows.

Nullability is a value that may be ``null``: a ``type`` list gaining or losing ``"null"``, a union
gaining or losing a ``{"type": "null"}`` member, an ``enum`` gaining or losing ``null``. It is
reported as ``NULLABLE_ADDED``/``NULLABLE_REMOVED`` rather than as a type or member change, and
it changes the bindings (``X | None``). ``default`` is not documentation: a sender that omits the
value relies on it, so a changed or removed default may break senders.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..jsonvalues import is_array, is_object
from .deltas import Delta, delta, of_spec
from .rules import Impact, Rule, Severity, Variance
from .shapes import describe, literal
from .tags import Action, Area, Kind, Spec, make_spec

__all__ = [
    "DOCUMENTATION",
    "KEYWORDS",
    "SPECS",
    "compare",
    "const_and_enum",
    "documentation",
    "is_null",
    "nullable",
    "spec_delta",
    "unknown",
]

_N, _W, _X, _0 = Variance.NARROW, Variance.WIDEN, Variance.BOTH, Variance.NONE
_V, _L, _DOC = Kind.VALUES, Kind.LIFECYCLE, Kind.DOCUMENTATION
_C, _P, _B = Severity.COMPATIBLE, Severity.POTENTIALLY_BREAKING, Severity.BREAKING
#: Documentation keywords -> rule (``description`` keeps the core ``DESCRIPTION_CHANGED``).
DOCUMENTATION = {"title": "TITLE_CHANGED", "examples": "EXAMPLES_CHANGED",
                 "$comment": "COMMENT_CHANGED"}  # fmt: skip


def _with(spec: Spec, impact: Impact) -> Spec:
    """``spec`` judged otherwise than its variance says (nullability also breaks the bindings)."""
    return replace(spec, impact=impact)


SPECS: tuple[Spec, ...] = (
    make_spec("CONST_ADDED", "const", "A value is now fixed to one constant: senders of other "
              "values are rejected.", _N, Action.ADDED, Area.PROPERTY, _V),
    make_spec("CONST_REMOVED", "const", "A value is no longer fixed to a constant: receivers "
              "may get others.", _W, Action.REMOVED, Area.PROPERTY, _V),
    make_spec("ENUM_ADDED", "enum", "A value is now restricted to a list: senders of other "
              "values are rejected.", _N, Action.ADDED, Area.PROPERTY, _V),
    make_spec("ENUM_REMOVED", "enum", "A value is no longer restricted to a list: receivers "
              "may get values they do not switch on.", _W, Action.REMOVED, Area.PROPERTY, _V),
    _with(make_spec("TYPE_ADDED", "type", "A value that had no type keyword now has one: "
                    "senders of other types are rejected.", _N, Action.ADDED, Area.PROPERTY,
                    Kind.TYPE), Impact(_B, _C, True)),
    _with(make_spec("TYPE_REMOVED", "type", "A value's type keyword is gone: receivers may get "
                    "any type.", _W, Action.REMOVED, Area.PROPERTY, Kind.TYPE),
          Impact(_C, _P, True)),
    _with(make_spec("ITEMS_ADDED", "items", "An array of anything now constrains its items: "
                    "senders of other items are rejected.", _N, Action.ADDED, Area.PROPERTY,
                    Kind.TYPE), Impact(_B, _C, True)),
    _with(make_spec("ITEMS_REMOVED", "items", "An array no longer constrains its items: "
                    "receivers may get any item.", _W, Action.REMOVED, Area.PROPERTY,
                    Kind.TYPE), Impact(_C, _P, True)),
    _with(make_spec("ADDITIONAL_PROPERTIES_SCHEMA_ADDED", "additionalProperties", "An object "
                    "open to any extra property now constrains their values (a map's value "
                    "type): senders of other values are rejected.", _N, Action.ADDED,
                    Area.PROPERTY, Kind.TYPE), Impact(_B, _C, True)),
    _with(make_spec("ADDITIONAL_PROPERTIES_SCHEMA_REMOVED", "additionalProperties", "Extra "
                    "properties' values are no longer constrained: receivers may get any "
                    "value.", _W, Action.REMOVED, Area.PROPERTY, Kind.TYPE),
          Impact(_C, _P, True)),
    _with(make_spec("NULLABLE_ADDED", "type", "A value may now be null: receivers written for "
                    "OLD may not handle it; its binding becomes Optional.", _W, Action.ADDED,
                    Area.PROPERTY, Kind.TYPE), Impact(_C, _P, True)),
    _with(make_spec("NULLABLE_REMOVED", "type", "A value may no longer be null: senders that "
                    "send null are rejected.", _N, Action.REMOVED, Area.PROPERTY, Kind.TYPE),
          Impact(_B, _C, True)),
    make_spec("DEFAULT_ADDED", "default", "A value now has a default: what an omitted value "
              "means is now stated.", _0, Action.ADDED, Area.PROPERTY, _V),
    _with(make_spec("DEFAULT_REMOVED", "default", "A value's default is gone: senders that "
                    "omit it relied on the default.", _0, Action.REMOVED, Area.PROPERTY, _V),
          Impact(_P, _C, False)),
    _with(make_spec("DEFAULT_CHANGED", "default", "A value's default changed: senders that "
                    "omit it now mean another value.", _0, Action.CHANGED, Area.PROPERTY, _V),
          Impact(_P, _C, False)),
    _with(make_spec("READ_ONLY_ADDED", "readOnly", "A value is now readOnly: senders of it may "
                    "have it ignored or rejected.", _0, Action.ADDED, Area.PROPERTY, _V),
          Impact(_P, _C, False)),
    make_spec("READ_ONLY_REMOVED", "readOnly", "A value is no longer readOnly.", _0,
              Action.REMOVED, Area.PROPERTY, _V),
    _with(make_spec("WRITE_ONLY_ADDED", "writeOnly", "A value is now writeOnly: receivers may "
                    "no longer get it back.", _0, Action.ADDED, Area.PROPERTY, _V),
          Impact(_C, _P, False)),
    make_spec("WRITE_ONLY_REMOVED", "writeOnly", "A value is no longer writeOnly.", _0,
              Action.REMOVED, Area.PROPERTY, _V),
    make_spec("DEPRECATED_FLAG_ADDED", "deprecated", "The schema marks a value deprecated "
              "(the deprecated keyword): still valid, plan its removal.", _0, Action.ADDED,
              Area.PROPERTY, _L),
    make_spec("DEPRECATED_FLAG_REMOVED", "deprecated", "The schema no longer marks a value "
              "deprecated.", _0, Action.REMOVED, Area.PROPERTY, _L),
    make_spec("TITLE_CHANGED", "title", "Only a title changed (hidden unless "
              "--include-descriptions).", _0, Action.CHANGED, Area.DEFINITION, _DOC),
    make_spec("EXAMPLES_CHANGED", "examples", "Only examples changed (hidden unless "
              "--include-descriptions).", _0, Action.CHANGED, Area.DEFINITION, _DOC),
    make_spec("COMMENT_CHANGED", "$comment", "Only a $comment changed (hidden unless "
              "--include-descriptions).", _0, Action.CHANGED, Area.DEFINITION, _DOC),
    make_spec("UNKNOWN_KEYWORD_ADDED", "*", "A keyword no rule knows was added (a vendor "
              "keyword, a later dialect's): validators that know it may assert it.", _N,
              Action.ADDED, Area.DIALECT, Kind.CONSTRAINTS, soft=True),
    make_spec("UNKNOWN_KEYWORD_REMOVED", "*", "A keyword no rule knows was removed.", _W,
              Action.REMOVED, Area.DIALECT, Kind.CONSTRAINTS, soft=True),
    make_spec("UNKNOWN_KEYWORD_CHANGED", "*", "A keyword no rule knows changed value.", _X,
              Action.CHANGED, Area.DIALECT, Kind.CONSTRAINTS, soft=True),
)  # fmt: skip
_BY_RULE = {spec.rule.value: spec for spec in SPECS}
KEYWORDS = frozenset(spec.keyword for spec in SPECS) - {
    "*",
    "type",
    "items",
    "additionalProperties",
}


def _rule(rule: str, path: str, what: str, old: Any = None, new: Any = None) -> Delta:
    return of_spec(_BY_RULE[rule], path, what, old, new)


def spec_delta(rule: str, path: str, what: str, old: Any = None, new: Any = None) -> Delta:
    """A delta of one of this module's rules, for ``compare`` (types, items, maps, unions)."""
    return _rule(rule, path, what, old, new)


def is_null(node: Any) -> bool:
    """``{"type": "null"}`` (with annotations at most): the member that makes a union nullable."""
    return is_object(node) and node.get("type") == "null" and "const" not in node


def nullable(added: bool, path: str, how: str, old: Any, new: Any) -> Delta:
    """The nullability rule, for ``compare`` (a type list, a union member)."""
    verb = "may now be null" if added else "may no longer be null"
    return _rule("NULLABLE_ADDED" if added else "NULLABLE_REMOVED", path, f"{verb} ({how})",
                 old, new)  # fmt: skip


def const_and_enum(old: dict[str, Any], new: dict[str, Any], path: str) -> list[Delta]:
    """``const`` and ``enum``: values added or removed, or the restriction itself."""
    out: list[Delta] = []
    if "const" in old and "const" in new:
        if old["const"] != new["const"]:
            text = f"constant {literal(new['const'])} (was {literal(old['const'])})"
            out.append(delta(Rule.CONST_CHANGED, path, text, old["const"], new["const"]))
    elif "const" in old:
        text = f"no longer fixed to {literal(old['const'])}"
        out.append(_rule("CONST_REMOVED", path, text, old["const"], describe(new)))
    elif "const" in new:
        text = f"now fixed to {literal(new['const'])}"
        out.append(_rule("CONST_ADDED", path, text, describe(old), new["const"]))
    old_enum, new_enum = old.get("enum"), new.get("enum")
    if is_array(old_enum) and is_array(new_enum):
        for value in new_enum:
            if value not in old_enum:
                if value is None:
                    out.append(nullable(True, path, "enum value null added", None, None))
                    continue
                text = f"enum value {literal(value)} added"
                out.append(delta(Rule.ENUM_VALUE_ADDED, path, text, None, value))
        for value in old_enum:
            if value not in new_enum:
                if value is None:
                    out.append(nullable(False, path, "enum value null removed", None, None))
                    continue
                text = f"enum value {literal(value)} removed"
                out.append(delta(Rule.ENUM_VALUE_REMOVED, path, text, value, None))
    elif is_array(old_enum):
        text = f"no longer restricted to {describe(old)}"
        out.append(_rule("ENUM_REMOVED", path, text, old_enum, describe(new)))
    elif is_array(new_enum):
        text = f"now restricted to {describe(new)}"
        out.append(_rule("ENUM_ADDED", path, text, describe(old), new_enum))
    return out


def compare(old: dict[str, Any], new: dict[str, Any], path: str) -> list[Delta]:
    """``default``, ``readOnly``, ``writeOnly``, ``deprecated`` (not the documentation)."""
    out: list[Delta] = []
    if old.get("default") != new.get("default") or ("default" in old) != ("default" in new):
        was, now = old.get("default"), new.get("default")
        if "default" not in old:
            out.append(_rule("DEFAULT_ADDED", path, f"default {literal(now)} added", None, now))
        elif "default" not in new:
            out.append(_rule("DEFAULT_REMOVED", path, f"default {literal(was)} removed", was))
        else:
            text = f"default {literal(now)} (was {literal(was)})"
            out.append(_rule("DEFAULT_CHANGED", path, text, was, now))
    for key, s in (("readOnly", "READ_ONLY"), ("writeOnly", "WRITE_ONLY"),
                   ("deprecated", "DEPRECATED_FLAG")):  # fmt: skip
        was, now = old.get(key) is True, new.get(key) is True
        if was != now:
            action = "ADDED" if now else "REMOVED"
            out.append(_rule(f"{s}_{action}", path, f"{key} {now} (was {was})", was, now))
    return out


def documentation(old: dict[str, Any], new: dict[str, Any], path: str) -> list[Delta]:
    """``title``, ``examples``, ``$comment`` changed (only with ``--include-descriptions``)."""
    return [
        _rule(rule, path, f"{key} changed", old.get(key), new.get(key))
        for key, rule in DOCUMENTATION.items()
        if old.get(key) != new.get(key)
    ]


def unknown(
    old: dict[str, Any], new: dict[str, Any], path: str, known: frozenset[str]
) -> list[Delta]:
    """Keywords no rule reads: added, removed or changed, named in the message."""
    out: list[Delta] = []
    for key in sorted((old.keys() | new.keys()) - known):
        was, now = old.get(key), new.get(key)
        if key not in old:
            out.append(_rule("UNKNOWN_KEYWORD_ADDED", path, f"keyword '{key}' added", None, now))
        elif key not in new:
            out.append(_rule("UNKNOWN_KEYWORD_REMOVED", path, f"keyword '{key}' removed", was))
        elif was != now:
            out.append(_rule("UNKNOWN_KEYWORD_CHANGED", path, f"keyword '{key}' changed", was, now))
    return out
