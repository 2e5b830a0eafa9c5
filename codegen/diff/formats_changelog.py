"""The ``--check-changelog`` findings as the human formats print them (text, Markdown, one line
each). JSON and YAML carry ``ChangelogCheck.to_json``; HTML renders from the same lists."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from .changelog_check import ChangelogCheck

__all__ = [
    "changelog_github",
    "changelog_junit",
    "changelog_lines",
    "changelog_markdown",
    "changelog_singleline",
    "headline",
]

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


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def changelog_github(check: ChangelogCheck, fails: bool) -> list[str]:
    """Workflow command lines: a notice with the counts, then one annotation per finding, an
    ``error`` when ``--fail-on-changelog`` makes findings fail the run, else a ``warning``."""
    level = "error" if fails else "warning"
    title = _escape_property(f"mcpbind diff changelog check ({check.revision})")
    lines = [f"::notice title={title}::{_escape_data(headline(check))}"]
    lines += [
        f"::{level} title={_escape_property(f'CHANGELOG_UNMENTIONED {c.path}')}::"
        + _escape_data(f"{c.rule.value} is breaking and the changelog does not mention it")
        for c in check.unmentioned
    ]
    lines += [
        f"::{level} title={_escape_property(f'CHANGELOG_UNBACKED {e.label}')}::"
        + _escape_data(f"no change backs this entry: {e.summary()}")
        for e in check.unbacked
    ]
    return lines


def changelog_junit(document: str, check: ChangelogCheck, fails: bool) -> str:
    """``document`` (the JUnit XML of the diff) with a second suite: one case per finding, failed
    when ``--fail-on-changelog`` makes findings fail the run."""
    suites = ET.fromstring(document.split("?>", 1)[1] if document.startswith("<?xml") else document)
    cases = [
        (f"CHANGELOG_UNMENTIONED {c.path}", f"{c.rule.value} is breaking and not mentioned")
        for c in check.unmentioned
    ]
    cases += [(f"CHANGELOG_UNBACKED {e.label}", e.summary(200)) for e in check.unbacked]
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=f"changelog check ({check.revision})",
        tests=str(len(cases)),
        failures=str(len(cases) if fails else 0),
        errors="0",
        skipped="0",
    )
    for name, message in cases:
        case = ET.SubElement(suite, "testcase", classname="mcpbind.diff.changelog", name=name)
        if fails:
            ET.SubElement(case, "failure", type=name.split(" ", 1)[0], message=message)
        else:
            ET.SubElement(case, "system-out").text = message
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )
