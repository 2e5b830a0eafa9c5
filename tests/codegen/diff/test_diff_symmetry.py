"""Properties of the diff as a whole: nothing for a revision against itself, mirror images when
the order is swapped, stable JSON, and speed on the two largest revisions."""

from __future__ import annotations

import itertools
import time
from collections import Counter

import pytest
from mcpbind.codegen.diff import Change, Rule, diff_revisions
from mcpbind.codegen.diff.engine import definition_renames as match_renames
from mcpbind.codegen.diff.report import fold_changes
from mcpbind.codegen.ir import RevisionIR, build_ir
from mcpbind.codegen.load import load_revision

MIRROR: dict[Rule, Rule] = {}
for _rule in Rule:
    for _a, _b in (
        ("ADDED", "REMOVED"),
        ("WIDENED", "NARROWED"),
        ("OPENED", "CLOSED"),
        ("INCREASED", "DECREASED"),
        ("EXCLUSIVE", "INCLUSIVE"),
    ):
        if _rule.value.endswith(_a):
            _other = Rule(_rule.value.removesuffix(_a) + _b)
            MIRROR[_rule], MIRROR[_other] = _other, _rule
for _a, _b in (
    (Rule.METHOD_BECAME_INPUT_REQUEST, Rule.METHOD_BECAME_REQUEST),
    (Rule.DEPRECATED, Rule.UNDEPRECATED),
):
    MIRROR[_a], MIRROR[_b] = _b, _a
# A server -> client request that is removed has a rule of its own; added, it is a plain method
# (or direction) addition. Compare them as one kind.
CANONICAL = {
    Rule.SERVER_REQUEST_REMOVED: Rule.METHOD_REMOVED,
    Rule.METHOD_DIRECTION_REMOVED: Rule.METHOD_REMOVED,
    Rule.METHOD_DIRECTION_ADDED: Rule.METHOD_ADDED,
}

PAIRS = [
    ("2024-11-05", "2025-03-26"),
    ("2025-03-26", "2025-06-18"),
    ("2025-06-18", "2025-11-25"),
    ("2025-11-25", "2026-07-28"),
    ("2024-11-05", "2026-07-28"),
]


def test_a_revision_against_itself_is_empty(irs: dict[str, RevisionIR]) -> None:
    for ir in irs.values():
        assert diff_revisions(ir, ir, include_descriptions=True) == []


def _renamed_path(path: str, renames: dict[str, str]) -> str:
    head = path.split(".")[0].split("[")[0].split("{")[0]
    return renames[head] + path[len(head) :] if head in renames else path


def _mirrored(changes: list[Change], renames: dict[str, str]) -> Counter[tuple[Rule, str]]:
    return Counter(
        (MIRROR.get(_canonical(c.rule), _canonical(c.rule)), _renamed_path(c.path, renames))
        for c in changes
    )


def _canonical(rule: Rule) -> Rule:
    return CANONICAL.get(rule, rule)


@pytest.mark.parametrize(("old", "new"), PAIRS)
def test_swapping_old_and_new_gives_the_mirror_image(
    irs: dict[str, RevisionIR], old: str, new: str
) -> None:
    forward = diff_revisions(irs[old], irs[new], include_descriptions=True)
    backward = diff_revisions(irs[new], irs[old], include_descriptions=True)
    renames = match_renames(irs[old], irs[new])
    assert match_renames(irs[new], irs[old]) == {v: k for k, v in renames.items()}
    # Backward paths use the old revision's names: map them forward before comparing.
    expected = _mirrored(backward, renames)
    actual = Counter((_canonical(c.rule), c.path) for c in forward)
    assert actual == expected
    for change in forward:
        if change.rule is Rule.DEFINITION_RENAMED:
            [back] = [
                c for c in backward if c.rule is Rule.DEFINITION_RENAMED and c.new == change.old
            ]
            assert back.old == change.new


def test_the_two_largest_revisions_diff_well_under_a_second() -> None:
    old, new = build_ir(load_revision("2025-11-25")), build_ir(load_revision("2026-07-28"))
    started = time.perf_counter()
    changes = diff_revisions(old, new, include_descriptions=True)
    elapsed = time.perf_counter() - started
    assert changes and elapsed < 1.0, elapsed


def _folds(changes: list[Change], renames: dict[str, str]) -> set[frozenset[str]]:
    return {frozenset(_renamed_path(p, renames) for p in e.paths) for e in fold_changes(changes)}


@pytest.mark.parametrize(
    ("old", "new"),
    list(
        itertools.combinations(
            ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"], 2
        )
    ),
)
def test_folding_groups_the_same_paths_both_ways(
    irs: dict[str, RevisionIR], old: str, new: str
) -> None:
    """2025-03-26 -> 2025-06-18 once folded 19 optional additions across flows into 2 entries
    while the reverse split the removals by who reads them: now both split by flow."""
    renames = match_renames(irs[old], irs[new])
    forward = _folds(diff_revisions(irs[old], irs[new], include_descriptions=True), {})
    backward = _folds(diff_revisions(irs[new], irs[old], include_descriptions=True), renames)
    assert forward == backward
    assert any(len(paths) > 1 for paths in forward) or old == "2024-11-05"
