"""Put the comparisons together: ``diff_revisions(old, new)`` -> judged, ordered changes.

Also where overlaps are removed, so every fact is reported once: a new capability flag is a
``CAPABILITY_ADDED`` rather than also a ``PROPERTY_ADDED``, and what happens to ``ClientRequest``
(and the other message unions the method table is read from) is judged by the method rules: a
member gained or lost is still reported as such (``UNION_MEMBER_ADDED ServerRequest``, the change a
reader of the bindings looks for), compatible on the wire, naming the method change beside it.

And one correction the schema needs: a definition sent as a JSON-RPC message (a member of
``ClientRequest``, ``ServerRequest``, ``ClientNotification`` or ``ServerNotification`` in both
revisions) has the envelope fields (``jsonrpc``, ``id``) on the wire whether or not the schema
lists them, so listing or unlisting them there only concerns the bindings (2025-11-25 lists them).

Names the generator invented (definitions hoisted from inline objects, ``CallToolRequestParamsMeta``)
are not the schema's: their additions and removals are left to the owner's change, and the changes
inside them are reported at the owner's path (``CallToolRequestParams._meta.progressToken``). The
message unions are never matched as renames: ``ServerRequest`` -> ``InputRequest`` is a change of
meaning, reported per method (``methods.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from ..ir import Direction, RevisionIR
from ..ir.methods import NOTIFICATION_UNIONS, REQUEST_UNIONS, message_members
from . import rules
from .capabilities import capability_sites, compare_capabilities
from .compare import DefinitionComparer, Delta
from .methods import compare_methods, compare_notifications
from .model import SUBJECT_ORDER, Change, Finding, Subject, judge
from .receivers import Flows, flows
from .rename import match_renames
from .rules import Impact, Rule, Severity
from .shapes import describe

MESSAGE_UNIONS = frozenset(name for name, _ in (*REQUEST_UNIONS, *NOTIFICATION_UNIONS))
WIRE_UNIONS = ("ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification")
ENVELOPES = ("JSONRPCRequest", "JSONRPCNotification")
_MEMBER_RULES = frozenset({Rule.UNION_MEMBER_ADDED, Rule.UNION_MEMBER_REMOVED})
_PROPERTY_RULES = frozenset(
    {
        Rule.PROPERTY_ADDED,
        Rule.PROPERTY_REMOVED,
        Rule.PROPERTY_REQUIRED_ADDED,
        Rule.PROPERTY_REQUIRED_REMOVED,
    }
)


def diff_revisions(
    old: RevisionIR,
    new: RevisionIR,
    include_descriptions: bool = False,
    extra: Iterable[Finding] = (),
) -> list[Change]:
    """Every change from ``old`` to ``new`` (plus the ``extra`` findings read from the documents),
    judged and ordered by subject (``Subject`` order), then by name, worst first."""
    renames = definition_renames(old, new)
    comparer = DefinitionComparer.of_revisions(old, new, renames, include_descriptions)
    findings = [
        *extra,
        *compare_methods(old, new, comparer),
        *compare_notifications(old, new),
        *compare_capabilities(old, new),
        *_Definitions(old, new, renames, comparer).findings(),
    ]
    changes = [
        judge(f) for f in findings if include_descriptions or f.rule is not Rule.DESCRIPTION_CHANGED
    ]
    return sorted(changes, key=_order)


def definition_renames(old: RevisionIR, new: RevisionIR) -> dict[str, str]:
    """The renames the diff reports: never a message union (a change of meaning, not a name)."""
    return {
        o: n
        for o, n in match_renames(old, new).items()
        if o not in MESSAGE_UNIONS and n not in MESSAGE_UNIONS
    }


def _order(change: Change) -> tuple[int, str, int, str, str]:
    return (
        SUBJECT_ORDER[change.subject],
        change.name,
        -change.severity.rank,
        change.path,
        change.rule.value,
    )


_POINTER_STEP = re.compile(
    r"/(properties/([^/]+)|items|additionalProperties|(?:anyOf|oneOf)/(\d+)|allOf/\d+)"
)


def owner_path(origin: str) -> str:
    """``#/$defs/A/properties/b/items`` -> ``A.b[]``: where a hoisted object sits in its owner."""
    rest = origin.removeprefix("#/$defs/")
    root, _, tail = rest.partition("/")
    path = root
    for match in _POINTER_STEP.finditer("/" + tail if tail else ""):
        step, prop, index = match.groups()
        if prop is not None:
            path += f".{prop.replace('~1', '/').replace('~0', '~')}"
        elif step == "items":
            path += "[]"
        elif step == "additionalProperties":
            path += "{}"
        elif index is not None:
            path += f"|{index}"
    return path


def _method_names(ir: RevisionIR) -> dict[str, str]:
    """Request or notification definition -> its method name."""
    names = {m.request: m.method for m in ir.methods}
    names.update((n.notification, n.method) for n in ir.notifications)
    return names


def _wire_messages(ir: RevisionIR) -> frozenset[str]:
    schemas = {name: d.schema for name, d in ir.definitions.items()}
    return frozenset(member for union in WIRE_UNIONS for member in message_members(schemas, union))


def _envelope_fields(*irs: RevisionIR) -> frozenset[str]:
    fields: set[str] = set()
    for ir in irs:
        for name in ENVELOPES:
            if name in ir.definitions:
                fields.update(ir.definitions[name].schema.get("required", []))
    return frozenset(fields - {"method", "params"})


@dataclass
class _Definitions:
    """The definition-level findings of one diff, with the overlaps above removed."""

    old: RevisionIR
    new: RevisionIR
    renames: dict[str, str]
    comparer: DefinitionComparer

    def __post_init__(self) -> None:
        self.old_flows: Flows = flows(self.old)
        self.new_flows: Flows = flows(self.new)
        self.old_sites = capability_sites(self.old)
        self.new_sites = capability_sites(self.new)
        self.messages = _wire_messages(self.old) & _wire_messages(self.new)
        self.envelope = _envelope_fields(self.old, self.new)
        self.methods = _method_names(self.old) | _method_names(self.new)

    def findings(self) -> list[Finding]:
        out: list[Finding] = []
        targets = set(self.renames.values())
        for name in sorted(self.old.definitions.keys() | self.new.definitions.keys()):
            if name in self.old.definitions and name in self.new.definitions:
                out += self._pair(name, name)
            elif name in self.renames:
                out += self._renamed(name, self.renames[name])
            elif self._invented(name):
                continue
            elif name in self.old.definitions:
                kind = describe(self.old.definitions[name].schema)
                what = f"definition {name} removed ({kind})"
                out.append(self._whole(Rule.DEFINITION_REMOVED, name, name, None, what, kind, None))
            elif name not in targets:
                kind = describe(self.new.definitions[name].schema)
                what = f"definition {name} added ({kind})"
                out.append(self._whole(Rule.DEFINITION_ADDED, name, None, name, what, None, kind))
        return out

    def _invented(self, name: str) -> bool:
        """Only one side has it, and there it is a hoisted inline object."""
        found = self.old.definitions.get(name) or self.new.definitions.get(name)
        return found is not None and found.hoisted and name not in self.renames

    def _flows(self, old_name: str | None, new_name: str | None) -> frozenset[Direction] | None:
        found = self.old_flows.get(old_name or "", frozenset()) | self.new_flows.get(
            new_name or "", frozenset()
        )
        return found or None

    def _whole(
        self,
        rule: Rule,
        name: str,
        old_name: str | None,
        new_name: str | None,
        what: str,
        old: object,
        new: object,
    ) -> Finding:
        flow = self._flows(old_name, new_name)
        return Finding(
            rule, Subject.DEFINITION, name, name, what, rules.impact(rule), flow, old, new
        )

    def _renamed(self, old_name: str, new_name: str) -> list[Finding]:
        details = self._pair(old_name, new_name)
        shape = "same shape" if not details else "near-identical shape, differences listed"
        what = f"definition {old_name} renamed to {new_name} ({shape})"
        rename = self._whole(
            Rule.DEFINITION_RENAMED, new_name, old_name, new_name, what, old_name, new_name
        )
        if self.old.definitions[old_name].hoisted and self.new.definitions[new_name].hoisted:
            return details
        return [rename, *details]

    def _pair(self, old_name: str, new_name: str) -> list[Finding]:
        before, after = self.old.definitions[old_name], self.new.definitions[new_name]
        deltas = self.comparer.definition(
            old_name, new_name, own_description=not (before.hoisted or after.hoisted)
        )
        flow = self._flows(old_name, new_name)
        owner, base = new_name, new_name
        if after.origin is not None and before.origin == after.origin:
            base = owner_path(after.origin)
            owner = base.split(".", 1)[0].split("[", 1)[0].split("{", 1)[0].split("|", 1)[0]
        return [
            Finding(
                d.rule,
                Subject.DEFINITION,
                owner,
                base + d.path.removeprefix(new_name),
                d.what,
                d.impact,
                flow,
                d.old,
                d.new,
            )
            for d in (
                self._message_union(self._envelope(d, new_name), new_name)
                for d in deltas
                if not self._redundant(d, new_name)
            )
        ]

    def _redundant(self, delta: Delta, name: str) -> bool:
        if delta.rule is Rule.PROPERTY_ADDED:
            return delta.path in self.new_sites
        if delta.rule is Rule.PROPERTY_REMOVED:
            return delta.path in self.old_sites
        return name in MESSAGE_UNIONS and delta.path == name and delta.rule not in _MEMBER_RULES

    def _message_union(self, delta: Delta, name: str) -> Delta:
        """A message union's member change: the method rules judge the wire, so it only keeps
        its bindings flag and names the method change that judges it."""
        if name not in MESSAGE_UNIONS or delta.rule not in _MEMBER_RULES:
            return delta
        member = delta.new if delta.rule is Rule.UNION_MEMBER_ADDED else delta.old
        method = self.methods.get(str(member))
        where = f"'{method}'" if method else "the method and notification tables"
        what = f"{delta.what}; on the wire, see the change of {where}"
        compatible = Impact(Severity.COMPATIBLE, Severity.COMPATIBLE, delta.impact.bindings)
        return replace(delta, impact=compatible, what=what)

    def _envelope(self, delta: Delta, name: str) -> Delta:
        if (
            delta.rule not in _PROPERTY_RULES
            or name not in self.messages
            or delta.path.removeprefix(f"{name}.") not in self.envelope
        ):
            return delta
        compatible = Impact(Severity.COMPATIBLE, Severity.COMPATIBLE, delta.impact.bindings)
        what = f"{delta.what}; a JSON-RPC envelope field, on the wire either way"
        return replace(delta, impact=compatible, what=what)
