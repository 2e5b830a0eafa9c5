"""``Delta``: one difference inside a definition, as the comparisons produce it, and its folds.

Shared by ``compare`` (the structure: properties, items, unions, references) and the keyword
families (``constraints``, ``values``, ``applicators``), which know nothing of each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import rules
from .rules import NO_IMPACT, Impact, Rule, Variance
from .tags import Spec

__all__ = ["Delta", "Recurse", "delta", "fold", "fold_variance", "of_spec"]


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


#: The structural comparison a keyword family calls for a subschema: (old, new, path) -> deltas.
Recurse = Callable[[Any, Any, str], list[Delta]]


def delta(rule: Rule, path: str, what: str, old: Any = None, new: Any = None) -> Delta:
    """A delta of a core rule, with its fixed impact and variance."""
    return Delta(rule, path, what, rules.impact(rule), old, new, rules.variance(rule))


def of_spec(spec: Spec, path: str, what: str, old: Any = None, new: Any = None) -> Delta:
    """A delta of a keyword family's rule."""
    return Delta(spec.rule, path, what, spec.impact, old, new, spec.variance)


def fold(deltas: list[Delta]) -> Impact:
    """The combined impact of several deltas (no impact for none)."""
    total = NO_IMPACT
    for each in deltas:
        total = total.merge(each.impact)
    return total


def fold_variance(deltas: list[Delta]) -> Variance:
    total = Variance.NONE
    for each in deltas:
        total = total | each.variance
    return total
