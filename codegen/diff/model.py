"""The records ``mcpbind diff`` produces: internal findings, and the ``Change`` users see.

A ``Finding`` is what a comparison observed, with the message flows it travels on; ``judge`` turns
it into a ``Change`` by naming who is affected. Keeping the two apart lets the comparison code
ignore clients and servers entirely.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..ir import Direction
from .rules import Impact, Rule, Severity


class Subject(StrEnum):
    """What a change is about; renderers group by it, in this order."""

    DOCUMENT = "document"
    METHOD = "method"
    NOTIFICATION = "notification"
    CAPABILITY = "capability"
    DEPRECATION = "deprecation"
    DEFINITION = "definition"
    # A server's surface (two ``mcpbind inspect --json`` snapshots).
    TOOL = "tool"
    RESOURCE = "resource"
    RESOURCE_TEMPLATE = "resource-template"
    PROMPT = "prompt"


SUBJECT_ORDER = {s: i for i, s in enumerate(Subject)}
BOTH = "both"
_SENDER = {Direction.CLIENT_TO_SERVER: "client", Direction.SERVER_TO_CLIENT: "server"}
_RECEIVER = {Direction.CLIENT_TO_SERVER: "server", Direction.SERVER_TO_CLIENT: "client"}


@dataclass(frozen=True)
class Finding:
    """One observed difference, before it is judged against the parties that exchange it.

    ``flows`` are the directions the affected message travels in; ``None`` means no message of the
    method table carries it (a base type, an unused alias): nobody receives it, so it is judged
    compatible on the wire and only ``bindings`` can flag it.
    """

    rule: Rule
    subject: Subject
    name: str
    path: str
    what: str
    impact: Impact
    flows: frozenset[Direction] | None
    old: Any = None
    new: Any = None


@dataclass(frozen=True)
class Change:
    """One reported change. ``to_json`` field names are stable; ``direction`` is the message flow
    (``client_to_server``, ``server_to_client``, ``both``, or ``None`` when no message carries it)
    and ``affects`` names the sides whose code written for the old revision is at risk.
    ``origin`` is None for a change of the revision itself, else the label of the extension
    layered over it that brought the change (``tasks@2026-08-21``, ``origins.py``)."""

    rule: Rule
    severity: Severity
    bindings: bool
    path: str
    direction: str | None
    old: Any
    new: Any
    message: str
    affects: tuple[str, ...]
    subject: Subject
    name: str
    origin: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule.value,
            "severity": self.severity.value,
            "bindings": self.bindings,
            "path": self.path,
            "direction": self.direction,
            "old": self.old,
            "new": self.new,
            "message": self.message,
            "affects": list(self.affects),
            "subject": self.subject.value,
            "name": self.name,
            "origin": self.origin,
        }


def _direction_label(flows: frozenset[Direction] | None) -> str | None:
    if not flows:
        return None
    if len(flows) > 1:
        return BOTH
    return next(iter(flows)).value


def _consequence(impact: Impact, flows: frozenset[Direction]) -> tuple[str, tuple[str, ...]]:
    senders = sorted({_SENDER[d] for d in flows})
    receivers = sorted({_RECEIVER[d] for d in flows})
    parts: list[str] = []
    affected: set[str] = set()
    for severity, sides, verb in (
        (impact.sender, senders, "sending"),
        (impact.receiver, receivers, "reading"),
    ):
        if severity is Severity.COMPATIBLE:
            continue
        affected.update(sides)
        who = " and ".join(f"{s}s" for s in sides)
        modal = "breaks" if severity is Severity.BREAKING else "may break"
        parts.append(f"{modal} {who} {verb} it")
    return "; ".join(parts), tuple(sorted(affected))


def judge(finding: Finding) -> Change:
    """Name who is affected and how badly; the severity is the worse of sender and receiver."""
    affects: tuple[str, ...] = ()
    if finding.flows is None:
        severity = Severity.COMPATIBLE
        wire_hit = finding.impact.severity is not Severity.COMPATIBLE
        message = finding.what + (" (no message carries it)" if wire_hit else "")
    else:
        consequence, affects = _consequence(finding.impact, finding.flows)
        severity = finding.impact.severity
        message = finding.what + (f" ({consequence})" if consequence else "")
    return Change(
        rule=finding.rule,
        severity=severity,
        bindings=finding.impact.bindings,
        path=finding.path,
        direction=_direction_label(finding.flows),
        old=finding.old,
        new=finding.new,
        message=message,
        affects=affects,
        subject=finding.subject,
        name=finding.name,
    )
