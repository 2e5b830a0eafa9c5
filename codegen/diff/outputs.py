"""The output formats added to ``mcpbind diff`` beside its first five (yaml, html, singleline),
``mcpbind diff schema``, and where ``--check-changelog`` finds the NEW side's changelog.

The changelog of a pinned revision is its vendored ``changelog.md``, checked against the pin's
``changelog_sha256`` like every pinned file; for a schema file, ``changelog.md`` beside it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..errors import CodegenError
from ..ir import RevisionIR
from ..load import load_changelog
from .changelog_check import ChangelogCheck, check_changelog
from .ci_formats import render_github, render_junit
from .formats_changelog import changelog_github, changelog_junit
from .formats_html import render_html
from .formats_singleline import render_singleline
from .formats_yaml import render_yaml
from .layers import split_spec
from .model import Change
from .report import Report

# The package whose files these are (``__package__`` is optional to a checker).
_PACKAGE = __name__.rpartition(".")[0]

__all__ = [
    "CHANGELOG_EXIT",
    "OUTPUT_FORMATS",
    "changelog_of",
    "render_output",
    "report_schema_text",
]

OUTPUT_FORMATS = ("yaml", "html", "singleline")
#: The exit status of ``--fail-on-changelog`` when the check finds something.
CHANGELOG_EXIT = 3


def render_output(
    report: Report, fmt: str, fail_on: str, fail_on_changelog: bool = False
) -> str | None:
    """The report in one of ``OUTPUT_FORMATS``, or in ``github``/``junit`` with the changelog
    check's findings; None when the command's own renderers print it as it is."""
    check = report.changelog
    fails = fail_on_changelog and check is not None and not check.clean
    if fmt == "github" and check is not None:
        lines = changelog_github(check, fails)
        return render_github(report, fail_on) + "".join(f"{line}\n" for line in lines)
    if fmt == "junit" and check is not None:
        return changelog_junit(render_junit(report, fail_on), check, fails)
    if fmt == "yaml":
        return render_yaml(report, fail_on)
    if fmt == "html":
        return render_html(report, fail_on)
    if fmt == "singleline":
        return render_singleline(report)
    return None


def report_schema_text() -> str:
    """``report.schema.json`` as the package carries it (``mcpbind diff schema``)."""
    return resources.files(_PACKAGE).joinpath("report.schema.json").read_text("utf-8")


def _changelog_text(spec: str) -> tuple[str, str]:
    base, _ = split_spec(spec)
    path = Path(base)
    if path.exists() or base.endswith(".json"):
        candidate = (path if path.is_dir() else path.parent) / "changelog.md"
        try:
            return candidate.read_text(encoding="utf-8"), str(candidate)
        except OSError:
            raise CodegenError(f"--check-changelog: no readable {candidate}") from None
    text = load_changelog(base)
    if text is None:
        raise CodegenError(f"--check-changelog: revision {base} has no changelog pinned")
    return text, f"schema/{base}/changelog.md"


def changelog_of(
    new: str, changes: list[Change], irs: tuple[RevisionIR, RevisionIR]
) -> ChangelogCheck:
    """The diff's ``changes`` matched against the changelog of the NEW side ``new``."""
    text, source = _changelog_text(new)
    return check_changelog(changes, text, irs[1].revision, source, irs)
