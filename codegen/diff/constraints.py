"""Rules for the scalar constraint keywords: bounds, ``multipleOf``, ``uniqueItems``, ``pattern``,
``format`` and the ``content*`` annotations.

Each keyword's change is judged by which way it moves the set of accepted values
(``tags.VARIANCE_IMPACT``): a tightened constraint (a ``maximum`` lowered, a ``pattern`` added)
breaks senders written for OLD, whose values may now be rejected; a loosened one (a ``minLength``
lowered) may break receivers, which may now get values they did not expect. Who the sender is
(client, server, both) is the definition's flow, added by ``engine``. ``format`` and the
``content*`` keywords are annotations a validator may or may not assert, so they are judged one
level milder (``tags.SOFT_IMPACT``).
"""

from __future__ import annotations

from typing import Any

from .deltas import Delta, Recurse, of_spec
from .rules import Variance
from .tags import Action, Spec, make_spec, stem

__all__ = ["KEYWORDS", "SPECS", "compare"]

LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains")
UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains")
_WHAT = {
    "minimum": "number",
    "exclusiveMinimum": "number",
    "maximum": "number",
    "exclusiveMaximum": "number",
    "minLength": "string length",
    "maxLength": "string length",
    "minItems": "array length",
    "maxItems": "array length",
    "minProperties": "property count",
    "maxProperties": "property count",
    "minContains": "count of matching items",
    "maxContains": "count of matching items",
}
# Known format inclusions (narrow, wide): every value of the first is a value of the second.
FORMAT_SUBSETS = frozenset(
    {
        ("uri", "uri-reference"),
        ("uri", "iri"),
        ("uri", "iri-reference"),
        ("uri-reference", "iri-reference"),
        ("iri", "iri-reference"),
        ("email", "idn-email"),
        ("hostname", "idn-hostname"),
        ("int32", "int64"),
        ("float", "double"),
    }
)
_SOFT = ("format", "contentEncoding", "contentMediaType", "contentSchema")


_N, _W, _X = Variance.NARROW, Variance.WIDEN, Variance.BOTH


def _bound_specs() -> list[Spec]:
    out: list[Spec] = []
    for keyword in (*LOWER, *UPPER):
        lower = keyword in LOWER
        what, s = _WHAT[keyword], stem(keyword)
        limit = "smallest" if lower else "largest"
        out += [
            make_spec(f"{s}_ADDED", keyword, f"A {what} now has a {limit} value "
                      f"({keyword}): senders may send values now rejected.", _N, Action.ADDED),
            make_spec(f"{s}_REMOVED", keyword, f"The {limit} {what} ({keyword}) is gone: "
                      "receivers may get values they did not expect.", _W, Action.REMOVED),
            make_spec(f"{s}_INCREASED", keyword, f"{keyword} raised: "
                      + ("smaller values are now rejected (breaks senders)." if lower
                         else "larger values may arrive (may break receivers)."),
                      _N if lower else _W, Action.INCREASED),
            make_spec(f"{s}_DECREASED", keyword, f"{keyword} lowered: "
                      + ("smaller values may arrive (may break receivers)." if lower
                         else "larger values are now rejected (breaks senders)."),
                      _W if lower else _N, Action.DECREASED),
        ]  # fmt: skip
    return out


def _keyword_specs() -> list[Spec]:
    out = [
        make_spec("MULTIPLE_OF_ADDED", "multipleOf", "A number must now be a multiple of a "
                  "value: senders may send values now rejected.", _N, Action.ADDED),
        make_spec("MULTIPLE_OF_REMOVED", "multipleOf", "multipleOf is gone: receivers may get "
                  "values that are not multiples.", _W, Action.REMOVED),
        make_spec("MULTIPLE_OF_NARROWED", "multipleOf", "multipleOf is now a multiple of the "
                  "old one: fewer values are accepted.", _N, Action.NARROWED),
        make_spec("MULTIPLE_OF_WIDENED", "multipleOf", "multipleOf now divides the old one: "
                  "more values are accepted.", _W, Action.WIDENED),
        make_spec("MULTIPLE_OF_CHANGED", "multipleOf", "multipleOf changed to a value neither "
                  "divides: values are accepted and rejected anew.", _X, Action.CHANGED),
        make_spec("UNIQUE_ITEMS_ADDED", "uniqueItems", "An array's items must now be unique: "
                  "senders repeating one are rejected.", _N, Action.ADDED),
        make_spec("UNIQUE_ITEMS_REMOVED", "uniqueItems", "An array's items may now repeat: "
                  "receivers that assumed a set may break.", _W, Action.REMOVED),
        make_spec("PATTERN_ADDED", "pattern", "A string must now match a pattern: senders may "
                  "send strings now rejected.", _N, Action.ADDED),
        make_spec("PATTERN_REMOVED", "pattern", "A string's pattern is gone: receivers may get "
                  "strings they do not parse.", _W, Action.REMOVED),
        make_spec("PATTERN_CHANGED", "pattern", "A string's pattern changed: strings are "
                  "accepted and rejected anew.", _X, Action.CHANGED),
        make_spec("FORMAT_ADDED", "format", "A string now has a format (asserted by some "
                  "validators): senders may send strings now rejected.", _N, Action.ADDED,
                  soft=True),
        make_spec("FORMAT_REMOVED", "format", "A string's format is gone: receivers may get "
                  "strings they do not parse.", _W, Action.REMOVED, soft=True),
        make_spec("FORMAT_NARROWED", "format", "A string's format is now a narrower one "
                  "(uri-reference -> uri).", _N, Action.NARROWED, soft=True),
        make_spec("FORMAT_WIDENED", "format", "A string's format is now a wider one "
                  "(uri -> uri-reference).", _W, Action.WIDENED, soft=True),
        make_spec("FORMAT_CHANGED", "format", "A string's format changed to an unrelated one "
                  "(date -> uuid).", _X, Action.CHANGED, soft=True),
    ]  # fmt: skip
    for keyword, what in (
        ("contentEncoding", "encoding (base64...)"),
        ("contentMediaType", "media type"),
        ("contentSchema", "schema of the decoded content"),
    ):
        s = stem(keyword)
        out += [
            make_spec(f"{s}_ADDED", keyword, f"A string now declares its content {what}: "
                      "senders may send content now rejected.", _N, Action.ADDED, soft=True),
            make_spec(f"{s}_REMOVED", keyword, f"A string no longer declares its content "
                      f"{what}: receivers may get content they do not decode.", _W,
                      Action.REMOVED, soft=True),
            make_spec(f"{s}_CHANGED", keyword, f"A string's content {what} changed: both "
                      "sides must agree anew.", _X, Action.CHANGED, soft=True),
        ]  # fmt: skip
    return out


SPECS: tuple[Spec, ...] = (*_bound_specs(), *_keyword_specs())
_BY_RULE = {spec.rule.value: spec for spec in SPECS}
KEYWORDS = frozenset(spec.keyword for spec in SPECS)


def _spec(rule: str) -> Spec:
    return _BY_RULE[rule]


def _shown(value: Any) -> str:
    return "unset" if value is None else repr(value) if isinstance(value, str) else str(value)


def _divides(small: float, large: float) -> bool:
    """``large`` is a whole multiple of ``small`` (to float precision: 0.3 of 0.1 counts)."""
    return round(large / small, 9).is_integer()


def _schema_shown(value: Any) -> str:
    return "unset" if value is None else "a schema"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def compare(old: dict[str, Any], new: dict[str, Any], path: str, recurse: Recurse) -> list[Delta]:
    """Every change of this module's keywords between two schema nodes at ``path``."""
    out: list[Delta] = []
    for keyword in (*LOWER, *UPPER):
        out += _bound(keyword, old.get(keyword), new.get(keyword), path)
    out += _multiple_of(old.get("multipleOf"), new.get("multipleOf"), path)
    was, now = old.get("uniqueItems") is True, new.get("uniqueItems") is True
    if was != now:
        rule = "UNIQUE_ITEMS_ADDED" if now else "UNIQUE_ITEMS_REMOVED"
        text = "items must be unique" if now else "items may repeat"
        out.append(of_spec(_spec(rule), path, f"{text} (uniqueItems {now}, was {was})", was, now))
    out += _text_keyword("pattern", old.get("pattern"), new.get("pattern"), path)
    out += _format(old.get("format"), new.get("format"), path)
    for keyword in ("contentEncoding", "contentMediaType", "contentSchema"):
        out += _text_keyword(keyword, old.get(keyword), new.get(keyword), path)
    return out


def _bound(keyword: str, was: Any, now: Any, path: str) -> list[Delta]:
    if was == now:
        return []
    s = stem(keyword)
    if was is None:
        action = "ADDED"
    elif now is None:
        action = "REMOVED"
    elif not (_number(was) and _number(now)):
        return []  # a draft-04 boolean exclusiveMinimum: left to the unknown-keyword rules
    else:
        action = "INCREASED" if now > was else "DECREASED"
    text = f"{keyword} {_shown(now)} (was {_shown(was)})"
    return [of_spec(_spec(f"{s}_{action}"), path, text, was, now)]


def _multiple_of(was: Any, now: Any, path: str) -> list[Delta]:
    if was == now:
        return []
    if was is None:
        rule = "MULTIPLE_OF_ADDED"
    elif now is None:
        rule = "MULTIPLE_OF_REMOVED"
    elif not (_number(was) and _number(now)) or not was or not now:
        rule = "MULTIPLE_OF_CHANGED"
    elif _divides(was, now):
        rule = "MULTIPLE_OF_NARROWED"
    elif _divides(now, was):
        rule = "MULTIPLE_OF_WIDENED"
    else:
        rule = "MULTIPLE_OF_CHANGED"
    text = f"multipleOf {_shown(now)} (was {_shown(was)})"
    return [of_spec(_spec(rule), path, text, was, now)]


def _text_keyword(keyword: str, was: Any, now: Any, path: str) -> list[Delta]:
    """Keywords whose values only compare equal or not: added, removed, changed."""
    if was == now:
        return []
    action = "ADDED" if was is None else "REMOVED" if now is None else "CHANGED"
    shown = _schema_shown if keyword == "contentSchema" else _shown
    text = f"{keyword} {shown(now)} (was {shown(was)})"
    return [of_spec(_spec(f"{stem(keyword)}_{action}"), path, text, was, now)]


def _format(was: Any, now: Any, path: str) -> list[Delta]:
    if was == now:
        return []
    if was is None:
        rule = "FORMAT_ADDED"
    elif now is None:
        rule = "FORMAT_REMOVED"
    elif (now, was) in FORMAT_SUBSETS:
        rule = "FORMAT_NARROWED"
    elif (was, now) in FORMAT_SUBSETS:
        rule = "FORMAT_WIDENED"
    else:
        rule = "FORMAT_CHANGED"
    text = f"format {_shown(now)} (was {_shown(was)})"
    return [of_spec(_spec(rule), path, text, was, now)]
