"""Find definitions that were renamed: a removed and an added definition of the same shape.

Shape is the set of ``shapes.features`` (property names with their type tags, required names,
consts, enum values, union members; never prose). Similarity is the Jaccard index of two sets. A
pair is a rename only when each is the other's single best match above ``THRESHOLD``; between
equally shaped candidates the name decides, but only by a clear margin. Schemas are full of small
look-alikes (a dozen ``...RequestParamsMeta`` holding just ``progressToken``), and an ambiguous
pairing would be a guess, so it is left as one removal and one addition.
"""

from __future__ import annotations

from difflib import SequenceMatcher

from ..ir import RevisionIR
from .shapes import effective, features

THRESHOLD = 0.75
MIN_FEATURES = 3
NAME_MARGIN = 0.2

Shape = frozenset[tuple[str, ...]]


def similarity(a: Shape, b: Shape) -> float:
    """Jaccard index of two shapes (1.0 for two empty ones)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def shapes(ir: RevisionIR, names: list[str], stable: frozenset[str]) -> dict[str, Shape]:
    defs = {n: d.schema for n, d in ir.definitions.items()}
    return {n: features(effective(defs[n], defs), stable) for n in names}


def name_similarity(a: str, b: str) -> float:
    """How alike two names read (symmetric, 0..1)."""
    return max(SequenceMatcher(None, a, b).ratio(), SequenceMatcher(None, b, a).ratio())


def _unique_best(name: str, scores: dict[str, float]) -> str | None:
    if not scores:
        return None
    top = max(scores.values())
    tied = [other for other, score in scores.items() if score == top]
    if len(tied) == 1:
        return tied[0]
    by_name = sorted(((name_similarity(name, o), o) for o in tied), reverse=True)
    if by_name[0][0] - by_name[1][0] >= NAME_MARGIN:
        return by_name[0][1]
    return None


def match_renames(old: RevisionIR, new: RevisionIR) -> dict[str, str]:
    """Old name -> new name for every definition judged renamed."""
    stable = frozenset(old.definitions) & frozenset(new.definitions)
    removed = sorted(set(old.definitions) - stable)
    added = sorted(set(new.definitions) - stable)
    old_shapes = shapes(old, removed, stable)
    new_shapes = shapes(new, added, stable)
    scores: dict[tuple[str, str], float] = {}
    for r in removed:
        if len(old_shapes[r]) < MIN_FEATURES:
            continue
        for a in added:
            if len(new_shapes[a]) < MIN_FEATURES:
                continue
            score = similarity(old_shapes[r], new_shapes[a])
            if score >= THRESHOLD:
                scores[r, a] = score
    renames: dict[str, str] = {}
    for r in removed:
        best = _unique_best(r, {a: s for (o, a), s in scores.items() if o == r})
        if best is None:
            continue
        back = _unique_best(best, {o: s for (o, a), s in scores.items() if a == best})
        if back == r:
            renames[r] = best
    return renames
