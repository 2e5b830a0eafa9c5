"""The ``mcpbind`` command line: ``generate``, ``revisions``, ``pin`` and ``diff``, and the
runtime's ``run``, ``dev``, ``inspect``, ``call``, ``read``, ``prompt`` and ``serve``.

Bad input is one line on stderr and exit status 2; ``generate --check`` exits 1 on drift. Only
``CodegenError`` is expected from the pipeline; anything else is a bug and keeps its traceback.
Each command imports what it needs when it runs, so ``--help``, ``diff``, ``revisions`` and
``pin`` work without the ``codegen`` extra.

The runtime's commands live in ``mcpbind.runtime.cli``; the group names them by import string
(``LAZY_COMMANDS``) and imports one only when it is invoked or listed, so the generator has no
import of the runtime and ``mcpbind generate`` never loads it.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from ..diff.command import diff_command
from .generate import generate_command
from .pins import pin_command, revisions_command

__all__ = ["LAZY_COMMANDS", "LazyGroup", "main"]

#: Command name -> "module:attribute" of a click command, imported on first use.
LAZY_COMMANDS: dict[str, str] = {
    "run": "mcpbind.runtime.cli.run:run_command",
    "dev": "mcpbind.runtime.cli.dev:dev_command",
    "inspect": "mcpbind.runtime.cli.surface:inspect_command",
    "call": "mcpbind.runtime.cli.call:call_command",
    "read": "mcpbind.runtime.cli.call:read_command",
    "prompt": "mcpbind.runtime.cli.call:prompt_command",
    "serve": "mcpbind.runtime.cli.serve:serve_command",
}


class LazyGroup(click.Group):
    """click's documented lazy-loading group: some commands are import strings until used."""

    def __init__(self, *args: Any, lazy_subcommands: dict[str, str] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.lazy_subcommands = lazy_subcommands or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.lazy_subcommands])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_subcommands:
            return self._lazy_load(cmd_name)
        return super().get_command(ctx, cmd_name)

    def _lazy_load(self, cmd_name: str) -> click.Command:
        module_name, attribute = self.lazy_subcommands[cmd_name].split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise ValueError(f"lazy command {cmd_name!r} is not a click command: {command!r}")
        return command


@click.group(cls=LazyGroup, lazy_subcommands=LAZY_COMMANDS)
@click.version_option(package_name="mcpbind")
def main() -> None:
    """Typed Python bindings for the Model Context Protocol, generated from its official schema,
    and the commands to run, inspect and call MCP servers."""


main.add_command(generate_command, name="generate")
main.add_command(revisions_command, name="revisions")
main.add_command(pin_command, name="pin")
main.add_command(diff_command, name="diff")
