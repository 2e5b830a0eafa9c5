"""The generator's commands run in-process (click's ``CliRunner``), as the codegen tests use them."""

from __future__ import annotations

from functools import partial

import click
from click.testing import CliRunner
from mcpbind.codegen.cli import main

__all__ = ["invoke", "run"]


def invoke(command: click.Command, *args: str) -> tuple[int, str, str]:
    """``command ARGS``: its exit status, stdout and stderr; an unexpected exception is raised."""
    result = CliRunner().invoke(command, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


#: ``mcpbind ARGS``.
run = partial(invoke, main)
