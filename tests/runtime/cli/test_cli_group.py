"""The one ``mcpbind`` group: the runtime's commands are import strings until used, each one a
click command; ``--help`` lists them all; ``generate`` never imports the runtime."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from clikit import NOTES, REPO, assert_one_line_error, cli
from mcpbind.codegen.cli import LAZY_COMMANDS, main

EVERY_COMMAND = {"generate", "revisions", "pin", "diff", *LAZY_COMMANDS}


@pytest.mark.parametrize("name", sorted(LAZY_COMMANDS))
def test_every_lazy_entry_resolves_to_a_click_command(name: str) -> None:
    with click.Context(main) as ctx:
        command = main.get_command(ctx, name)
    assert isinstance(command, click.Command) and command.name == name


def test_help_lists_every_command() -> None:
    done = cli("--help")
    assert done.returncode == 0, done.stderr
    listed = done.stdout.split("Commands:")[1].split()
    assert set(listed) >= EVERY_COMMAND, done.stdout


@pytest.mark.parametrize("name", sorted(LAZY_COMMANDS))
def test_each_runtime_command_has_help_with_an_example(name: str) -> None:
    done = cli(name, "--help")
    assert done.returncode == 0, done.stderr
    assert "Examples:" in done.stdout and f"mcpbind {name} " in done.stdout


def test_generate_never_imports_the_runtime() -> None:
    probe = (
        "import sys\n"
        "from mcpbind.codegen.cli import main\n"
        "try:\n"
        "    main(['generate', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('mcpbind.runtime')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["run"], "Missing argument 'TARGET'"),
        (["run", NOTES, "--port", "abc"], "'abc' is not a valid integer"),
        (["run", NOTES, "--nope"], "No such option"),
        (["dev", NOTES, "--port", "x"], "'x' is not a valid integer"),
        (["inspect", NOTES, "--revision", "1999-01-01"], "unknown revision '1999-01-01'"),
        (["call", NOTES, "repeat", "--revision", "x"], "unknown revision 'x'"),
        (["serve", "examples.cluster.app:app", "--workers", "0"], "0 is not in the range"),
    ],
)
def test_options_that_do_not_parse_are_one_line(args: list[str], fragment: str) -> None:
    assert_one_line_error(cli(*args), fragment)
