"""The ``mcpbind`` command line: ``generate``, ``revisions`` (and ``diff``).

Bad input is one line on stderr and exit status 2; ``generate --check`` exits 1 on drift. Only
``CodegenError`` is expected from the pipeline; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeVar

import click

from .checkout import default_out
from .diff.command import diff_command
from .errors import CodegenError
from .load import LoadedSchema, load_file, load_revision
from .pins import load_pins
from .pipeline import generate, package_dir
from .write import drift, existing_revisions, write_files

DEFAULT_OUT = default_out()
_REVISION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

T = TypeVar("T")


def fail(message: str) -> NoReturn:
    click.echo(f"mcpbind: error: {message}", err=True)
    sys.exit(2)


def guarded(action: Callable[[], T]) -> T:
    try:
        return action()
    except CodegenError as exc:
        fail(str(exc))


@click.group()
@click.version_option(package_name="mcpbind")
def main() -> None:
    """Typed Python bindings for the Model Context Protocol, generated from its official schema."""


@main.command("generate")
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
    default=DEFAULT_OUT,
    show_default=True,
    help="Folder of the generated packages.",
)
@click.option(
    "--check", is_flag=True, help="Write nothing; exit 1 with a diff if the output folder differs."
)
def generate_command(
    revisions: tuple[str, ...],
    schema_path: Path | None,
    revision_name: str | None,
    out: Path,
    check: bool,
) -> None:
    """Generate bindings for REVISIONS (default: every pinned revision)."""
    loaded = guarded(lambda: _inputs(revisions, schema_path, revision_name))
    files = guarded(lambda: generate(loaded, out))
    if check:
        owned = [package_dir(s.revision) for s in loaded]
        report = drift(out, files, owned)
        if report:
            click.echo(report, nl=False)
            click.echo(
                f"mcpbind: {out} is not what the generator produces; run `mcpbind generate`",
                err=True,
            )
            sys.exit(1)
        click.echo(f"{out}: up to date ({', '.join(s.revision for s in loaded)})")
        return
    written = guarded(lambda: write_files(out, files))
    click.echo(f"{out}: {len(written)} file(s) written for {', '.join(s.revision for s in loaded)}")


def _inputs(
    revisions: tuple[str, ...], schema_path: Path | None, revision_name: str | None
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
    return [load_revision(rev) for rev in (revisions or tuple(load_pins()))]


@main.command("revisions")
@click.option("--out", type=click.Path(path_type=Path), default=DEFAULT_OUT, show_default=True)
def revisions_command(out: Path) -> None:
    """List the pinned revisions and whether each generated package is up to date."""
    generated = existing_revisions(out)
    for pin in load_pins().values():
        if pin.revision not in generated:
            state = "not generated"
        else:
            header = (out / package_dir(pin.revision) / "methods.py").read_text(encoding="utf-8")
            state = (
                "up to date" if f"# Input sha256: {pin.sha256}" in header else "stale (other input)"
            )
        click.echo(
            f"{pin.revision}  spec {pin.spec_commit[:12]}  sha256 {pin.sha256[:12]}  {state}"
        )


main.add_command(diff_command, name="diff")
