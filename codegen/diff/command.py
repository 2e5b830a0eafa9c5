"""The ``mcpbind diff OLD NEW`` command.

OLD and NEW are pinned revision names, or schema files (so one revision at two spec commits can
be compared). Exit status: 0, or 1 when ``--fail-on`` finds a change that bad (for CI), or 2 with
one line on stderr for bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import CodegenError
from ..ir import RevisionIR, build_ir
from ..load import LoadedSchema, load_file, load_revision
from . import diff_revisions
from .model import Change
from .render import render_json, render_markdown, render_text
from .rules import Severity

FORMATS = ("text", "markdown", "json")
FAIL_ON = ("breaking", "potentially-breaking", "bindings")


def _load(spec: str) -> LoadedSchema:
    """A path (existing, or ending in .json) is a schema file; anything else a pinned revision."""
    path = Path(spec)
    if not (path.exists() or spec.endswith(".json")):
        return load_revision(spec)
    if path.is_dir():
        path = path / "schema.json"
    name = path.stem if path.stem != "schema" else path.resolve().parent.name
    return load_file(path, name)


def load_ir(spec: str) -> tuple[RevisionIR, str]:
    """The IR for ``spec`` and a label for it; ``CodegenError`` for anything unusable."""
    loaded = _load(spec)
    try:
        ir = build_ir(loaded)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        if loaded.pin is not None:
            raise  # a pinned, verified schema that fails is a bug in mcpbind, not bad input
        raise CodegenError(
            f"{loaded.source}: not an MCP schema mcpbind understands ({exc!r})"
        ) from None
    label = ir.revision if loaded.pin is not None else f"{ir.revision} ({loaded.source})"
    return ir, label


def should_fail(changes: list[Change], fail_on: str | None) -> bool:
    """Whether ``--fail-on`` asks for exit status 1 given ``changes``."""
    if fail_on is None:
        return False
    if fail_on == "bindings":
        return any(c.bindings for c in changes)
    threshold = Severity(fail_on).rank
    return any(c.severity.rank >= threshold for c in changes)


@click.command("diff")
@click.argument("old")
@click.argument("new")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text for a terminal, markdown for release notes, json for tools.",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default=None,
    help="Exit with status 1 if a change is at least this severe (or breaks the bindings).",
)
@click.option(
    "--include-descriptions", is_flag=True, help="Also report changes to descriptions only."
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Text format: list every change, not only those that break something.",
)
def diff_command(
    old: str, new: str, fmt: str, fail_on: str | None, include_descriptions: bool, verbose: bool
) -> None:
    """Show what changes from revision OLD to NEW, and what of it breaks clients, servers, or
    code importing the generated bindings.

    OLD and NEW are pinned revision names (see `mcpbind revisions`) or paths to schema.json files.
    """
    try:
        old_ir, old_label = load_ir(old)
        new_ir, new_label = load_ir(new)
    except CodegenError as exc:
        click.echo(f"mcpbind: error: {exc}", err=True)
        sys.exit(2)
    changes = diff_revisions(old_ir, new_ir, include_descriptions=include_descriptions)
    if fmt == "json":
        click.echo(render_json(changes, old_label, new_label), nl=False)
    elif fmt == "markdown":
        click.echo(render_markdown(changes, old_label, new_label), nl=False)
    else:
        text = render_text(changes, old_label, new_label, color=True, verbose=verbose)
        click.echo(text, nl=False)
    if should_fail(changes, fail_on):
        sys.exit(1)
