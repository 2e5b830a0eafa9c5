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
from typing import Any

from ..ir import RevisionIR
from ..ir.refs import ref_name
from ..jsonvalues import is_object
from . import applicators, constraints, containers, rules, values
from .deltas import Delta, delta, fold, fold_variance
from .rename import THRESHOLD, similarity
from .rules import FOLDED_RULE, Impact, Rule, Variance
from .shapes import (
    ANNOTATIONS,
    UNION_KEYS,
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
from .values import is_null

ALL_TYPES = frozenset({"object", "array", "string", "number", "boolean", "null"})
# Keywords some rule reads (this module's, the families'); any other is an unknown keyword.
KNOWN_KEYWORDS = (
    frozenset({"$ref", "type", "items", "properties", "required", "additionalProperties"})
    | {"allOf", "$defs", "definitions", *UNION_KEYS}
    | constraints.KEYWORDS
    | containers.KEYWORDS
    | applicators.KEYWORDS
    | values.KEYWORDS
    | ANNOTATIONS
)
# Rules that only document: left out of the fold at a node that changed identity.
_DOCUMENTATION = frozenset(
    {Rule.DESCRIPTION_CHANGED, Rule.TITLE_CHANGED, Rule.EXAMPLES_CHANGED, Rule.COMMENT_CHANGED}
)
_SUMMARY_ITEMS = 3

__all__ = ["DefinitionComparer", "Delta", "fold"]


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
        if old == new and ref_name(old) is None:
            return []  # identical inline schemas: references inside are compared by name
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
        inner = [d for d in inner if d.rule not in _DOCUMENTATION]
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
        if not self.descriptions or not is_object(old) or not is_object(new):
            return []
        out = [
            delta(Rule.DESCRIPTION_CHANGED, path, f"{key} changed", old.get(key), new.get(key))
            for key in ("description", "markdownDescription")
            if old.get(key) != new.get(key)
        ]
        return out + values.documentation(old, new, path)

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
        if not is_object(node):
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
        if kinds is None or not is_object(node):
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
                delta(
                    Rule.TYPE_NARROWED,
                    path,
                    f"now {describe(new)} (was any value)",
                    "any",
                    describe(new),
                )
            ]
        if new_any:
            return [
                delta(
                    Rule.TYPE_WIDENED,
                    path,
                    f"now any value (was {describe(old)})",
                    describe(old),
                    "any",
                )
            ]
        if union_members(old) is not None or union_members(new) is not None:
            return self._union(old, new, path)
        if not is_object(old) or not is_object(new):
            return [delta(Rule.TYPE_CHANGED, path, "schema changed", describe(old), describe(new))]
        return self._value(old, new, path)

    def _value(self, old: dict[str, Any], new: dict[str, Any], path: str) -> list[Delta]:
        out = values.const_and_enum(old, new, path)
        type_change = self._types(old, new, path)
        out += type_change
        if any(d.rule is Rule.TYPE_CHANGED for d in type_change):
            return out
        out += self._keywords(old, new, path)
        out += self._items(old, new, path)
        if any(k in d for d in (old, new) for k in ("properties", "additionalProperties")):
            out += self._object(old, new, path)
        return out

    def _types(self, old: dict[str, Any], new: dict[str, Any], path: str) -> list[Delta]:
        """The ``type`` keyword: added, removed, nullable or not, widened, narrowed, changed."""
        old_types, new_types = types_of(old), types_of(new)
        if old_types == new_types:
            return []
        if old_types is None or new_types is None:
            added = old_types is None
            kinds = "|".join(sorted((new_types if added else old_types) or ()))
            rule = "TYPE_ADDED" if added else "TYPE_REMOVED"
            text = f"type {kinds} {'added' if added else 'removed'}"
            return [values.spec_delta(rule, path, text, None if added else kinds,
                                      kinds if added else None)]  # fmt: skip
        if old_types ^ new_types == frozenset({"null"}) and old_types - {"null"}:
            added = "null" in new_types
            olds, news = "|".join(sorted(old_types)), "|".join(sorted(new_types))
            return [values.nullable(added, path, f"type {news}, was {olds}", olds, news)]
        wider, narrower = covers(new_types, old_types), covers(old_types, new_types)
        text = f"type {'|'.join(sorted(new_types))} (was {'|'.join(sorted(old_types))})"
        olds, news = "|".join(sorted(old_types)), "|".join(sorted(new_types))
        if wider and not narrower:
            return [delta(Rule.TYPE_WIDENED, path, text, olds, news)]
        if narrower and not wider:
            return [delta(Rule.TYPE_NARROWED, path, text, olds, news)]
        if wider and narrower:
            return []  # the same values (number and number|integer)
        return [delta(Rule.TYPE_CHANGED, path, text, olds, news)]

    def _keywords(self, old: dict[str, Any], new: dict[str, Any], path: str) -> list[Delta]:
        """Every keyword family, then any keyword no rule knows."""
        out = constraints.compare(old, new, path, self._node)
        out += containers.compare(old, new, path, self._node)
        out += applicators.compare(old, new, path, self._node)
        out += values.compare(old, new, path)
        return out + values.unknown(old, new, path, KNOWN_KEYWORDS)

    def _items(self, old: dict[str, Any], new: dict[str, Any], path: str) -> list[Delta]:
        """An array's items schema (tuples and ``items: false`` are ``containers``' to judge)."""
        was, now = old.get("items"), new.get("items")
        if was is None and now is None:
            return []
        if not all(is_object(v) or v is None for v in (was, now)):
            return []
        if "prefixItems" in old or "prefixItems" in new:
            return []  # items is then the rest of a tuple: compared by containers
        if was is None or now is None:
            added = was is None
            shown = describe(now if added else was)
            if self._accepts_everything(
                now if added else was, self.new_defs if added else self.old_defs
            ):
                return []
            rule = "ITEMS_ADDED" if added else "ITEMS_REMOVED"
            text = f"items {shown} {'added' if added else 'removed'}"
            return [values.spec_delta(rule, path, text, None if added else shown,
                                      shown if added else None)]  # fmt: skip
        return self._node(was, now, f"{path}[]")

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
                out.append(delta(Rule.PROPERTY_REQUIRED_ADDED, where, text, False, True))
            elif prop in old_required and prop not in new_required:
                text = f"property '{prop}' is now optional"
                out.append(delta(Rule.PROPERTY_REQUIRED_REMOVED, where, text, True, False))
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
            return [delta(Rule.ADDITIONAL_PROPERTIES_CLOSED, path, text, _extra_label(was), False)]
        if was is False and now is not False:
            text = "now accepts unknown properties"
            return [delta(Rule.ADDITIONAL_PROPERTIES_OPENED, path, text, False, _extra_label(now))]
        if was == "open" or now == "open":
            added = was == "open"
            shown = _extra_label(now if added else was)
            rule = (
                "ADDITIONAL_PROPERTIES_SCHEMA_ADDED"
                if added
                else "ADDITIONAL_PROPERTIES_SCHEMA_REMOVED"
            )
            verb = "must now be" if added else "are no longer constrained to"
            text = f"unknown properties {verb} {shown}"
            return [values.spec_delta(rule, path, text, "any" if added else shown,
                                      shown if added else "any")]  # fmt: skip
        return self._node(was, now, f"{path}{{}}")

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
            if is_object(old) and is_object(new):
                deltas += self._keywords(_no_members(old), _no_members(new), path)
                deltas += applicators.union_kind(old, new, path)
            return deltas
        # An object became a union or the reverse: one delta, with the member changes folded in.
        became = "a union" if new_members is not None else "no longer a union"
        inner = [d for d in deltas if d.rule not in _DOCUMENTATION]
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
        if any(is_null(m) for m in left):
            out.append(values.nullable(False, path, "union member null removed", "null", None))
        if any(is_null(m) for m in right):
            out.append(values.nullable(True, path, "union member null added", None, "null"))
        left = [m for m in left if not is_null(m)]
        right = [m for m in right if not is_null(m)]
        for member in left:
            text = f"union member {describe(member)} removed"
            out.append(delta(Rule.UNION_MEMBER_REMOVED, path, text, describe(member), None))
        for member in right:
            text = f"union member {describe(member)} added"
            out.append(delta(Rule.UNION_MEMBER_ADDED, path, text, None, describe(member)))
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


def _no_members(node: dict[str, Any]) -> dict[str, Any]:
    """A union node without its members: the keywords beside them (``anyOf`` and ``oneOf`` are
    compared as members; which of the two it is, by ``applicators.union_kind``)."""
    return {k: v for k, v in node.items() if k not in UNION_KEYS}


def _is_scalar(member: Any) -> bool:
    kinds = types_of(member)
    return (
        ref_name(member) is None
        and kinds is not None
        and not kinds & {"object", "array"}
        and "const" not in member
        and "enum" not in member
    )
