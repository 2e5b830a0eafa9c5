"""The ``mcpbind`` command line: ``generate``, ``revisions``, ``pin`` and ``diff``.

Bad input is one line on stderr and exit status 2; ``generate --check`` exits 1 on drift. Only
``CodegenError`` is expected from the pipeline; anything else is a bug and keeps its traceback.
Each command imports what it needs when it runs, so ``--help``, ``diff``, ``revisions`` and
``pin`` work without the ``codegen`` extra.
"""

from __future__ import annotations

import click

from ..diff.command import diff_command
from .generate import generate_command
from .pins import pin_command, revisions_command


@click.group()
@click.version_option(package_name="mcpbind")
def main() -> None:
    """Typed Python bindings for the Model Context Protocol, generated from its official schema."""


main.add_command(generate_command, name="generate")
main.add_command(revisions_command, name="revisions")
main.add_command(pin_command, name="pin")
main.add_command(diff_command, name="diff")

__all__ = ["main"]
