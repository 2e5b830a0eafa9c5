"""What the commands share: one-line errors, where the pins live, where output goes.

The source checkout (and so the default ``--out``) is found by ``codegen.checkout``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeVar

import click

from ..checkout import default_out as default_out, source_checkout
from ..errors import CodegenError
from ..load import fetch
from ..pins import pins_file

T = TypeVar("T")
CODEGEN_ROOT = Path(__file__).resolve().parent.parent


def fail(message: str) -> NoReturn:
    click.echo(f"mcpbind: error: {message}", err=True)
    sys.exit(2)


def guarded(action: Callable[[], T]) -> T:
    try:
        return action()
    except CodegenError as exc:
        fail(str(exc))


def read_input(file: Path) -> bytes:
    """The bytes of a ``--file``; a CodegenError naming it when they cannot be read."""
    try:
        return file.read_bytes()
    except OSError as exc:
        raise CodegenError(f"cannot read {file}: {exc.strerror or exc}") from None


def download(url: str) -> bytes:
    """The bytes at a ``--url``; a CodegenError naming it when they cannot be had."""
    try:
        return fetch(url)
    except OSError as exc:
        raise CodegenError(f"downloading {url} failed: {exc}") from None


def pins_path(explicit: Path | None) -> Path | None:
    """``--pins``, else ``$MCPBIND_PINS``, else the checkout's; None: the package's own copy."""
    if explicit is not None:
        return explicit
    from_env = pins_file()
    if from_env is not None:
        return from_env
    checkout = source_checkout()
    return checkout / "schema" / "pins.toml" if checkout else None


def installed_generated() -> Path:
    """The ``generated/`` folder next to this package: read, never written, by ``revisions``."""
    return CODEGEN_ROOT.parent / "generated"


PINS_OPTION = click.option(
    "--pins",
    "pins",
    type=click.Path(path_type=Path),
    default=None,
    help="Pins file (default: $MCPBIND_PINS, else schema/pins.toml of the source checkout).",
)
