"""The ``--check-changelog`` findings as the human formats print them (text, Markdown, one line
each). JSON and YAML carry ``ChangelogCheck.to_json``; HTML renders from the same lists."""

from __future__ import annotations

import re

from .changelog_check import ChangelogCheck

__all__ = ["changelog_lines", "changelog_markdown", "changelog_singleline", "headline"]

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<|])")
UNMENTIONED = "breaking, not in the changelog"
UNBACKED = "changelog entry no change backs"


def headline(check: ChangelogCheck) -> str:
    """One sentence of counts."""
    n = check.counts()
    return (
        f"{n['entries']} entries: {n['backed']} backed by a change, {n['unbacked']} unbacked, "
        f"{n['prose']} prose (not checkable); {n['breaking']} breaking changes, "
        f"{n['unmentioned']} not mentioned"
    )


def changelog_lines(check: ChangelogCheck) -> list[str]:
    """The text format's section."""
    lines = ["", f"Changelog check ({check.revision}): {headline(check)}"]
    lines += [f"  {UNMENTIONED}: {c.rule.value} {c.path}" for c in check.unmentioned]
    lines += [f"  {UNBACKED}: {e.label}: {e.summary()}" for e in check.unbacked]
    return lines


def _md(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def changelog_markdown(check: ChangelogCheck) -> list[str]:
    """The Markdown section: a headline, then one table row per finding."""
    lines = ["", f"### Changelog check: {_md(check.revision)}", "", headline(check) + "."]
    if check.clean:
        return lines
    lines += ["", "| finding | where | what |", "| --- | --- | --- |"]
    lines += [f"| {UNMENTIONED} | `{c.path}` | `{c.rule.value}` |" for c in check.unmentioned]
    lines += [f"| {UNBACKED} | {_md(e.label)} | {_md(e.summary())} |" for e in check.unbacked]
    return lines


def changelog_singleline(check: ChangelogCheck) -> list[str]:
    """One line per finding, in the form of the singleline format's change lines."""
    lines = [
        f"changelog CHANGELOG_UNMENTIONED {c.path}: {c.rule.value} is breaking and the "
        f"{check.revision} changelog does not mention it"
        for c in check.unmentioned
    ]
    lines += [
        f"changelog CHANGELOG_UNBACKED {e.label}: no change backs this entry: {e.summary()}"
        for e in check.unbacked
    ]
    return lines
