"""``mcpbind generate``: schema -> bindings, or ``--check`` that ``generated/`` is up to date.

The pipeline needs the ``codegen`` extra; without it the command says so in one line (exit 2).
A progress line per revision goes to stderr when it is a terminal (or with ``--progress``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import ModuleType

import click

from ..errors import CodegenError
from ..load import LoadedSchema, load_file, load_revision
from ..pins import load_pins
from ..write import (
    drift,
    extra_packages,
    package_dir,
    package_drift,
    remove_files,
    remove_packages,
    unproduced,
    write_files,
)
from .common import PINS_OPTION, default_out, fail, guarded, pins_path

_REVISION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
EXTRA_HINT = "pip install 'mcpbind[codegen]'"
_EXTRA_MODULES = ("datamodel_code_generator", "jinja2", "black")


def _pipeline() -> ModuleType:
    try:
        from .. import pipeline
    except ImportError as exc:
        if exc.name and exc.name.split(".")[0] in _EXTRA_MODULES:
            fail(
                f"`mcpbind generate` needs the codegen extra ({exc.name} is missing): {EXTRA_HINT}"
            )
        raise
    return pipeline


@click.command("generate")
@click.argument("revisions", nargs=-1)
@click.option(
    "--schema",
    "schema_path",
    type=click.Path(path_type=Path),
    help="Generate from this schema file instead of a pinned revision.",
)
@click.option(
    "--revision",
    "revision_name",
    help="Revision name for --schema (default: the file's parent folder name).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder of the generated packages (default: generated/ of the source checkout; "
    "required outside one, so an installed package is never rewritten).",
)
@click.option(
    "--check", is_flag=True, help="Write nothing; exit 1 with a diff if the output folder differs."
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="A line per revision on stderr (default: when stderr is a terminal).",
)
@PINS_OPTION
def generate_command(
    revisions: tuple[str, ...],
    schema_path: Path | None,
    revision_name: str | None,
    out: Path | None,
    check: bool,
    progress: bool | None,
    pins: Path | None,
) -> None:
    """Generate bindings for REVISIONS (default: every pinned revision).

    Generating from the pins also removes the package (and index entry) of a revision that is
    no longer pinned, and any module the generator does not produce in the folders it writes;
    --check reports such a package or module, a missing one, and any file that differs.
    """
    pipeline = _pipeline()
    target = out or default_out()
    if target is None:
        fail(
            "--out is required outside a source checkout (an installed package is never rewritten)"
        )
    show = progress if progress is not None else sys.stderr.isatty()
    pins_file = pins_path(pins)
    pinned = [] if schema_path else list(guarded(lambda: load_pins(pins_file)))
    loaded = guarded(lambda: _inputs(revisions, schema_path, revision_name, pins_file))
    total = len(loaded)
    counter = iter(range(1, total + 1))

    def told(revision: str) -> None:
        if show:
            click.echo(f"mcpbind: generating {revision} ({next(counter)}/{total})", err=True)

    keep = None if schema_path else set(pinned)
    files = guarded(lambda: pipeline.generate(loaded, target, keep=keep, progress=told))
    names = ", ".join(s.revision for s in loaded)
    # The generator owns the modules of the packages it generates and of the root ("").
    owned = ["", *(package_dir(s.revision) for s in loaded)]
    if check:
        report = drift(target, files, owned)
        if not schema_path:
            report = package_drift(target, pinned, [s.revision for s in loaded]) + report
        if report:
            click.echo(report, nl=False)
            click.echo(
                f"mcpbind: {target} is not what the generator produces; run `mcpbind generate`",
                err=True,
            )
            sys.exit(1)
        click.echo(f"{target}: up to date ({names})")
        return
    removed = [] if schema_path else extra_packages(target, set(pinned))
    guarded(lambda: remove_packages(target, removed))
    stale = unproduced(target, files, owned)
    guarded(lambda: remove_files(target, stale))
    written = guarded(lambda: write_files(target, files))
    gone = f"; removed {', '.join(removed)} (no longer pinned)" if removed else ""
    gone += f"; removed {', '.join(stale)} (not produced)" if stale else ""
    click.echo(f"{target}: {len(written)} file(s) written for {names}{gone}")


def _inputs(
    revisions: tuple[str, ...],
    schema_path: Path | None,
    revision_name: str | None,
    pins: Path | None,
) -> list[LoadedSchema]:
    if schema_path is not None:
        if revisions:
            raise CodegenError("give either revision names or --schema, not both")
        name = revision_name or schema_path.resolve().parent.name
        loaded = load_file(schema_path, name)
        if not _REVISION_NAME.match(name):
            raise CodegenError(
                f"invalid revision name {name!r}: use letters, digits, '.', '_' or '-' (see --revision)"
            )
        return [loaded]
    if revision_name is not None:
        raise CodegenError("--revision names the revision of a --schema file; give --schema too")
    return [load_revision(rev, pins) for rev in revisions or tuple(load_pins(pins))]
