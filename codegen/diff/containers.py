"""Rules for the keywords that shape objects and arrays beyond ``properties`` and ``items``.

Objects: ``propertyNames``, ``patternProperties``, ``dependentRequired``, ``dependentSchemas``
(and draft-07's ``dependencies``), ``unevaluatedProperties``. Arrays: ``prefixItems`` (and
draft-07's array form of ``items`` with ``additionalItems``), ``items: false`` after a prefix,
``contains``, ``unevaluatedItems``. A subschema present on both sides is compared by ``recurse``
(the structural comparison), so a ``contains`` that got narrower reports the narrowing inside it
at ``path[contains]``; only its appearance, disappearance, closing or opening is a rule here.
Judged like ``constraints``: tightening breaks senders, loosening may break receivers.
"""

from __future__ import annotations

from typing import Any

from ..jsonvalues import is_array, is_object
from .deltas import Delta, Recurse, of_spec
from .rules import Variance
from .tags import Action, Area, Kind, Spec, make_spec

__all__ = ["KEYWORDS", "SPECS", "compare", "tuple_form"]

_N, _W = Variance.NARROW, Variance.WIDEN
_S = Kind.STRUCTURE

SPECS: tuple[Spec, ...] = (
    make_spec("PROPERTY_NAMES_ADDED", "propertyNames", "Property names must now match a "
              "schema: senders using other names are rejected.", _N, Action.ADDED),
    make_spec("PROPERTY_NAMES_REMOVED", "propertyNames", "Property names are no longer "
              "constrained: receivers may get names they did not expect.", _W, Action.REMOVED),
    make_spec("PATTERN_PROPERTY_ADDED", "patternProperties", "Properties whose names match a "
              "new pattern must now match its schema.", _N, Action.ADDED, Area.PROPERTY, _S),
    make_spec("PATTERN_PROPERTY_REMOVED", "patternProperties", "Properties matching a pattern "
              "are no longer constrained by its schema.", _W, Action.REMOVED, Area.PROPERTY, _S),
    make_spec("DEPENDENT_REQUIRED_ADDED", "dependentRequired", "When one property is present "
              "another is now required: senders omitting it break.", _N, Action.ADDED,
              Area.PROPERTY, Kind.REQUIREDNESS),
    make_spec("DEPENDENT_REQUIRED_REMOVED", "dependentRequired", "A property no longer "
              "requires another: receivers assuming both may break.", _W, Action.REMOVED,
              Area.PROPERTY, Kind.REQUIREDNESS),
    make_spec("DEPENDENT_SCHEMA_ADDED", "dependentSchemas", "When a property is present the "
              "object must now also match a schema.", _N, Action.ADDED, Area.PROPERTY, _S),
    make_spec("DEPENDENT_SCHEMA_REMOVED", "dependentSchemas", "A property's presence no "
              "longer imposes a schema on the object.", _W, Action.REMOVED, Area.PROPERTY, _S),
    make_spec("DEPENDENCY_ADDED", "dependencies", "draft-07 dependencies: a property's "
              "presence now requires others or a schema.", _N, Action.ADDED, Area.PROPERTY, _S),
    make_spec("DEPENDENCY_REMOVED", "dependencies", "draft-07 dependencies: a property's "
              "presence no longer requires anything.", _W, Action.REMOVED, Area.PROPERTY, _S),
    make_spec("UNEVALUATED_PROPERTIES_CLOSED", "unevaluatedProperties", "Properties no "
              "subschema evaluates are now rejected.", _N, Action.CLOSED, kind=_S),
    make_spec("UNEVALUATED_PROPERTIES_OPENED", "unevaluatedProperties", "Properties no "
              "subschema evaluates are now accepted.", _W, Action.OPENED, kind=_S),
    make_spec("PREFIX_ITEMS_ADDED", "prefixItems", "An array is now a tuple: its first items "
              "must match positional schemas.", _N, Action.ADDED, kind=_S),
    make_spec("PREFIX_ITEMS_REMOVED", "prefixItems", "An array is no longer a tuple: its first "
              "items are unconstrained by position.", _W, Action.REMOVED, kind=_S),
    make_spec("PREFIX_ITEM_ADDED", "prefixItems", "A tuple has a new position: the item there "
              "is now constrained (narrower when the rest was open).", _N, Action.ADDED,
              kind=_S),
    make_spec("PREFIX_ITEM_REMOVED", "prefixItems", "A tuple lost a position: the item there "
              "is no longer constrained by it.", _W, Action.REMOVED, kind=_S),
    make_spec("ITEMS_CLOSED", "items", "A tuple now rejects items after its prefix (items: "
              "false, or draft-07 additionalItems: false).", _N, Action.CLOSED, kind=_S),
    make_spec("ITEMS_OPENED", "items", "A tuple now accepts items after its prefix.", _W,
              Action.OPENED, kind=_S),
    make_spec("CONTAINS_ADDED", "contains", "An array must now contain a matching item.", _N,
              Action.ADDED),
    make_spec("CONTAINS_REMOVED", "contains", "An array no longer needs a matching item.", _W,
              Action.REMOVED),
    make_spec("UNEVALUATED_ITEMS_CLOSED", "unevaluatedItems", "Array items no subschema "
              "evaluates are now rejected.", _N, Action.CLOSED, kind=_S),
    make_spec("UNEVALUATED_ITEMS_OPENED", "unevaluatedItems", "Array items no subschema "
              "evaluates are now accepted.", _W, Action.OPENED, kind=_S),
)  # fmt: skip
_BY_RULE = {spec.rule.value: spec for spec in SPECS}
KEYWORDS = frozenset(spec.keyword for spec in SPECS) | {"additionalItems"}


def _rule(rule: str, path: str, what: str, old: Any = None, new: Any = None) -> Delta:
    return of_spec(_BY_RULE[rule], path, what, old, new)


def tuple_form(node: dict[str, Any]) -> tuple[list[Any] | None, Any]:
    """The positional schemas and the schema of the rest of an array, in either dialect:
    2020-12 ``prefixItems`` + ``items``, or draft-07 ``items: [...]`` + ``additionalItems``."""
    items = node.get("items")
    if is_array(items):
        return items, node.get("additionalItems")
    prefix = node.get("prefixItems")
    return (prefix if is_array(prefix) else None), (items if prefix is not None else None)


def compare(old: dict[str, Any], new: dict[str, Any], path: str, recurse: Recurse) -> list[Delta]:
    """Every change of this module's keywords between two schema nodes at ``path``."""
    out = _optional_schema(old, new, path, "propertyNames", "PROPERTY_NAMES", "{names}", recurse)
    out += _optional_schema(old, new, path, "contains", "CONTAINS", "[contains]", recurse)
    out += _keyed(old, new, path, "patternProperties", "PATTERN_PROPERTY", recurse)
    out += _keyed(old, new, path, "dependentSchemas", "DEPENDENT_SCHEMA", recurse)
    out += _keyed(old, new, path, "dependencies", "DEPENDENCY", recurse)
    out += _dependent_required(old.get("dependentRequired"), new.get("dependentRequired"), path)
    out += _unevaluated(old, new, path, "unevaluatedProperties", "{unevaluated}", recurse)
    out += _unevaluated(old, new, path, "unevaluatedItems", "[unevaluated]", recurse)
    return out + _tuple(old, new, path, recurse)


def _optional_schema(
    old: dict[str, Any],
    new: dict[str, Any],
    path: str,
    key: str,
    s: str,
    step: str,
    recurse: Recurse,
) -> list[Delta]:
    was, now = old.get(key), new.get(key)
    if was == now:
        return []
    if was is None:
        return [_rule(f"{s}_ADDED", path, f"{key} added", None, now)]
    if now is None:
        return [_rule(f"{s}_REMOVED", path, f"{key} removed", was, None)]
    return recurse(was, now, f"{path}{step}")


def _keyed(
    old: dict[str, Any], new: dict[str, Any], path: str, key: str, s: str, recurse: Recurse
) -> list[Delta]:
    """A map of name -> schema (or, in ``dependencies``, name -> list of names)."""
    was: object = old.get(key) or {}
    now: object = new.get(key) or {}
    if not is_object(was) or not is_object(now) or was == now:
        return []
    out = [
        _rule(f"{s}_REMOVED", path, f"{key} '{name}' removed", name, None)
        for name in sorted(was.keys() - now.keys())
    ]
    out += [
        _rule(f"{s}_ADDED", path, f"{key} '{name}' added", None, name)
        for name in sorted(now.keys() - was.keys())
    ]
    for name in sorted(was.keys() & now.keys()):
        before, after = was[name], now[name]
        if is_array(before) or is_array(after):
            before = {"required": before} if is_array(before) else before
            after = {"required": after} if is_array(after) else after
            out += _dependent_required({name: before.get("required", [])},
                                       {name: after.get("required", [])}, path)  # fmt: skip
        elif before != after:
            out += recurse(before, after, f"{path}{{{key}:{name}}}")
    return out


def _dependent_required(was: Any, now: Any, path: str) -> list[Delta]:
    was = was if is_object(was) else {}
    now = now if is_object(now) else {}
    out: list[Delta] = []
    for name in sorted(was.keys() | now.keys()):
        before, after = set(was.get(name, [])), set(now.get(name, []))
        for other in sorted(after - before):
            what = f"'{other}' now required when '{name}' is present"
            out.append(_rule("DEPENDENT_REQUIRED_ADDED", f"{path}.{other}", what, None, name))
        for other in sorted(before - after):
            what = f"'{other}' no longer required when '{name}' is present"
            out.append(_rule("DEPENDENT_REQUIRED_REMOVED", f"{path}.{other}", what, name, None))
    return out


def _unevaluated(
    old: dict[str, Any], new: dict[str, Any], path: str, key: str, step: str, recurse: Recurse
) -> list[Delta]:
    was, now = old.get(key), new.get(key)
    if was == now:
        return []
    s = "UNEVALUATED_PROPERTIES" if key == "unevaluatedProperties" else "UNEVALUATED_ITEMS"
    if now is False:
        return [_rule(f"{s}_CLOSED", path, f"{key} now false", was, False)]
    if was is False:
        return [_rule(f"{s}_OPENED", path, f"{key} no longer false", False, now)]
    return recurse({} if was in (None, True) else was, {} if now in (None, True) else now,
                   f"{path}{step}")  # fmt: skip


def _tuple(old: dict[str, Any], new: dict[str, Any], path: str, recurse: Recurse) -> list[Delta]:
    (was, was_rest), (now, now_rest) = tuple_form(old), tuple_form(new)
    if was is None and now is None:  # no tuple: items false means an empty array
        was_rest, now_rest = old.get("items"), new.get("items")
        return _closing(was_rest, now_rest, path, "no items allowed", "items allowed")
    if was is None:
        return [_rule("PREFIX_ITEMS_ADDED", path, f"now a tuple of {len(now or [])}", None,
                      len(now or []))]  # fmt: skip
    if now is None:
        return [_rule("PREFIX_ITEMS_REMOVED", path, f"no longer a tuple of {len(was)}", len(was),
                      None)]  # fmt: skip
    out: list[Delta] = []
    for index in range(len(now), len(was)):
        out.append(_rule("PREFIX_ITEM_REMOVED", f"{path}[{index}]", f"tuple position {index} "
                         "removed", index, None))  # fmt: skip
    for index in range(len(was), len(now)):
        out.append(_rule("PREFIX_ITEM_ADDED", f"{path}[{index}]", f"tuple position {index} "
                         "added", None, index))  # fmt: skip
    for index in range(min(len(was), len(now))):
        out += recurse(was[index], now[index], f"{path}[{index}]")
    after = "after the prefix"
    return out + _closing(
        was_rest, now_rest, path, f"no items allowed {after}", f"items allowed {after}"
    )


def _closing(was: Any, now: Any, path: str, closed: str, opened: str) -> list[Delta]:
    if now is False and was is not False:
        return [_rule("ITEMS_CLOSED", path, closed, was, False)]
    if was is False and now is not False:
        return [_rule("ITEMS_OPENED", path, opened, False, now)]
    return []
