"""Compare the capability flags each side can advertise, and say where each flag is defined.

Flags are properties of ``ClientCapabilities``/``ServerCapabilities`` and of the definitions they
reference; ``capability_sites`` maps each such property to its flag so that ``engine`` can report a
new flag once, as ``CAPABILITY_ADDED``, rather than also as a ``PROPERTY_ADDED``. A flag added or
removed together with its parent is folded into the parent's change.
"""

from __future__ import annotations

from typing import Any

from ..ir import Direction, RevisionIR
from ..ir.capabilities import SIDES
from ..ir.refs import ref_name
from ..jsonvalues import is_object
from . import rules
from .model import Finding, Subject
from .rules import Rule

# Client capabilities are read by the server, server capabilities by the client.
SIDE_FLOW = {"client": Direction.CLIENT_TO_SERVER, "server": Direction.SERVER_TO_CLIENT}
_DEFINITION = dict(SIDES)


def capability_sites(ir: RevisionIR) -> dict[str, tuple[str, tuple[str, ...]]]:
    """``Definition.property`` -> (side, flag path) for every capability flag of ``ir``."""
    sites: dict[str, tuple[str, tuple[str, ...]]] = {}
    for side, root in SIDES:
        _walk(ir, side, root, (), sites, {root})
    return sites


def _walk(
    ir: RevisionIR,
    side: str,
    definition: str,
    path: tuple[str, ...],
    sites: dict[str, tuple[str, tuple[str, ...]]],
    seen: set[str],
) -> None:
    found = ir.definitions.get(definition)
    props: Any = found.schema.get("properties") if found else None
    for prop, sub in sorted(props.items() if is_object(props) else ()):
        flag = (*path, prop)
        sites[f"{definition}.{prop}"] = (side, flag)
        target = ref_name(sub)
        if target is not None and target not in seen:
            _walk(ir, side, target, flag, sites, seen | {target})


def _flags(ir: RevisionIR) -> dict[tuple[str, tuple[str, ...]], str]:
    return {(flag.side, flag.path): flag.kind for flag in ir.capabilities}


def _folded(
    paths: set[tuple[str, tuple[str, ...]]],
) -> list[tuple[tuple[str, tuple[str, ...]], int]]:
    """Top-most changed flags, each with how many changed flags are nested under it."""
    tops = sorted(p for p in paths if (p[0], p[1][:-1]) not in paths)
    return [
        (top, sum(1 for p in paths if p[0] == top[0] and p[1][: len(top[1])] == top[1]) - 1)
        for top in tops
    ]


def compare_capabilities(old: RevisionIR, new: RevisionIR) -> list[Finding]:
    """Capability flags added or removed on either side."""
    before, after = _flags(old), _flags(new)
    out: list[Finding] = []
    for rule, paths, kinds in (
        (Rule.CAPABILITY_ADDED, set(after) - set(before), after),
        (Rule.CAPABILITY_REMOVED, set(before) - set(after), before),
    ):
        verb = "added" if rule is Rule.CAPABILITY_ADDED else "removed"
        for (side, path), nested in _folded(paths):
            dotted = ".".join(path)
            more = f" with {nested} nested flag(s)" if nested else ""
            kind = kinds[side, path]
            out.append(
                Finding(
                    rule=rule,
                    subject=Subject.CAPABILITY,
                    name=side,
                    path=f"{_DEFINITION[side]}.{dotted}",
                    what=f"{side} capability '{dotted}' ({kind}) {verb}{more}",
                    impact=rules.impact(rule),
                    flows=frozenset({SIDE_FLOW[side]}),
                    old=None if rule is Rule.CAPABILITY_ADDED else kind,
                    new=kind if rule is Rule.CAPABILITY_ADDED else None,
                )
            )
    return out
