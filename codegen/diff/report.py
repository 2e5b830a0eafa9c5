"""What ``mcpbind diff`` shows after CI's filters: severity filters, an ignore file, folding.

The ignore file is TOML, one ``[[ignore]]`` table per accepted change::

    [[ignore]]
    rule = "METHOD_REMOVED"          # a rule ID (see `mcpbind diff rules`)
    path = "tasks/*"                 # an fnmatch glob over the change's path
    reason = "tasks left the core protocol; our server never used them"

``reason`` is mandatory, so every accepted break is explained in review. An ignore that matched
nothing is reported as unused, so the file shrinks when the schema does. Changes with the same
rule, severity and message are folded into one ``Entry`` with a count and every path.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from ..errors import CodegenError
from .changelog_check import ChangelogCheck
from .model import Change, Subject
from .rules import Rule, Severity

ONLY = ("breaking", "potentially-breaking", "compatible", "bindings")
FAIL_ON = ("breaking", "potentially-breaking", "bindings", "never")


@dataclass(frozen=True)
class Ignore:
    """One accepted change: ``rule`` and ``path`` (a glob) must both match."""

    rule: str
    path: str
    reason: str

    def matches(self, change: Change) -> bool:
        return (self.rule in ("*", change.rule.value)) and fnmatchcase(change.path, self.path)

    def to_json(self) -> dict[str, str]:
        return {"rule": self.rule, "path": self.path, "reason": self.reason}


def read_ignores(path: Path) -> list[Ignore]:
    """Parse an ignore file; one clear ``CodegenError`` for anything malformed."""
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CodegenError(f"cannot read ignore file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CodegenError(f"{path}: not valid TOML: {exc}") from None
    entries = table.get("ignore", [])
    if not isinstance(entries, list) or set(table) - {"ignore"}:
        raise CodegenError(f"{path}: expected only [[ignore]] tables")
    known = {r.value for r in Rule} | {"*"}
    out: list[Ignore] = []
    for number, entry in enumerate(entries, 1):
        where = f"{path}: ignore #{number}"
        if not isinstance(entry, dict) or set(entry) - {"rule", "path", "reason"}:
            raise CodegenError(f"{where}: keys are rule, path and reason")
        rule, glob, reason = entry.get("rule"), entry.get("path"), entry.get("reason")
        if not isinstance(rule, str) or rule not in known:
            raise CodegenError(f"{where}: unknown rule {rule!r} (see `mcpbind diff rules`)")
        if not isinstance(glob, str) or not glob:
            raise CodegenError(f"{where}: 'path' (a glob such as \"tasks/*\") is required")
        if not isinstance(reason, str) or not reason.strip():
            raise CodegenError(f"{where}: a non-empty 'reason' is required")
        out.append(Ignore(rule, glob, reason.strip()))
    return out


@dataclass(frozen=True)
class Entry:
    """Changes with the same rule, severity and message, folded: ``paths`` in order."""

    change: Change
    paths: tuple[str, ...]
    directions: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return len(self.paths)

    def to_json(self) -> dict[str, Any]:
        return {
            **self.change.to_json(),
            "count": self.count,
            "paths": list(self.paths),
            "directions": list(self.directions),
        }


def fold_changes(changes: list[Change]) -> list[Entry]:
    """One entry per (subject, rule, severity, bindings, message), first-seen order. The message
    already names who is affected, so the flows of the folded changes are only listed."""
    groups: dict[tuple[Any, ...], list[Change]] = {}
    for change in changes:
        key = (
            change.subject,
            change.rule,
            change.severity,
            change.bindings,
            change.message,
        )
        groups.setdefault(key, []).append(change)
    return [
        Entry(
            same[0],
            tuple(c.path for c in same),
            tuple(sorted({c.direction for c in same if c.direction})),
        )
        for same in groups.values()
    ]


@dataclass
class Report:
    """A judged diff after filters and ignores, with what the renderers print around it."""

    old: str
    new: str
    changes: list[Change]
    fixups: dict[str, list[str]] = field(default_factory=dict)
    raw: bool = False
    notes: list[str] = field(default_factory=list)
    ignored: list[tuple[Change, Ignore]] = field(default_factory=list)
    unused_ignores: list[Ignore] = field(default_factory=list)
    filtered: int = 0
    #: What was compared: two protocol revisions' ``schema`` or two server ``surface`` snapshots.
    kind: str = "schema"
    #: ``--check-changelog``: the diff matched against the NEW revision's changelog.
    changelog: ChangelogCheck | None = None

    @property
    def entries(self) -> list[Entry]:
        return fold_changes(self.changes)


def keep(change: Change, minimum: Severity | None, only: str | None) -> bool:
    """``--severity`` keeps changes at least that severe; ``--only`` keeps exactly one kind."""
    if minimum is not None and change.severity.rank < minimum.rank:
        return False
    if only == "bindings":
        return change.bindings
    return only is None or change.severity.value == only


def apply_filters(
    report: Report, minimum: Severity | None, only: str | None, ignores: list[Ignore]
) -> Report:
    """Drop what the filters exclude, then what an ignore accepts; note unused ignores."""
    kept = [c for c in report.changes if keep(c, minimum, only)]
    report.filtered = len(report.changes) - len(kept)
    used: set[int] = set()
    remaining: list[Change] = []
    for change in kept:
        match = next((i for i, ignore in enumerate(ignores) if ignore.matches(change)), None)
        if match is None:
            remaining.append(change)
        else:
            used.add(match)
            report.ignored.append((change, ignores[match]))
    report.changes = remaining
    report.unused_ignores = [ignore for i, ignore in enumerate(ignores) if i not in used]
    return report


def should_fail(changes: list[Change], fail_on: str) -> bool:
    """Exit status 1 when a remaining change is at least ``fail_on`` (or breaks the bindings)."""
    if fail_on == "never":
        return False
    if fail_on == "bindings":
        return any(c.bindings for c in changes)
    threshold = Severity(fail_on).rank
    return any(c.severity.rank >= threshold for c in changes)


def failing(entry: Entry, fail_on: str) -> bool:
    return should_fail([entry.change], fail_on)


SUBJECTS = [s.value for s in Subject]
