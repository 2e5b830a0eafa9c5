"""The ``mcpbind diff`` config file: severity overrides, ignores, the default ``--fail-on``.

Read from ``--config FILE``, else ``mcpbind-diff.toml`` in the working directory, else the
``[tool.mcpbind.diff]`` table of ``pyproject.toml`` there (a ``pyproject.toml`` without it is
no config)::

    fail-on = "potentially-breaking"     # the default --fail-on; the option still wins

    [severity]                           # selector -> error | warning | info | off
    MAXIMUM_INCREASED = "error"
    "area:dialect" = "off"
    docs = "info"

    [[ignore]]                           # as in an --ignore file
    rule = "kind:constraints"
    path = "CreateMessageRequestParams.*"
    reason = "our server clamps these itself"

A severity key is a selector (``taxonomy``): a rule ID, a glob, a tag, a category, or an origin
(``extension``, ``extension:tasks``: the changes an extension brought, whatever their rule). The levels
are the severities under CI's names (error: breaking, warning: potentially-breaking, info:
compatible); ``off`` drops the change. When several keys name a rule, the most specific wins (an
ID over a glob, a tag, a category), then the later one. An unknown key, level or rule ID is an
error (exit status 2) naming the closest rule ID or tag.
"""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import CodegenError
from ..jsonvalues import is_object
from .model import Change
from .report import FAIL_ON, Ignore, Report, parse_ignores
from .rules import Rule, Severity
from .taxonomy import Selection, SelectorError, select, specificity

__all__ = ["CONFIG_NAME", "LEVELS", "DiffConfig", "Override", "apply_levels", "find_config"]

CONFIG_NAME = "mcpbind-diff.toml"
LEVELS: dict[str, Severity | None] = {
    "error": Severity.BREAKING,
    "warning": Severity.POTENTIALLY_BREAKING,
    "info": Severity.COMPATIBLE,
    "off": None,
}
_KEYS = ("fail-on", "severity", "ignore")


@dataclass(frozen=True)
class Override:
    """One line of ``[severity]``: what a selector names, and its level."""

    selector: str
    selection: Selection
    level: str
    rank: tuple[int, int]


@dataclass(frozen=True)
class DiffConfig:
    """A parsed config; ``source`` None when none was found."""

    source: Path | None = None
    fail_on: str | None = None
    overrides: tuple[Override, ...] = ()
    ignores: tuple[Ignore, ...] = ()

    def level_of(self, rule: Rule, origin: str | None = None) -> str | None:
        """The level the most specific override naming a change of ``rule`` from ``origin``
        (None: the revision) sets, if any."""
        found = [o for o in self.overrides if o.selection.matches(rule, origin)]
        return max(found, key=lambda o: o.rank).level if found else None


def find_config(explicit: Path | None, cwd: Path) -> DiffConfig:
    """The config of ``explicit``, else of ``cwd``'s ``mcpbind-diff.toml`` or ``pyproject.toml``."""
    if explicit is not None:
        return _parse(_read(explicit), explicit, pyproject=explicit.name == "pyproject.toml")
    own = cwd / CONFIG_NAME
    if own.is_file():
        return _parse(_read(own), own, pyproject=False)
    pyproject = cwd / "pyproject.toml"
    if pyproject.is_file():
        return _parse(_read(pyproject), pyproject, pyproject=True)
    return DiffConfig()


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CodegenError(f"cannot read config {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CodegenError(f"{path}: not valid TOML: {exc}") from None


def _parse(document: dict[str, Any], path: Path, pyproject: bool) -> DiffConfig:
    where = str(path)
    if pyproject:
        table = document.get("tool", {}).get("mcpbind", {}).get("diff")
        if table is None:
            return DiffConfig()
        where = f"{path} [tool.mcpbind.diff]"
    else:
        table = document
    if not is_object(table):
        raise CodegenError(f"{where}: expected a table")
    for key in table:
        if key not in _KEYS:
            close = difflib.get_close_matches(key, _KEYS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise CodegenError(f"{where}: unknown key {key!r}{hint} (keys: {', '.join(_KEYS)})")
    fail_on = table.get("fail-on")
    if fail_on is not None and fail_on not in FAIL_ON:
        raise CodegenError(f"{where}: fail-on must be one of {', '.join(FAIL_ON)}")
    severity = table.get("severity", {})
    if not is_object(severity):
        raise CodegenError(f"{where}: [severity] must be a table of selector = level")
    overrides: list[Override] = []
    for index, (selector, level) in enumerate(severity.items()):
        if level not in LEVELS:
            raise CodegenError(
                f"{where}: [severity] {selector}: level {level!r} is not one of {', '.join(LEVELS)}"
            )
        try:
            selection = select(selector)
        except SelectorError as exc:
            raise CodegenError(f"{where}: [severity] {exc}") from None
        overrides.append(Override(selector, selection, level, (specificity(selector), index)))
    ignores = parse_ignores(table.get("ignore", []), where)
    return DiffConfig(path, fail_on, tuple(overrides), tuple(ignores))


def apply_levels(report: Report, config: DiffConfig) -> Report:
    """Re-level the report's changes as the config says; ``off`` drops them. Notes the counts."""
    if not config.overrides:
        return report
    kept: list[Change] = []
    relevelled = dropped = 0
    for change in report.changes:
        level = config.level_of(change.rule, change.origin)
        if level is None:
            kept.append(change)
            continue
        severity = LEVELS[level]
        if severity is None:
            dropped += 1
            continue
        if severity is not change.severity:
            relevelled += 1
            change = replace(change, severity=severity)
        kept.append(change)
    report.changes = kept
    if relevelled or dropped:
        report.notes.append(
            f"{config.source}: {relevelled} change(s) re-levelled, {dropped} turned off"
        )
    return report
