"""The tags every rule carries, and ``Spec``: one rule of a keyword family, in one record.

A rule is tagged four ways, each a closed vocabulary (values are stable, like rule IDs):

* ``direction``: whom the change can break, from the view of code written for OLD: ``senders``
  (a tightening: a value they may send is now rejected), ``receivers`` (a loosening: a value
  may arrive that they do not expect), ``both``, or ``none``. Which side sends a definition
  (client, server, or both) comes from ``receivers.py``, per change.
* ``area``: where in the protocol the change sits.
* ``kind``: what sort of fact changed (oasdiff's words: existence, requiredness, type,
  constraints, values, structure, lifecycle; plus documentation).
* ``action``: what happened to it.

``taxonomy.py`` tags the core rules by hand and reads the keyword families' ``Spec``s, which
``make_spec`` builds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from .rules import Impact, Rule, Severity, Variance

__all__ = [
    "SOFT_IMPACT",
    "VARIANCE_IMPACT",
    "Action",
    "Area",
    "Direction",
    "Kind",
    "Spec",
    "Tags",
    "direction_of",
    "make_spec",
    "stem",
]


class Direction(StrEnum):
    """Whom a rule can break (``none``: nobody on the wire; the bindings may still break)."""

    SENDERS = "senders"
    RECEIVERS = "receivers"
    BOTH = "both"
    NONE = "none"


class Area(StrEnum):
    """Where a change sits. ``extension`` is for the diffs of extension schemas."""

    METHOD = "method"
    CAPABILITY = "capability"
    DEFINITION = "definition"
    PROPERTY = "property"
    UNION = "union"
    CONSTRAINT = "constraint"
    DIALECT = "dialect"
    EXTENSION = "extension"
    SURFACE = "surface"


class Kind(StrEnum):
    EXISTENCE = "existence"
    REQUIREDNESS = "requiredness"
    TYPE = "type"
    CONSTRAINTS = "constraints"
    VALUES = "values"
    STRUCTURE = "structure"
    LIFECYCLE = "lifecycle"
    DOCUMENTATION = "documentation"


class Action(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"
    INCREASED = "increased"
    DECREASED = "decreased"
    WIDENED = "widened"
    NARROWED = "narrowed"
    OPENED = "opened"
    CLOSED = "closed"
    RENAMED = "renamed"


@dataclass(frozen=True)
class Tags:
    direction: Direction
    area: Area
    kind: Kind
    action: Action

    def to_json(self) -> dict[str, str]:
        return {
            "direction": self.direction.value,
            "area": self.area.value,
            "kind": self.kind.value,
            "action": self.action.value,
        }

    def labels(self) -> frozenset[str]:
        """``direction:senders``, ``area:constraint``...: the forms a selector names them by."""
        return frozenset(f"{key}:{value}" for key, value in self.to_json().items())


_C, _P, _B = Severity.COMPATIBLE, Severity.POTENTIALLY_BREAKING, Severity.BREAKING

#: The impact of a keyword rule by which way it moves the accepted values: a tightening breaks
#: senders (their values are rejected), a loosening may break receivers (unexpected values), a
#: change both ways does both. Keyword rules never break code importing the bindings: a
#: constraint is a validator in the generated class, not a type.
VARIANCE_IMPACT = {
    Variance.NARROW: Impact(_B, _C, False),
    Variance.WIDEN: Impact(_C, _P, False),
    Variance.BOTH: Impact(_B, _P, False),
    Variance.NONE: Impact(_C, _C, False),
}
#: The same for annotations a validator may or may not assert (``format``, ``contentMediaType``):
#: one level milder, since a receiver that only annotates accepts either way.
SOFT_IMPACT = {
    Variance.NARROW: Impact(_P, _C, False),
    Variance.WIDEN: Impact(_C, _P, False),
    Variance.BOTH: Impact(_P, _P, False),
    Variance.NONE: Impact(_C, _C, False),
}


def direction_of(impact: Impact) -> Direction:
    """Whom ``impact`` can break."""
    sender, receiver = impact.sender is not _C, impact.receiver is not _C
    if sender and receiver:
        return Direction.BOTH
    if sender:
        return Direction.SENDERS
    return Direction.RECEIVERS if receiver else Direction.NONE


@dataclass(frozen=True)
class Spec:
    """One rule of a keyword family: its ID, the keyword it reads, what it means and does."""

    rule: Rule
    keyword: str
    doc: str
    variance: Variance
    impact: Impact
    area: Area
    kind: Kind
    action: Action

    @property
    def tags(self) -> Tags:
        return Tags(direction_of(self.impact), self.area, self.kind, self.action)


def stem(keyword: str) -> str:
    """``exclusiveMinimum`` -> ``EXCLUSIVE_MINIMUM``: the rule ID stem of a keyword."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", keyword.lstrip("$")).upper()


def make_spec(
    rule: str,
    keyword: str,
    doc: str,
    variance: Variance,
    action: Action,
    area: Area = Area.CONSTRAINT,
    kind: Kind = Kind.CONSTRAINTS,
    soft: bool = False,
) -> Spec:
    """A family's rule, judged by ``variance`` (``soft``: an annotation some validators assert)."""
    impact = (SOFT_IMPACT if soft else VARIANCE_IMPACT)[variance]
    return Spec(Rule(rule), keyword, doc, variance, impact, area, kind, action)
