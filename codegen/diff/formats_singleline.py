"""``--format singleline``: one line per change, ``severity RULE path: message``, for grep and
for tools that read one finding a line; `` [tasks]`` ends a change an extension brought. Nothing
is folded; the changelog check's findings, when asked for, follow with ``changelog`` in place of
the severity."""

from __future__ import annotations

from .formats_changelog import changelog_singleline
from .origins import mark
from .report import Report

__all__ = ["render_singleline"]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def render_singleline(report: Report) -> str:
    """Every remaining change on its own line, in the report's order."""
    lines = [
        _one_line(f"{c.severity.value} {c.rule.value} {c.path}: {c.message}{mark(c.origin)}")
        for c in report.changes
    ]
    if report.changelog is not None:
        lines += [_one_line(line) for line in changelog_singleline(report.changelog)]
    return "".join(f"{line}\n" for line in lines)
