"""Compare the method and notification tables: what exists, in which direction, with which result.

A method's request and params are definitions, compared with the others; here only what the table
itself says: that a method can be sent one way, in which form, gated by which capability, and which
result classes answer it. A server -> client method is either a standalone request
(``ServerRequest``) or, from 2026-07-28, an input request embedded in an input-required result
(``InputRequest``); moving between the two is a change of meaning, never a rename.
"""

from __future__ import annotations

from dataclasses import replace

from ..ir import Direction, Method, RevisionIR
from ..ir.methods import message_members
from . import rules
from .compare import DefinitionComparer, fold
from .model import Finding, Subject
from .receivers import opposite
from .rules import Impact, Rule

ARROW = {
    Direction.CLIENT_TO_SERVER: "client -> server",
    Direction.SERVER_TO_CLIENT: "server -> client",
}
_RECEIVER_SIDE = {Direction.CLIENT_TO_SERVER: "server", Direction.SERVER_TO_CLIENT: "client"}
STANDALONE, EMBEDDED = "request", "input request"
#: The capability path of an extension's methods' gate is this and its identifier: its key in
#: ``capabilities.extensions`` (``layers.gate``).
EXTENSION_GATE = "extensions."


def server_request_forms(ir: RevisionIR) -> dict[str, str]:
    """Server -> client method -> ``request`` (a JSON-RPC request of its own) or ``input
    request`` (only embedded in an input-required result)."""
    schemas = {name: d.schema for name, d in ir.definitions.items()}
    standalone = set(message_members(schemas, "ServerRequest"))
    embedded = set(message_members(schemas, "InputRequest"))
    forms: dict[str, str] = {}
    for method in ir.methods:
        if Direction.SERVER_TO_CLIENT not in method.directions:
            continue
        if method.request in standalone or method.request not in embedded:
            forms[method.method] = STANDALONE
        else:
            forms[method.method] = EMBEDDED
    return forms


def _gated_by(capability: str, direction: Direction) -> str:
    """``the server capability 'tools'``, or for an extension's method (``layers.gate``) the
    extension both sides declare in ``capabilities.extensions``."""
    if capability.startswith(EXTENSION_GATE):
        return f"the extension '{capability.removeprefix(EXTENSION_GATE)}' (declared by both sides)"
    return f"the {_RECEIVER_SIDE[direction]} capability '{capability}'"


def _gate(method: Method, direction: Direction) -> tuple[bool, str]:
    capability = method.capability_for(direction)
    if capability is None:
        return False, "no capability gates it"
    return True, f"gated by {_gated_by(capability, direction)}"


def _method_finding(
    rule: Rule, method: Method, direction: Direction, what: str, impact: Impact
) -> Finding:
    return Finding(
        rule=rule,
        subject=Subject.METHOD,
        name=method.method,
        path=method.method,
        what=what,
        impact=impact,
        flows=frozenset({direction}),
        old=None,
        new=direction.value,
    )


def compare_methods(
    old: RevisionIR, new: RevisionIR, comparer: DefinitionComparer
) -> list[Finding]:
    """Methods added or removed per direction, directions added or removed, results changed."""
    olds = {m.method: m for m in old.methods}
    news = {m.method: m for m in new.methods}
    old_forms, new_forms = server_request_forms(old), server_request_forms(new)
    out: list[Finding] = []
    for name in sorted(olds.keys() | news.keys()):
        before, after = olds.get(name), news.get(name)
        if before is None and after is not None:
            for direction in sorted(after.directions):
                guarded, gate = _gate(after, direction)
                what = f"method '{name}' added ({ARROW[direction]}); {gate}"
                impact = rules.method_added(guarded=guarded)
                out.append(_method_finding(Rule.METHOD_ADDED, after, direction, what, impact))
        elif after is None and before is not None:
            for direction in sorted(before.directions):
                out.append(_removed(before, direction, old_forms))
        elif before is not None and after is not None:
            was, now = set(before.directions), set(after.directions)
            out += _directions(before, after, was, now, old_forms)
            out += _forms(after, old_forms.get(name), new_forms.get(name))
            out += _gates(before, after, was & now)
            out += _results(before, after, comparer)
    return out


def _removed(before: Method, direction: Direction, forms: dict[str, str]) -> Finding:
    """A removed server -> client request has a rule of its own: only servers are hit."""
    if direction is Direction.SERVER_TO_CLIENT:
        form = forms.get(before.method, STANDALONE)
        what = f"server -> client {form} '{before.method}' removed"
        rule = Rule.SERVER_REQUEST_REMOVED
    else:
        what = f"method '{before.method}' removed ({ARROW[direction]})"
        rule = Rule.METHOD_REMOVED
    return _swap(_method_finding(rule, before, direction, what, rules.impact(rule)))


def _forms(after: Method, was: str | None, now: str | None) -> list[Finding]:
    if was is None or now is None or was == now:
        return []
    if now == EMBEDDED:
        rule = Rule.METHOD_BECAME_INPUT_REQUEST
        what = (
            f"'{after.method}' is no longer a server -> client request: servers embed it in an "
            "input-required result, and the client answers it by retrying the original request"
        )
    else:
        rule = Rule.METHOD_BECAME_REQUEST
        what = (
            f"'{after.method}' is a standalone server -> client request again, no longer "
            "embedded in an input-required result"
        )
    finding = _method_finding(rule, after, Direction.SERVER_TO_CLIENT, what, rules.impact(rule))
    return [replace(finding, old=was, new=now)]


def _gates(before: Method, after: Method, directions: set[Direction]) -> list[Finding]:
    out: list[Finding] = []
    for direction in sorted(directions):
        was, now = before.capability_for(direction), after.capability_for(direction)
        if was == now:
            continue
        what = (
            f"'{after.method}' ({ARROW[direction]}) is now gated by "
            + (_gated_by(now, direction) if now else "no capability")
            + " (was "
            + (f"'{was}'" if was else "ungated")
            + ")"
        )
        rule = Rule.METHOD_CAPABILITY_CHANGED
        finding = _method_finding(rule, after, direction, what, rules.impact(rule))
        out.append(replace(finding, old=was, new=now))
    return out


def _swap(finding: Finding) -> Finding:
    """A removal names the direction it had in ``old``."""
    return replace(finding, old=finding.new, new=None)


def _directions(
    before: Method, after: Method, was: set[Direction], now: set[Direction], forms: dict[str, str]
) -> list[Finding]:
    out: list[Finding] = []
    for direction in sorted(now - was):
        guarded, gate = _gate(after, direction)
        what = f"method '{after.method}' may now also be sent {ARROW[direction]}; {gate}"
        impact = rules.method_added(guarded=guarded)
        out.append(_method_finding(Rule.METHOD_DIRECTION_ADDED, after, direction, what, impact))
    for direction in sorted(was - now):
        if direction is Direction.SERVER_TO_CLIENT:
            out.append(_removed(before, direction, forms))
            continue
        what = f"method '{after.method}' may no longer be sent {ARROW[direction]}"
        impact = rules.impact(Rule.METHOD_DIRECTION_REMOVED)
        finding = _method_finding(Rule.METHOD_DIRECTION_REMOVED, after, direction, what, impact)
        out.append(_swap(finding))
    return out


def _results(before: Method, after: Method, comparer: DefinitionComparer) -> list[Finding]:
    if before.results == after.results:
        return []
    deltas = comparer.members(list(before.results), list(after.results), after.method)
    added = any(d.rule is Rule.UNION_MEMBER_ADDED for d in deltas)
    removed = any(d.rule is Rule.UNION_MEMBER_REMOVED for d in deltas)
    total = fold(deltas).merge(rules.result_changed(added=added, removed=removed))
    was, now = " | ".join(before.results), " | ".join(after.results)
    detail = "; ".join(d.what for d in deltas) or "renamed, same shape"
    return [
        Finding(
            rule=Rule.METHOD_RESULT_CHANGED,
            subject=Subject.METHOD,
            name=after.method,
            path=after.method,
            what=f"result of '{after.method}' is now {now} (was {was}): {detail}",
            impact=total,
            flows=frozenset(opposite(d) for d in after.directions),
            old=list(before.results),
            new=list(after.results),
        )
    ]


def compare_notifications(old: RevisionIR, new: RevisionIR) -> list[Finding]:
    """Notifications added or removed per direction, and directions added or removed."""
    olds: dict[str, set[Direction]] = {}
    news: dict[str, set[Direction]] = {}
    for ir, table in ((old, olds), (new, news)):
        for notification in ir.notifications:
            table.setdefault(notification.method, set()).update(notification.directions)
    out: list[Finding] = []
    for name in sorted(olds.keys() | news.keys()):
        was, now = olds.get(name, set()), news.get(name, set())
        existed = bool(was) and bool(now)
        for direction in sorted(now - was):
            rule = Rule.NOTIFICATION_DIRECTION_ADDED if existed else Rule.NOTIFICATION_ADDED
            verb = "may now also be sent" if existed else "added"
            out.append(_notification(rule, name, direction, f"notification '{name}' {verb}", True))
        for direction in sorted(was - now):
            rule = Rule.NOTIFICATION_DIRECTION_REMOVED if existed else Rule.NOTIFICATION_REMOVED
            verb = "may no longer be sent" if existed else "removed"
            out.append(_notification(rule, name, direction, f"notification '{name}' {verb}", False))
    return out


def _notification(rule: Rule, name: str, direction: Direction, what: str, added: bool) -> Finding:
    return Finding(
        rule=rule,
        subject=Subject.NOTIFICATION,
        name=name,
        path=name,
        what=f"{what} ({ARROW[direction]})",
        impact=rules.impact(rule),
        flows=frozenset({direction}),
        old=None if added else direction.value,
        new=direction.value if added else None,
    )
