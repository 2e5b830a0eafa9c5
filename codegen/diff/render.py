"""Show a diff report as text (a terminal screen), Markdown (release notes) or JSON (tools).

Text is grouped the way a maintainer reads a revision: methods, notifications, capabilities, then
definitions, worst first within each; plain additions of definitions are folded into one line.
Markdown is grouped by severity, because release notes lead with what breaks. JSON is one object
per folded entry with the stable fields of ``Change.to_json`` plus ``count`` and ``paths``, as
``report.schema.json`` publishes it.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections import Counter
from itertools import groupby
from typing import Any

import click

from .formats_changelog import changelog_lines, changelog_markdown
from .model import Change, Subject
from .origins import mark
from .report import Report, fold_changes, should_fail
from .rules import Rule, Severity

_COLOURS = {
    Severity.BREAKING: "red",
    Severity.POTENTIALLY_BREAKING: "yellow",
    Severity.COMPATIBLE: "green",
}
_HEADINGS = {
    Subject.DOCUMENT: "Document",
    Subject.DEPRECATION: "Deprecations",
    Subject.METHOD: "Methods",
    Subject.NOTIFICATION: "Notifications",
    Subject.CAPABILITY: "Capabilities",
    Subject.DEFINITION: "Definitions",
    Subject.TOOL: "Tools",
    Subject.RESOURCE: "Resources",
    Subject.RESOURCE_TEMPLATE: "Resource templates",
    Subject.PROMPT: "Prompts",
}
_SEVERITY_TITLES = {
    Severity.BREAKING: "Breaking changes",
    Severity.POTENTIALLY_BREAKING: "Potentially breaking changes",
    Severity.COMPATIBLE: "Compatible changes",
}
_WIDTH = len(Severity.POTENTIALLY_BREAKING.value)
# Folded entries are split by message flow (so folding is symmetric); the count says which.
_FLOW_LABELS = {
    "client_to_server": ", client -> server",
    "server_to_client": ", server -> client",
    "both": ", both ways",
}
# Messages never start a line, so only inline markup needs escaping.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<|])")


def summary(changes: list[Change]) -> dict[str, int]:
    """Counts by severity, and of changes that break code importing the bindings."""
    counts = Counter(c.severity for c in changes)
    return {
        "total": len(changes),
        **{s.value: counts.get(s, 0) for s in reversed(Severity)},
        "bindings": sum(1 for c in changes if c.bindings),
    }


def _summary_line(changes: list[Change], bindings_too: bool = True) -> str:
    counts = summary(changes)
    if not changes:
        return "no changes"
    parts = ", ".join(f"{counts[s.value]} {s.value}" for s in reversed(Severity))
    total, bindings = counts["total"], counts["bindings"]
    plural = "change" if total == 1 else "changes"
    verb = "affects" if bindings == 1 else "affect"
    if not bindings_too:  # a server's surface has no generated bindings
        return f"{total} {plural} ({parts})"
    return f"{total} {plural} ({parts}); {bindings} {verb} the bindings"


def _is_plain_addition(change: Change) -> bool:
    return change.rule is Rule.DEFINITION_ADDED


def _is_quiet(change: Change) -> bool:
    """A definition change that breaks nobody: listed by path only unless ``verbose``."""
    return (
        change.subject is Subject.DEFINITION
        and change.severity is Severity.COMPATIBLE
        and not change.bindings
    )


def preamble(report: Report) -> list[str]:
    """Lines every human format prints first: fix-ups per side (or --raw), notes, ignores."""
    if report.raw:
        lines = ["raw: upstream bytes compared as published, no fix-ups applied"]
    elif not report.fixups:
        lines = []  # server snapshots: no schema, so no fix-ups
    else:
        sides = [
            f"{label}: {', '.join(names) if names else 'none'}"
            for label, names in report.fixups.items()
        ]
        lines = [f"fix-ups applied ({'; '.join(sides)}); --raw compares without them"]
    lines += report.notes
    if report.filtered:
        lines.append(f"{report.filtered} change(s) hidden by --severity/--only")
    if report.ignored:
        lines.append(f"{len(report.ignored)} change(s) accepted by the ignore file")
    lines += [f"unused ignore: {i.rule} {i.path} ({i.reason})" for i in report.unused_ignores]
    return lines


def render_text(report: Report, color: bool = True, verbose: bool = False) -> str:
    """One screen per revision step: a summary line, then changes grouped by subject and name.

    Changes with the same rule and message are folded into one line with their paths. Definition
    changes that break nobody (an optional property added, a definition added) are folded into
    one line per rule unless ``verbose``. With ``color`` the text carries ANSI styles;
    ``click.echo`` drops them when stdout is not a terminal.
    """
    changes = report.changes
    counted = _summary_line(changes, bindings_too=report.kind != "surface")
    title = f"mcpbind diff {report.old} -> {report.new}: {counted}"
    lines = [_paint(title, color, bold=True), *_tally(changes, color)]
    lines += [f"  {line}" for line in preamble(report)]
    for subject, in_subject in groupby(changes, key=lambda c: c.subject):
        group = list(in_subject)
        lines += ["", _paint(_HEADINGS[subject], color, bold=True, underline=True)]
        shown = [c for c in group if verbose or not _is_quiet(c)]
        entries = fold_changes(shown)
        for entry in (e for e in entries if e.count > 1):
            flow = _FLOW_LABELS.get(entry.change.direction or "", "")
            count = f" ({entry.count} places{flow})"
            lines.append("  " + _text_line(entry.change, "", color, count))
            lines += textwrap.wrap(
                ", ".join(entry.paths),
                width=100,
                initial_indent="      at ",
                subsequent_indent="         ",
                break_on_hyphens=False,
            )
        singles = [e.change for e in entries if e.count == 1]
        for name, named in groupby(singles, key=lambda c: c.name):
            lines.append(f"  {_paint(name, color, bold=True)}")
            lines += ["    " + _text_line(change, name, color) for change in named]
        quiet = sorted(
            (c for c in group if not verbose and _is_quiet(c)),
            key=lambda c: (c.rule, c.origin or ""),
        )
        if quiet:
            label = _paint(f"compatible, bindings unaffected ({len(quiet)})", color, fg="green")
            lines.append(f"  {label}:")
        for (rule, origin), same in groupby(quiet, key=lambda c: (c.rule, c.origin)):
            paths = [c.path for c in same]
            text = f"{rule.value}{mark(origin)} ({len(paths)}): {', '.join(paths)}"
            lines += textwrap.wrap(
                text, width=100, initial_indent="    ", subsequent_indent="      "
            )
    if report.changelog is not None:
        lines += changelog_lines(report.changelog)
    return "\n".join(lines) + "\n"


def _tally(changes: list[Change], color: bool) -> list[str]:
    """One line per severity counting its rules: the whole step at a glance."""
    lines: list[str] = []
    for severity in reversed(Severity):
        counts = Counter(c.rule.value for c in changes if c.severity is severity)
        if counts:
            label = _paint(f"{severity.value} ({counts.total()})", color, fg=_COLOURS[severity])
            # A no-break space keeps each "RULE count" pair on one line when wrapping.
            rules = ", ".join(f"{rule}\u00a0{n}" for rule, n in counts.most_common())
            width = 100 + len(label) - len(click.unstyle(label))
            wrapped = textwrap.wrap(
                f"{label}: {rules}", width=width, initial_indent="  ", subsequent_indent="    "
            )
            lines += [line.replace("\u00a0", " ") for line in wrapped]
    return lines


def _paint(
    text: str, color: bool, fg: str | None = None, bold: bool = False, underline: bool = False
) -> str:
    if not color:
        return text
    return click.style(text, fg=fg, bold=bold or None, underline=underline or None)


def _text_line(change: Change, name: str, color: bool, count: str = "") -> str:
    severity = _paint(change.severity.value.ljust(_WIDTH), color, fg=_COLOURS[change.severity])
    where = "" if count else change.path.removeprefix(name).removeprefix(".")
    head = f"{change.rule.value}{count} {where}".rstrip()
    bindings = _paint(" [bindings]", color, fg="magenta") if change.bindings else ""
    origin = _paint(mark(change.origin), color, fg="cyan")
    return f"{severity}  {head}: {change.message}{bindings}{origin}"


def _md(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def render_markdown(report: Report) -> str:
    """A changelog section to paste into release notes, most severe first, folded."""
    changes = report.changes
    what = "server surface" if report.kind == "surface" else "schema"
    lines = [f"## MCP {what} changes: {_md(report.old)} → {_md(report.new)}", ""]
    quoted = [f"> {_md(line)}" for line in preamble(report)]
    lines += [*quoted, ""] if quoted else []
    counts = summary(changes)
    checked = changelog_markdown(report.changelog) if report.changelog is not None else []
    if not changes:
        return "\n".join([*lines, "No changes.", *checked, ""])
    bindings = f" {counts['bindings']} change the generated bindings (marked *bindings*)."
    lines += [
        f"{counts['total']} changes: **{counts['breaking']} breaking**, "
        f"{counts['potentially-breaking']} potentially breaking, "
        f"{counts['compatible']} compatible." + ("" if report.kind == "surface" else bindings),
    ]
    for severity in reversed(Severity):
        chosen = [c for c in changes if c.severity is severity]
        if not chosen:
            continue
        lines += ["", f"### {_SEVERITY_TITLES[severity]}", ""]
        added: dict[str | None, list[str]] = {}
        for change in (c for c in chosen if _is_plain_addition(c)):
            added.setdefault(change.origin, []).append(change.name)
        for entry in fold_changes([c for c in chosen if not _is_plain_addition(c)]):
            change = entry.change
            flags = (" *bindings*" if change.bindings else "") + _md(mark(change.origin))
            where = ", ".join(f"`{p}`" for p in entry.paths)
            lines.append(f"- {where}: {_md(change.message)} (`{change.rule.value}`){flags}")
        for origin, names in added.items():
            listed = ", ".join(f"`{n}`" for n in names)
            lines.append(f"- New definitions{_md(mark(origin))}: {listed}")
    return "\n".join([*lines, *checked]) + "\n"


def report_document(report: Report, fail_on: str) -> dict[str, Any]:
    """The document ``report.schema.json`` describes: folded entries plus everything around them.
    JSON and YAML print the same document."""
    document: dict[str, Any] = {
        "schema_version": 1,
        "old": report.old,
        "new": report.new,
        "raw": report.raw,
        "fixups": report.fixups,
        "notes": report.notes,
        "summary": summary(report.changes),
        "fail_on": fail_on,
        "failed": should_fail(report.changes, fail_on),
        "entries": [e.to_json() for e in report.entries],
        "ignored": [
            {"rule": c.rule.value, "path": c.path, "reason": i.reason} for c, i in report.ignored
        ],
        "unused_ignores": [i.to_json() for i in report.unused_ignores],
    }
    if report.changelog is not None:
        document["changelog"] = report.changelog.to_json()
    return document


def render_json(report: Report, fail_on: str) -> str:
    """``report_document`` as indented JSON."""
    return json.dumps(report_document(report, fail_on), indent=2, ensure_ascii=False) + "\n"
