"""What ``mcpbind diff`` shows after CI's filters: severity filters, an ignore file, folding.

The ignore file is TOML, one ``[[ignore]]`` table per accepted change::

    [[ignore]]
    rule = "METHOD_REMOVED"          # a rule ID, a glob, a tag or a category (`mcpbind diff rules`)
    path = "tasks/*"                 # an fnmatch glob over the change's path
    reason = "tasks left the core protocol; our server never used them"

``reason`` is mandatory, so every accepted break is explained in review. An ignore that matched
nothing is reported as unused, so the file shrinks when the schema does. Changes with the same
rule, severity, message, direction and origin are folded into one ``Entry`` with a count and
every path.
The direction is part of the key so that folding is symmetric: a message names who is hurt only
when someone is, so without it ``A -> B`` folds additions across flows that ``B -> A`` splits as
removals hurting different sides.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from ..errors import CodegenError
from ..jsonvalues import is_array, is_object
from .changelog_check import ChangelogCheck
from .model import Change, Subject
from .rules import Rule, Severity
from .taxonomy import TAGS, Selection, SelectorError, categories_of, select

ONLY = ("breaking", "potentially-breaking", "compatible", "bindings")
FAIL_ON = ("breaking", "potentially-breaking", "bindings", "never")


@dataclass(frozen=True)
class Ignore:
    """One accepted change: ``rule`` (a selector: an ID, a glob, a tag, a category, an origin
    such as ``extension``) and ``path`` (a glob) must both match."""

    rule: str
    path: str
    reason: str
    selection: Selection

    def matches(self, change: Change) -> bool:
        return self.selection.matches(change.rule, change.origin) and fnmatchcase(
            change.path, self.path
        )

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
    if set(table) - {"ignore"}:
        raise CodegenError(f"{path}: expected only [[ignore]] tables")
    return parse_ignores(table.get("ignore", []), str(path))


def parse_ignores(entries: object, where: str) -> list[Ignore]:
    """The ``[[ignore]]`` tables of an ignore or config file (``where`` names it in errors)."""
    if not is_array(entries):
        raise CodegenError(f"{where}: 'ignore' must be a list of [[ignore]] tables")
    out: list[Ignore] = []
    for number, entry in enumerate(entries, 1):
        at = f"{where}: ignore #{number}"
        if not is_object(entry) or set(entry) - {"rule", "path", "reason"}:
            raise CodegenError(f"{at}: keys are rule, path and reason")
        rule, glob, reason = entry.get("rule"), entry.get("path"), entry.get("reason")
        if not isinstance(rule, str):
            raise CodegenError(f"{at}: 'rule' (a rule ID, tag or category) is required")
        try:
            selected = select(rule)
        except SelectorError as exc:
            raise CodegenError(f"{at}: {exc}") from None
        if not isinstance(glob, str) or not glob:
            raise CodegenError(f"{at}: 'path' (a glob such as \"tasks/*\") is required")
        if not isinstance(reason, str) or not reason.strip():
            raise CodegenError(f"{at}: a non-empty 'reason' is required")
        out.append(Ignore(rule, glob, reason.strip(), selected))
    return out


@dataclass(frozen=True)
class Only:
    """``--only``: severity words (``breaking``... and ``bindings``, about each change) and
    selectors (IDs, tags, categories, origins). A change is kept when it matches one of the
    words (if any were given) and one of the selectors (if any were given)."""

    words: frozenset[str] = frozenset()
    selections: tuple[Selection, ...] | None = None

    def keeps(self, change: Change) -> bool:
        if self.words and not any(_is(change, word) for word in self.words):
            return False
        return self.selections is None or any(
            s.matches(change.rule, change.origin) for s in self.selections
        )

    @property
    def rules(self) -> frozenset[Rule] | None:
        """Every rule a selector names (None: no selector given)."""
        if self.selections is None:
            return None
        return frozenset(rule for s in self.selections for rule in s.rules)

    @property
    def by_origin(self) -> bool:
        """Whether a selector names changes by origin (``extension``), not only by rule."""
        return any(s.origin is not None for s in self.selections or ())


def _is(change: Change, word: str) -> bool:
    return change.bindings if word == "bindings" else change.severity.value == word


def parse_only(values: tuple[str, ...] | list[str]) -> Only | None:
    """``--only`` values (repeated or comma-separated); ``CodegenError`` for an unknown one."""
    items = [part.strip() for value in values for part in value.split(",") if part.strip()]
    if not items:
        return None
    words = frozenset(i for i in items if i in ONLY)
    selected: list[Selection] = []
    for item in items:
        if item in ONLY:
            continue
        try:
            selected.append(select(item))
        except SelectorError as exc:
            raise CodegenError(f"--only: {exc}") from None
    return Only(words, tuple(selected) if selected else None)


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
            "tags": TAGS[self.change.rule].to_json(),
            "categories": categories_of(self.change.rule, self.change.origin),
            "count": self.count,
            "paths": list(self.paths),
            "directions": list(self.directions),
        }


def fold_changes(changes: list[Change]) -> list[Entry]:
    """One entry per (subject, rule, severity, bindings, message, direction, origin), in
    first-seen order: the same partition of paths whichever way the two revisions are compared."""
    groups: dict[tuple[Any, ...], list[Change]] = {}
    for change in changes:
        key = (
            change.subject,
            change.rule,
            change.severity,
            change.bindings,
            change.message,
            change.direction,
            change.origin,
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
    fixups: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    raw: bool = False
    notes: list[str] = field(default_factory=list[str])
    ignored: list[tuple[Change, Ignore]] = field(default_factory=list[tuple[Change, Ignore]])
    unused_ignores: list[Ignore] = field(default_factory=list[Ignore])
    filtered: int = 0
    #: What was compared: two protocol revisions' ``schema`` or two server ``surface`` snapshots.
    kind: str = "schema"
    #: ``--check-changelog``: the diff matched against the NEW revision's changelog.
    changelog: ChangelogCheck | None = None

    @property
    def entries(self) -> list[Entry]:
        return fold_changes(self.changes)


def keep(change: Change, minimum: Severity | None, only: Only | None) -> bool:
    """``--severity`` keeps changes at least that severe; ``--only`` what it names."""
    if minimum is not None and change.severity.rank < minimum.rank:
        return False
    return only is None or only.keeps(change)


def apply_filters(
    report: Report, minimum: Severity | None, only: Only | None, ignores: list[Ignore]
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
