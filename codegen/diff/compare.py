"""Compare one definition of the old revision with its counterpart in the new one.

The comparison walks both normalised schemas side by side and reports what a value may be now
that it could not before, and the reverse, as ``Delta``s with an ``Impact`` from ``rules``. It
knows nothing of clients and servers: ``engine`` adds who sends and receives each definition.

Where a node changes identity (a ``$ref`` to another definition, an inline object that became a
reference, an object that became a union) the two shapes are compared structurally and the result
is folded into one delta at that place, so a maintainer reads "now ``PaginatedRequestParams``
instead of ``RequestParams``: property 'cursor' added (optional)" rather than a list of details.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..ir import RevisionIR
from ..ir.refs import ref_name
from . import rules
from .rename import THRESHOLD, similarity
from .rules import FOLDED_RULE, NO_IMPACT, Impact, Rule, Variance
from .shapes import (
    ANNOTATIONS,
    LOWER_BOUNDS,
    UNION_KEYS,
    UPPER_BOUNDS,
    covers,
    describe,
    effective,
    features,
    is_any,
    is_open,
    literal,
    resolve,
    signature,
    types_of,
    union_members,
)

ALL_TYPES = frozenset({"object", "array", "string", "number", "boolean", "null"})
# Keywords this module compares itself; any other constraint that differs is a TYPE_CHANGED.
_HANDLED = frozenset(
    {"$ref", "type", "const", "enum", "format", "pattern", "items", "properties", "required"}
    | {"additionalProperties", "allOf", *UNION_KEYS}
    | LOWER_BOUNDS
    | UPPER_BOUNDS
)
_SUMMARY_ITEMS = 3


@dataclass(frozen=True)
class Delta:
    """One difference inside a definition, at ``path`` (``Def.prop[]{}`` style)."""

    rule: Rule
    path: str
    what: str
    impact: Impact
    old: Any = None
    new: Any = None
    variance: Variance = Variance.NONE


def _delta(rule: Rule, path: str, what: str, old: Any = None, new: Any = None) -> Delta:
    return Delta(rule, path, what, rules.impact(rule), old, new, rules.variance(rule))


def fold(deltas: list[Delta]) -> Impact:
    """The combined impact of several deltas (no impact for none)."""
    total = NO_IMPACT
    for delta in deltas:
        total = total.merge(delta.impact)
    return total


def fold_variance(deltas: list[Delta]) -> Variance:
    total = Variance.NONE
    for delta in deltas:
        total = total | delta.variance
    return total


def _summary(deltas: list[Delta]) -> str:
    shown = "; ".join(d.what for d in deltas[:_SUMMARY_ITEMS])
    more = len(deltas) - _SUMMARY_ITEMS
    return shown + (f"; and {more} more" if more > 0 else "")


class DefinitionComparer:
    """Compares definitions of two revisions; memoises structural comparisons of reference pairs."""

    def __init__(
        self,
        old_defs: Mapping[str, Any],
        new_defs: Mapping[str, Any],
        renames: Mapping[str, str],
        include_descriptions: bool = False,
        invented: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset()),
    ) -> None:
        self.old_defs = dict(old_defs)
        self.new_defs = dict(new_defs)
        self.renames = renames
        self.descriptions = include_descriptions
        self._stable = frozenset(self.old_defs) & frozenset(self.new_defs)
        self._pairs: dict[tuple[str, str], list[Delta]] = {}
        self._everything: dict[tuple[int, str], bool] = {}
        self._visiting: set[tuple[int, str]] = set()
        self._old_invented, self._new_invented = invented

    @classmethod
    def of_revisions(
        cls,
        old: RevisionIR,
        new: RevisionIR,
        renames: Mapping[str, str],
        include_descriptions: bool = False,
    ) -> DefinitionComparer:
        """The comparer of two revisions' definitions (the hoisted ones known as invented)."""
        return cls(
            {name: d.schema for name, d in old.definitions.items()},
            {name: d.schema for name, d in new.definitions.items()},
            renames,
            include_descriptions,
            (
                frozenset(n for n, d in old.definitions.items() if d.hoisted),
                frozenset(n for n, d in new.definitions.items() if d.hoisted),
            ),
        )

    # -- entry point -------------------------------------------------------------------------

    def definition(
        self, old_name: str, new_name: str, *, own_description: bool = True
    ) -> list[Delta]:
        """Every difference between ``old_name`` (old revision) and ``new_name`` (new revision).

        ``own_description`` is False for hoisted definitions, whose description duplicates the one
        at the place they were hoisted from (reported there).
        """
        old = effective(self.old_defs[old_name], self.old_defs)
        new = effective(self.new_defs[new_name], self.new_defs)
        out = self._annotations(old, new, new_name) if own_description else []
        return out + self._node(old, new, new_name, annotate=False)

    def schemas(self, old: Any, new: Any, path: str) -> list[Delta]:
        """Every difference between two schemas standing alone (a tool's ``inputSchema``, with
        its own ``$defs`` as this comparer's definitions), reported under ``path``."""
        return self._node(effective(old, self.old_defs), effective(new, self.new_defs), path)

    def members(self, old: list[str], new: list[str], path: str) -> list[Delta]:
        """Compare two lists of definition names as if they were the members of a union."""
        return self._members(
            [{"$ref": f"#/$defs/{n}"} for n in old], [{"$ref": f"#/$defs/{n}"} for n in new], path
        )

    # -- nodes -------------------------------------------------------------------------------

    def _node(self, old: Any, new: Any, path: str, annotate: bool = True) -> list[Delta]:
        out = self._annotations(old, new, path) if annotate else []
        old_ref, new_ref = ref_name(old), ref_name(new)
        if old_ref is not None and new_ref is not None:
            if self.renames.get(old_ref, old_ref) == new_ref:
                return out
            pair = self._pair(old_ref, new_ref)
            return [*out, self._refold(pair, path, old, new)]
        if old_ref is not None or new_ref is not None:
            old_shape, new_shape = self._old(old), self._new(new)
            target, other = (new_shape, old) if new_ref is not None else (old_shape, new)
            if union_members(other) is not None and union_members(target) is None:
                return out + self._union(old, new, path)  # the reference is one member of the other
            inner = self._structural(old_shape, new_shape, path)
            return [*out, self._refold(inner, path, old, new)]
        return out + self._structural(old, new, path)

    def _old(self, node: Any) -> Any:
        return effective(resolve(node, self.old_defs), self.old_defs)

    def _new(self, node: Any) -> Any:
        return effective(resolve(node, self.new_defs), self.new_defs)

    def _pair(self, old_name: str, new_name: str) -> list[Delta]:
        key = (old_name, new_name)
        if key not in self._pairs:
            self._pairs[key] = []  # a cycle back to this pair compares as equal
            old = effective(self.old_defs.get(old_name, {}), self.old_defs)
            new = effective(self.new_defs.get(new_name, {}), self.new_defs)
            self._pairs[key] = self._structural(old, new, new_name)
        return self._pairs[key]

    def _refold(self, inner: list[Delta], path: str, old: Any, new: Any) -> Delta:
        """Fold the differences of two shapes into one delta at a node whose identity changed."""
        inner = [d for d in inner if d.rule is not Rule.DESCRIPTION_CHANGED]
        total, variance = fold(inner), fold_variance(inner)
        was = self._describe(old, self._old_invented)
        now = self._describe(new, self._new_invented)
        detail = _summary(inner) if inner else "same shape"
        what = f"now {now} instead of {was}: {detail}"
        impact = Impact(total.sender, total.receiver, True)
        return Delta(FOLDED_RULE[variance], path, what, impact, was, now, variance)

    @staticmethod
    def _describe(node: Any, invented: frozenset[str]) -> str:
        """Like ``describe``, but a name the generator invented reads as what it is."""
        return "inline object" if ref_name(node) in invented else describe(node)

    def _annotations(self, old: Any, new: Any, path: str) -> list[Delta]:
        if not self.descriptions or not isinstance(old, dict) or not isinstance(new, dict):
            return []
        out = []
        for key in sorted(ANNOTATIONS):
            if old.get(key) != new.get(key):
                out.append(
                    _delta(
                        Rule.DESCRIPTION_CHANGED, path, f"{key} changed", old.get(key), new.get(key)
                    )
                )
        return out

    # -- structure ---------------------------------------------------------------------------

    def _accepts_everything(self, node: Any, defs: Mapping[str, Any]) -> bool:
        """True for a schema every JSON value satisfies (``{}``, or a union like ``JSONValue``)."""
        key = (id(defs), literal(node))
        if key in self._everything:
            return self._everything[key]
        if key in self._visiting:
            return True  # a recursive union (JSONValue) is judged by its other members
        self._visiting.add(key)
        try:
            result = self._covers_all(node, defs)
        finally:
            self._visiting.discard(key)
        if not self._visiting:  # only answers that assumed nothing about a cycle are kept
            self._everything[key] = result
        return result

    def _covers_all(self, node: Any, defs: Mapping[str, Any]) -> bool:
        if node is True or is_any(node):
            return True
        if not isinstance(node, dict):
            return False
        target = ref_name(node)
        if target is not None:
            return target in defs and self._accepts_everything(defs[target], defs)
        members = union_members(node)
        if members is not None:
            kinds: set[str] = set()
            for member in members:
                if self._accepts_everything(member, defs):
                    return True
                kinds |= self._plain_types(member, defs)
            return covers(frozenset(kinds), ALL_TYPES)
        return covers(self._plain_types(node, defs), ALL_TYPES)

    def _plain_types(self, node: Any, defs: Mapping[str, Any]) -> frozenset[str]:
        """The types a node allows whole (an array of anything, an open map of anything...)."""
        node = resolve(node, defs)
        kinds = types_of(node)
        if kinds is None or not isinstance(node, dict):
            return frozenset()
        extra = set(node) - ANNOTATIONS - {"type", "items", "additionalProperties", "properties"}
        if extra or node.get("properties"):
            return frozenset()
        if "array" in kinds and not self._accepts_everything(node.get("items", {}), defs):
            kinds = kinds - {"array"}
        additional = node.get("additionalProperties")
        if "object" in kinds and not (
            is_open(additional) or self._accepts_everything(additional, defs)
        ):
            kinds = kinds - {"object"}
        return kinds

    def _structural(self, old: Any, new: Any, path: str) -> list[Delta]:
        old_any = self._accepts_everything(old, self.old_defs)
        new_any = self._accepts_everything(new, self.new_defs)
        if old_any and new_any:
            return []
        if old_any:
            return [
                _delta(
                    Rule.TYPE_NARROWED,
                    path,
                    f"now {describe(new)} (was any value)",
                    "any",
                    describe(new),
                )
            ]
        if new_any:
            return [
                _delta(
                    Rule.TYPE_WIDENED,
                    path,
                    f"now any value (was {describe(old)})",
                    describe(old),
                    "any",
                )
            ]
        if union_members(old) is not None or union_members(new) is not None:
            return self._union(old, new, path)
        if not isinstance(old, dict) or not isinstance(new, dict):
            return [_delta(Rule.TYPE_CHANGED, path, "schema changed", describe(old), describe(new))]
        return self._value(old, new, path)

    def _value(self, old: dict[str, Any], new: dict[str, Any], path: str) -> list[Delta]:
        out = self._const_and_enum(old, new, path)
        old_types, new_types = types_of(old), types_of(new)
        if old_types != new_types:
            was = old_types if old_types is not None else ALL_TYPES
            now = new_types if new_types is not None else ALL_TYPES
            wider, narrower = covers(now, was), covers(was, now)
            text = f"type {'|'.join(sorted(now))} (was {'|'.join(sorted(was))})"
            olds, news = "|".join(sorted(was)), "|".join(sorted(now))
            if wider and not narrower:
                out.append(_delta(Rule.TYPE_WIDENED, path, text, olds, news))
            elif narrower and not wider:
                out.append(_delta(Rule.TYPE_NARROWED, path, text, olds, news))
            elif not wider:
                out.append(_delta(Rule.TYPE_CHANGED, path, text, olds, news))
                return out
        out += self._keywords(old, new, path)
        if "items" in old or "items" in new:
            out += self._node(old.get("items", {}), new.get("items", {}), f"{path}[]")
        if any(k in d for d in (old, new) for k in ("properties", "additionalProperties")):
            out += self._object(old, new, path)
        return out

    def _const_and_enum(self, old: dict[str, Any], new: dict[str, Any], path: str) -> list[Delta]:
        out: list[Delta] = []
        if "const" in old and "const" in new:
            if old["const"] != new["const"]:
                text = f"constant {literal(new['const'])} (was {literal(old['const'])})"
                out.append(_delta(Rule.CONST_CHANGED, path, text, old["const"], new["const"]))
        elif "const" in old:
            text = f"no longer fixed to {literal(old['const'])}"
            out.append(_delta(Rule.TYPE_WIDENED, path, text, old["const"], describe(new)))
        elif "const" in new:
            text = f"now fixed to {literal(new['const'])}"
            out.append(_delta(Rule.TYPE_NARROWED, path, text, describe(old), new["const"]))
        old_enum, new_enum = old.get("enum"), new.get("enum")
        if isinstance(old_enum, list) and isinstance(new_enum, list):
            for value in new_enum:
                if value not in old_enum:
                    text = f"enum value {literal(value)} added"
                    out.append(_delta(Rule.ENUM_VALUE_ADDED, path, text, None, value))
            for value in old_enum:
                if value not in new_enum:
                    text = f"enum value {literal(value)} removed"
                    out.append(_delta(Rule.ENUM_VALUE_REMOVED, path, text, value, None))
        elif isinstance(old_enum, list):
            text = f"no longer restricted to {describe(old)}"
            out.append(_delta(Rule.TYPE_WIDENED, path, text, old_enum, describe(new)))
        elif isinstance(new_enum, list):
            text = f"now restricted to {describe(new)}"
            out.append(_delta(Rule.TYPE_NARROWED, path, text, describe(old), new_enum))
        return out

    def _keywords(self, old: dict[str, Any], new: dict[str, Any], path: str) -> list[Delta]:
        """Formats, patterns, bounds, and any keyword this module does not otherwise know."""
        out: list[Delta] = []
        for key in ("format", "pattern"):
            was, now = old.get(key), new.get(key)
            if was == now:
                continue
            if was is None:
                rule = Rule.TYPE_NARROWED
            elif now is None:
                rule = Rule.TYPE_WIDENED
            else:
                rule = Rule.TYPE_CHANGED
            out.append(_delta(rule, path, f"{key} {now!r} (was {was!r})", was, now))
        for key in sorted(LOWER_BOUNDS | UPPER_BOUNDS):
            was, now = old.get(key), new.get(key)
            if was == now:
                continue
            if was is None:
                rule = Rule.TYPE_NARROWED
            elif now is None:
                rule = Rule.TYPE_WIDENED
            else:
                relaxed = now < was if key in LOWER_BOUNDS else now > was
                rule = Rule.TYPE_WIDENED if relaxed else Rule.TYPE_NARROWED
            text = f"{key} {_bound(now)} (was {_bound(was)})"
            out.append(_delta(rule, path, text, was, now))
        for key in sorted((set(old) | set(new)) - _HANDLED - ANNOTATIONS):
            if old.get(key) != new.get(key):
                text = f"keyword '{key}' changed"
                out.append(_delta(Rule.TYPE_CHANGED, path, text, old.get(key), new.get(key)))
        return out

    # -- objects -----------------------------------------------------------------------------

    def _object(self, old: dict[str, Any], new: dict[str, Any], path: str) -> list[Delta]:
        out: list[Delta] = []
        old_props: dict[str, Any] = old.get("properties") or {}
        new_props: dict[str, Any] = new.get("properties") or {}
        old_required = set(old.get("required", []))
        new_required = set(new.get("required", []))
        old_closed = old.get("additionalProperties") is False
        new_closed = new.get("additionalProperties") is False
        for prop in sorted(old_props.keys() - new_props.keys()):
            required = prop in old_required
            kind = "required" if required else "optional"
            shown = self._describe(old_props[prop], self._old_invented)
            out.append(
                Delta(
                    Rule.PROPERTY_REMOVED,
                    f"{path}.{prop}",
                    f"property '{prop}' removed ({kind}, {shown})",
                    rules.property_removed(required=required, closed=new_closed),
                    describe(old_props[prop]),
                    None,
                    rules.variance(Rule.PROPERTY_REMOVED, required=required),
                )
            )
        for prop in sorted(new_props.keys() - old_props.keys()):
            required = prop in new_required
            kind = "required" if required else "optional"
            shown = self._describe(new_props[prop], self._new_invented)
            out.append(
                Delta(
                    Rule.PROPERTY_ADDED,
                    f"{path}.{prop}",
                    f"property '{prop}' added ({kind}, {shown})",
                    rules.property_added(required=required, closed=old_closed),
                    None,
                    describe(new_props[prop]),
                    rules.variance(Rule.PROPERTY_ADDED, required=required),
                )
            )
        for prop in sorted(old_props.keys() & new_props.keys()):
            where = f"{path}.{prop}"
            if prop in new_required and prop not in old_required:
                text = f"property '{prop}' is now required"
                out.append(_delta(Rule.PROPERTY_REQUIRED_ADDED, where, text, False, True))
            elif prop in old_required and prop not in new_required:
                text = f"property '{prop}' is now optional"
                out.append(_delta(Rule.PROPERTY_REQUIRED_REMOVED, where, text, True, False))
            out += self._node(old_props[prop], new_props[prop], where)
        return out + self._additional(old, new, path)

    def _additional(self, old: dict[str, Any], new: dict[str, Any], path: str) -> list[Delta]:
        """Unknown properties: open (absent, true, {}, any JSON), closed (false), or a value schema."""
        was = self._extra(old.get("additionalProperties"), self.old_defs)
        now = self._extra(new.get("additionalProperties"), self.new_defs)
        if was == now:
            return []
        if now is False and was is not False:
            text = "no longer accepts unknown properties"
            return [_delta(Rule.ADDITIONAL_PROPERTIES_CLOSED, path, text, _extra_label(was), False)]
        if was is False and now is not False:
            text = "now accepts unknown properties"
            return [_delta(Rule.ADDITIONAL_PROPERTIES_OPENED, path, text, False, _extra_label(now))]
        return self._node({} if was == "open" else was, {} if now == "open" else now, f"{path}{{}}")

    def _extra(self, value: Any, defs: Mapping[str, Any]) -> Any:
        if value is False:
            return False
        if is_open(value) or self._accepts_everything(value, defs):
            return "open"
        return value

    # -- unions ------------------------------------------------------------------------------

    def _union(self, old: Any, new: Any, path: str) -> list[Delta]:
        old_members = union_members(old)
        new_members = union_members(new)
        deltas = self._members(
            [old] if old_members is None else old_members,
            [new] if new_members is None else new_members,
            path,
        )
        if old_members is not None and new_members is not None:
            return deltas
        # An object became a union or the reverse: one delta, with the member changes folded in.
        became = "a union" if new_members is not None else "no longer a union"
        inner = [d for d in deltas if d.rule is not Rule.DESCRIPTION_CHANGED]
        total, variance = fold(inner), fold_variance(inner)
        if variance is Variance.NONE:
            variance = Variance.WIDEN if new_members is not None else Variance.NARROW
        rule = FOLDED_RULE[variance]
        detail = _summary(inner) if inner else "same members"
        impact = Impact(total.sender, total.receiver, True)
        was, now = describe(old), describe(new)
        return [Delta(rule, path, f"now {became}: {now} ({detail})", impact, was, now, variance)]

    def _member_key(self, member: Any, renamed: bool) -> tuple[str, str]:
        target = ref_name(member)
        if target is not None:
            return ("ref", self.renames.get(target, target) if renamed else target)
        return ("inline", signature(member, frozenset()))

    def _members(self, old: list[Any], new: list[Any], path: str) -> list[Delta]:
        pairs: list[tuple[Any, Any]] = []
        left = list(old)
        right = list(new)
        for member in list(left):
            key = self._member_key(member, renamed=True)
            match = next((m for m in right if self._member_key(m, renamed=False) == key), None)
            if match is not None:
                pairs.append((member, match))
                left.remove(member)
                right.remove(match)
        pairs += self._similar_members(left, right)
        out: list[Delta] = []
        for old_member, new_member in pairs:
            out += self._node(old_member, new_member, path)
        for member in left:
            text = f"union member {describe(member)} removed"
            out.append(_delta(Rule.UNION_MEMBER_REMOVED, path, text, describe(member), None))
        for member in right:
            text = f"union member {describe(member)} added"
            out.append(_delta(Rule.UNION_MEMBER_ADDED, path, text, None, describe(member)))
        return out

    def _similar_members(self, left: list[Any], right: list[Any]) -> list[tuple[Any, Any]]:
        """Pair leftover members of the same core shape (required properties); removes the paired
        ones from both lists. A member that only gained optional fields continues the old one."""
        pairs: list[tuple[Any, Any]] = []
        scalar = [m for m in left if _is_scalar(m)], [m for m in right if _is_scalar(m)]
        if len(scalar[0]) == 1 and len(scalar[1]) == 1:
            pairs.append((scalar[0][0], scalar[1][0]))
        shape_old = [features(self._old(m), self._stable, core=True) for m in left]
        shape_new = [features(self._new(m), self._stable, core=True) for m in right]
        taken_old = {id(p[0]) for p in pairs}
        taken_new = {id(p[1]) for p in pairs}
        scores = sorted(
            (
                (similarity(a, b), i, j)
                for i, a in enumerate(shape_old)
                for j, b in enumerate(shape_new)
                if id(left[i]) not in taken_old and id(right[j]) not in taken_new
            ),
            key=lambda t: (-t[0], t[1], t[2]),
        )
        for score, i, j in scores:
            if score < THRESHOLD:
                break
            if id(left[i]) in taken_old or id(right[j]) in taken_new:
                continue
            taken_old.add(id(left[i]))
            taken_new.add(id(right[j]))
            pairs.append((left[i], right[j]))
        left[:] = [m for m in left if id(m) not in taken_old]
        right[:] = [m for m in right if id(m) not in taken_new]
        return pairs


def _extra_label(extra: Any) -> Any:
    """What ``_extra`` returned, for JSON: ``"any"`` when open, else the value schema in words."""
    return "any" if extra == "open" else describe(extra)


def _bound(value: Any) -> str:
    return "unset" if value is None else str(value)


def _is_scalar(member: Any) -> bool:
    kinds = types_of(member)
    return (
        ref_name(member) is None
        and kinds is not None
        and not kinds & {"object", "array"}
        and "const" not in member
        and "enum" not in member
    )
