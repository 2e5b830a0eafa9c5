"""``--format html``: the report as one self-contained page, to attach to a CI run or a release.

Everything is in the one file: the style sheet is inline, there is no script, no font, no image
and no link to anything outside the page. Every piece of text from the schemas (paths, messages,
labels, changelog lines) is escaped, so a schema cannot put markup into the page.
"""

from __future__ import annotations

from html import escape

from .changelog_check import ChangelogCheck
from .formats_changelog import UNBACKED, UNMENTIONED, headline
from .origins import mark
from .render import preamble, summary
from .report import Report, failing
from .rules import Severity

__all__ = ["render_html"]

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; color: #222; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid #ddd; }
code { font: 12px/1.3 ui-monospace, monospace; }
.breaking { color: #a40000; } .potentially-breaking { color: #8a5a00; } .compatible { color: #256029; }
.fails { font-weight: bold; } .notes { color: #555; }
"""
_TITLES = {
    Severity.BREAKING: "Breaking changes",
    Severity.POTENTIALLY_BREAKING: "Potentially breaking changes",
    Severity.COMPATIBLE: "Compatible changes",
}


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _changes(report: Report, fail_on: str) -> list[str]:
    parts: list[str] = []
    entries = report.entries
    for severity in reversed(Severity):
        chosen = [e for e in entries if e.change.severity is severity]
        if not chosen:
            continue
        parts += [
            f'<h2 class="{severity.value}">{_TITLES[severity]} ({len(chosen)})</h2>',
            "<table><tr><th>rule</th><th>paths</th><th>change</th><th>bindings</th></tr>",
        ]
        for entry in chosen:
            change = entry.change
            fails = ' class="fails"' if failing(entry, fail_on) else ""
            paths = "<br>".join(f"<code>{_e(p)}</code>" for p in entry.paths)
            parts.append(
                f"<tr{fails}><td><code>{_e(change.rule.value)}</code></td><td>{paths}</td>"
                f"<td>{_e(change.message + mark(change.origin))}</td>"
                f"<td>{'yes' if change.bindings else ''}</td></tr>"
            )
        parts.append("</table>")
    return parts


def _changelog(check: ChangelogCheck) -> list[str]:
    parts = [f"<h2>Changelog check: {_e(check.revision)}</h2>", f"<p>{_e(headline(check))}.</p>"]
    if check.clean:
        return parts
    parts.append("<table><tr><th>finding</th><th>where</th><th>what</th></tr>")
    parts += [
        f"<tr><td>{UNMENTIONED}</td><td><code>{_e(c.path)}</code></td>"
        f"<td><code>{_e(c.rule.value)}</code>: {_e(c.message)}</td></tr>"
        for c in check.unmentioned
    ]
    parts += [
        f"<tr><td>{UNBACKED}</td><td>{_e(e.label)}</td><td>{_e(e.summary(200))}</td></tr>"
        for e in check.unbacked
    ]
    return [*parts, "</table>"]


def render_html(report: Report, fail_on: str) -> str:
    """The page: a heading, the counts, the notes, a table per severity, the changelog check."""
    counts = summary(report.changes)
    title = f"mcpbind diff {report.old} → {report.new}"
    numbers = ", ".join(f"{counts[s.value]} {s.value}" for s in reversed(Severity))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p>{counts['total']} changes ({_e(numbers)}); {counts['bindings']} affect the bindings. "
        f"Rows in bold fail the run (<code>--fail-on {_e(fail_on)}</code>).</p>",
    ]
    notes = preamble(report)
    if notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>")
    parts += _changes(report, fail_on) if report.changes else ["<p>No changes.</p>"]
    if report.changelog is not None:
        parts += _changelog(report.changelog)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
