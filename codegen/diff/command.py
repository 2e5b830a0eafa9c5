"""The ``mcpbind diff OLD NEW`` command, and ``mcpbind diff rules``.

OLD and NEW are pinned revision names, or schema files (so one revision at two spec commits can
be compared), or two server-surface snapshots (``mcpbind inspect --json``, recognised by their
``format``): then the server's tools, resources, templates, prompts and capabilities are compared
for its clients (``surface.py``). Imports nothing of the code generator's extra (datamodel-code-generator, jinja2,
black): ``diff`` works after a plain ``pip install mcpbind``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import CodegenError
from ..ir import RevisionIR, build_ir
from ..load import LoadedSchema, load_file, load_revision, load_schema_ts
from . import diff_revisions
from .changelog_check import ChangelogCheck
from .ci_formats import render_github, render_junit
from .config import apply_levels, find_config
from .documents import SideInfo, compare_documents, deprecations
from .layers import Layered, gate, layer, split_spec
from .listing import render_rules
from .origins import attribute
from .outputs import (
    CHANGELOG_EXIT,
    OUTPUT_FORMATS,
    changelog_of,
    render_output,
    report_schema_text,
)
from .render import render_json, render_markdown, render_text
from .report import FAIL_ON, Report, apply_filters, parse_only, read_ignores, should_fail
from .rules import Severity
from .snapshot import is_snapshot, load_snapshot, read_json
from .surface import diff_surfaces

FORMATS = ("text", "markdown", "json", "github", "junit", *OUTPUT_FORMATS)
#: What `mcpbind diff rules --only extension` says beside its (complete) list.
ORIGIN_NOTE = (
    "an origin selector (extension, area:extension, extension:NAME) selects changes by where "
    "they come from, an extension schema layered over a revision, whatever their rule: every "
    "rule is listed"
)
SEVERITIES = tuple(s.value for s in Severity)


def _load(spec: str) -> Layered:
    """``spec`` with its extensions layered over it (``layers``)."""
    base, extensions = split_spec(spec)
    return layer(_load_base(base), extensions)


def _load_base(spec: str) -> LoadedSchema:
    """A path (existing, or ending in .json) is a schema file; anything else a pinned revision."""
    path = Path(spec)
    if not (path.exists() or spec.endswith(".json")):
        return load_revision(spec)
    if path.is_dir():
        path = path / "schema.json"
    name = path.stem if path.stem != "schema" else path.resolve().parent.name
    return load_file(path, name)


def load_ir(spec: str, raw: bool = False) -> tuple[RevisionIR, str]:
    """The IR for ``spec`` and a label for it; ``CodegenError`` for anything unusable."""
    ir, side = load_side(spec, raw)
    return ir, side.label


def load_side(spec: str, raw: bool = False) -> tuple[RevisionIR, SideInfo]:
    """The IR of ``spec`` and what the diff reads beside it (dialect, schema.ts, fix-ups)."""
    layered = _load(spec)
    loaded = layered.loaded
    try:
        ir = gate(build_ir(loaded, fixups=not raw), layered)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        if loaded.pin is not None:
            raise  # a pinned, verified schema that fails is a bug in mcpbind, not bad input
        raise CodegenError(
            f"{loaded.source}: not an MCP schema mcpbind understands ({exc!r})"
        ) from None
    label = ir.revision if loaded.pin is not None else f"{ir.revision} ({loaded.source})"
    label += layered.label_suffix
    ts, where = load_schema_ts(loaded)
    notes = layered.notes
    notes += () if ts is not None else (f"{label}: deprecations not compared ({where})",)
    dialect = loaded.document.get("$schema")
    info = SideInfo(
        label=label,
        dialect=dialect if isinstance(dialect, str) else None,
        deprecated=deprecations(ts) if ts is not None else None,
        fixups=tuple(f.name for f in ir.fixups),
        notes=notes,
        origins=layered.origins.with_hoisted(ir),
    )
    return ir, info


def _snapshot(spec: str) -> tuple[Path, object] | None:
    """The path and document of ``spec`` when it names a server-surface snapshot file."""
    path = Path(spec)
    if not path.is_file():
        return None
    document = read_json(path)
    return (path, document) if is_snapshot(document) else None


def build_surface_report(
    old: tuple[Path, object], new: tuple[Path, object], include_descriptions: bool
) -> Report:
    """The report of two server-surface snapshots; a note when their protocol revisions differ."""
    before, after = load_snapshot(*old), load_snapshot(*new)
    notes: list[str] = []
    if before["revision"] != after["revision"]:
        notes.append(
            f"protocol revision {after['revision']} (was {before['revision']}): "
            f"`mcpbind diff {before['revision']} {after['revision']}` lists what that changes"
        )
    return Report(
        old=str(old[0]),
        new=str(new[0]),
        changes=diff_surfaces(before, after, include_descriptions),
        notes=notes,
        kind="surface",
    )


def build_report(old: str, new: str, raw: bool, include_descriptions: bool) -> Report:
    old_snapshot, new_snapshot = _snapshot(old), _snapshot(new)
    if old_snapshot is not None and new_snapshot is not None:
        if raw:
            raise CodegenError("--raw compares schemas; it means nothing for server snapshots")
        return build_surface_report(old_snapshot, new_snapshot, include_descriptions)
    if old_snapshot is not None or new_snapshot is not None:
        one, other = (old, new) if old_snapshot is not None else (new, old)
        raise CodegenError(
            f"{one} is a server snapshot but {other} is not: compare two snapshots "
            "(mcpbind inspect --json) or two schemas"
        )
    old_ir, old_side = load_side(old, raw)
    new_ir, new_side = load_side(new, raw)
    extra = compare_documents(old_side, new_side)
    changes = diff_revisions(old_ir, new_ir, include_descriptions, extra)
    changes = attribute(changes, old_side.origins, new_side.origins)
    return Report(
        old=old_side.label,
        new=new_side.label,
        changes=changes,
        fixups={old_side.label: list(old_side.fixups), new_side.label: list(new_side.fixups)},
        raw=raw,
        notes=[*old_side.notes, *new_side.notes],
    )


@click.command("diff")
@click.argument("old")
@click.argument("new", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text for a terminal, markdown for release notes, json for tools "
    "(`mcpbind diff schema`) and yaml the same document, github for workflow annotations, junit "
    "for test reports, html for one self-contained page, singleline for one line per change.",
)
@click.option(
    "--severity",
    type=click.Choice(SEVERITIES),
    default=None,
    help="Show only changes at least this severe.",
)
@click.option(
    "--ignore",
    "ignore_file",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML file of accepted changes: [[ignore]] rule, path (glob), reason (required).",
)
# Rule selection and the config file (docs/diff-rules.md).
@click.option(
    "--only",
    multiple=True,
    metavar="SELECTOR",
    help="Show only these changes: breaking, potentially-breaking, compatible, bindings, or "
    "rules by ID (MAXIMUM_*), tag (area:constraint) or category (wire, docs...), or by origin "
    "(extension, extension:tasks: what an extension layered over a revision brought). Repeat "
    "or separate with commas. With `rules`: list only the rules selected.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Config file: [severity] overrides, [[ignore]], fail-on (default: ./mcpbind-diff.toml, "
    "else [tool.mcpbind.diff] in ./pyproject.toml).",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default=None,
    help="Exit with status 1 if a change that remains after filters and ignores is at least "
    "this severe (bindings: breaks code importing the bindings; never: always 0). Default: "
    "the config's fail-on, else breaking.",
)
@click.option(
    "--raw",
    is_flag=True,
    help="Compare the upstream bytes as published, without mcpbind's schema fix-ups.",
)
@click.option(
    "--include-descriptions", is_flag=True, help="Also report changes to descriptions only."
)
# --- diffout (issue 27 items 4-6): the changelog check; yaml, html, singleline in --format.
@click.option(
    "--check-changelog",
    is_flag=True,
    help="Also match the changes against NEW's own changelog.md: breaking changes it does not "
    "mention, entries no change backs (every format shows them).",
)
@click.option(
    "--fail-on-changelog",
    is_flag=True,
    help=f"With --check-changelog: exit with status {CHANGELOG_EXIT} when it finds something "
    "(and --fail-on does not already exit 1).",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Text format: list every change, not only those that break something.",
)
def diff_command(
    old: str,
    new: str | None,
    fmt: str,
    severity: str | None,
    ignore_file: Path | None,
    only: tuple[str, ...],
    config_file: Path | None,
    fail_on: str | None,
    raw: bool,
    include_descriptions: bool,
    check_changelog: bool,
    fail_on_changelog: bool,
    verbose: bool,
) -> None:
    """Show what changes from revision OLD to NEW, and what of it breaks clients, servers, or
    code importing the generated bindings. `mcpbind diff rules` lists every rule.

    OLD and NEW are pinned revision names (see `mcpbind revisions`) or paths to schema.json files;
    or two server snapshots written by `mcpbind inspect --json`, to compare what a server offers
    (tools, resources, templates, prompts, capabilities) as its clients see it.

    \b
    Exit status (for CI):
      0  no change at or above --fail-on remains after --severity/--only/--ignore
      1  some do (default --fail-on breaking: a breaking change nobody accepted)
      2  bad input (unknown revision, unreadable schema, malformed ignore file)
      3  with --fail-on-changelog: the changelog check found something, and 1 did not apply

    A side may layer pinned extension schemas over its revision: 2026-07-28+tasks,
    2025-11-25+apps@2.0.4, or an extension alone (tasks@2026-05-22, over the revision it
    extends). `mcpbind diff schema` prints the JSON Schema of --format json.
    """
    if old == "schema" and new is None:
        click.echo(report_schema_text(), nl=False)
        return
    check: ChangelogCheck | None = None
    try:
        selection = parse_only(only)
        if old == "rules" and new is None:
            listed = fmt if fmt in ("json", "markdown") else "text"
            click.echo(render_rules(listed, selection), nl=False)
            if selection is not None and selection.by_origin:
                click.echo(f"mcpbind: note: {ORIGIN_NOTE}", err=True)
            return
        if new is None:
            raise CodegenError("give two revisions (OLD NEW), or `mcpbind diff rules`")
        config = find_config(config_file, Path.cwd())
        ignores = [*config.ignores]
        ignores += read_ignores(ignore_file) if ignore_file is not None else []
        report = build_report(old, new, raw, include_descriptions)
        if (check_changelog or fail_on_changelog) and report.kind == "surface":
            raise CodegenError("--check-changelog reads a revision's changelog, not a server's")
        if check_changelog or fail_on_changelog:
            check = changelog_of(new, report.changes, (load_ir(old, raw)[0], load_ir(new, raw)[0]))
    except CodegenError as exc:
        click.echo(f"mcpbind: error: {exc}", err=True)
        sys.exit(2)
    fail_on = fail_on or config.fail_on or "breaking"
    minimum = Severity(severity) if severity else None
    report = apply_filters(apply_levels(report, config), minimum, selection, ignores)
    report.changelog = check
    try:
        output = render_output(report, fmt, fail_on, fail_on_changelog)
    except CodegenError as exc:
        click.echo(f"mcpbind: error: {exc}", err=True)
        sys.exit(2)
    if output is not None:
        click.echo(output, nl=False)
    elif fmt == "json":
        click.echo(render_json(report, fail_on), nl=False)
    elif fmt == "markdown":
        click.echo(render_markdown(report), nl=False)
    elif fmt == "github":
        click.echo(render_github(report, fail_on), nl=False)
    elif fmt == "junit":
        click.echo(render_junit(report, fail_on), nl=False)
    else:
        click.echo(render_text(report, color=True, verbose=verbose), nl=False)
    for unused in report.unused_ignores if fmt in ("text", "markdown") else []:
        click.echo(f"mcpbind: warning: unused ignore {unused.rule} {unused.path}", err=True)
    if should_fail(report.changes, fail_on):
        sys.exit(1)
    if fail_on_changelog and check is not None and not check.clean:
        sys.exit(CHANGELOG_EXIT)
