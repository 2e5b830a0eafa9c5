"""CI output of ``mcpbind diff``: GitHub Actions workflow commands and JUnit XML.

``github`` prints one ``::error``/``::warning``/``::notice`` line per folded entry (error for what
fails the run under ``--fail-on``), which the Actions runner turns into annotations. ``junit`` is
one test case per folded entry, failed when the entry fails the run, for CI systems that show test
reports.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from .origins import mark
from .report import Entry, Report, failing
from .rules import Severity

_LEVEL = {
    Severity.BREAKING: "error",
    Severity.POTENTIALLY_BREAKING: "warning",
    Severity.COMPATIBLE: "notice",
}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _title(entry: Entry) -> str:
    where = entry.paths[0] if entry.count == 1 else f"{entry.count} places"
    return f"{entry.change.rule.value} {where}"


def _body(entry: Entry) -> str:
    text = entry.change.message + mark(entry.change.origin)
    if entry.count > 1:
        text += f" (at {', '.join(entry.paths)})"
    return text


def render_github(report: Report, fail_on: str) -> str:
    """Workflow command lines; an entry that fails the run is always an ``error``."""
    lines = [f"::notice title=mcpbind diff::{_escape_data(line)}" for line in _context(report)]
    for entry in report.entries:
        level = "error" if failing(entry, fail_on) else _LEVEL[entry.change.severity]
        if level == "error" and not failing(entry, fail_on):
            level = "warning"  # breaking, but --fail-on says it does not fail this run
        title = _escape_property(f"{_title(entry)} ({report.old} -> {report.new})")
        lines.append(f"::{level} title={title}::{_escape_data(_body(entry))}")
    return "".join(f"{line}\n" for line in lines)


def _context(report: Report) -> list[str]:
    lines = [f"unused ignore: {i.rule} {i.path} ({i.reason})" for i in report.unused_ignores]
    return lines + report.notes


def render_junit(report: Report, fail_on: str) -> str:
    """A JUnit XML document: one suite for the step, one case per folded entry."""
    entries = report.entries
    failures = sum(1 for e in entries if failing(e, fail_on))
    suites = ET.Element("testsuites", name="mcpbind diff")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=f"{report.old} -> {report.new}",
        tests=str(len(entries)),
        failures=str(failures),
        errors="0",
        skipped="0",
    )
    for entry in entries:
        change = entry.change
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"mcpbind.diff.{change.subject.value}",
            name=_title(entry),
        )
        if failing(entry, fail_on):
            failure = ET.SubElement(case, "failure", type=change.rule.value, message=change.message)
            failure.text = "\n".join(
                [f"severity: {change.severity.value}", *(f"at {p}" for p in entry.paths)]
            )
        else:
            out = ET.SubElement(case, "system-out")
            out.text = f"{change.severity.value}: {_body(entry)}"
    for unused in report.unused_ignores:
        case = ET.SubElement(suite, "testcase", classname="mcpbind.diff.ignore", name="unused")
        out = ET.SubElement(case, "system-out")
        out.text = f"unused ignore: {unused.rule} {unused.path} ({unused.reason})"
    suite.set("tests", str(len(entries) + len(report.unused_ignores)))
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )
