"""``mcpbind dev TARGET``: the server over HTTP, restarted on every file change, with the MCP
Inspector open on it.

The server runs as ``python -m mcpbind.runtime.cli.run TARGET --http`` under watchfiles, which
restarts it when a file in TARGET's folder changes; the Inspector (``npx
@modelcontextprotocol/inspector``) is started once and connects to its URL, so a reload keeps
the Inspector's tab. With ``--stdio`` the Inspector starts the server itself (its command mode)
and reconnecting there restarts it; nothing is watched. Without ``npx`` the server still runs
and one line says what to install.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import click

from ._common import OneLineCommand, fail, progress
from ._target import TargetError, load_target, module_file

__all__ = ["INSPECTOR", "NO_NPX", "dev_command", "inspector_command", "server_command"]

INSPECTOR = "@modelcontextprotocol/inspector"
NO_NPX = (
    "the MCP Inspector needs npx, which is not on PATH: install Node.js 22 or newer "
    "(https://nodejs.org), or pass --no-inspector"
)
#: How long the Inspector gets to stop before it is killed.
STOP_GRACE = 5.0


def server_command(target: str, http: bool, host: str, port: int) -> list[str]:
    """The command serving TARGET: this Python running ``mcpbind run``'s module."""
    command = [sys.executable, "-m", "mcpbind.runtime.cli.run", target]
    return [*command, "--http", "--host", host, "--port", str(port)] if http else command


def inspector_command(npx: str, target: str, stdio: bool, host: str, port: int) -> list[str]:
    """The Inspector's command line: connected to the server's URL, or (``stdio``) starting
    the server itself."""
    base = [npx, "-y", INSPECTOR]
    if stdio:
        return [*base, "--transport", "stdio", *server_command(target, False, host, port)]
    return [*base, "--transport", "http", "--server-url", f"http://{host}:{port}/mcp"]


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        if sys.platform != "win32":
            os.killpg(process.pid, signum)  # npx and the node it started
        elif signum == signal.SIGTERM:  # Windows: no process groups to signal
            process.terminate()
        else:
            process.kill()


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the Inspector's process group, then SIGKILL after ``STOP_GRACE``."""
    _signal_group(process, signal.SIGTERM)
    try:
        process.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        _signal_group(process, getattr(signal, "SIGKILL", signal.SIGTERM))
        process.wait()


def _watch_and_serve(folder: Path, command: list[str]) -> None:
    try:
        import watchfiles
    except ImportError:
        fail("`mcpbind dev` needs watchfiles to reload: pip install 'mcpbind[watch]'")
    # watchfiles logs each signal and restart as a warning; the server's own output says enough.
    logging.getLogger("watchfiles").setLevel(logging.ERROR)

    def reloaded(changes: set[tuple[watchfiles.Change, str]]) -> None:
        names = sorted({Path(path).name for _, path in changes})
        progress(f"{', '.join(names)} changed: restarting the server")

    with contextlib.suppress(
        KeyboardInterrupt
    ):  # Ctrl-C, or SIGTERM (watchfiles turns it into one)
        watchfiles.run_process(
            folder, target=shlex.join(command), target_type="command", callback=reloaded
        )


EXAMPLE = """
\b
Examples:
  mcpbind dev examples/app_server.py               # Inspector on http://127.0.0.1:8000/mcp
  mcpbind dev examples/app_server.py --stdio       # the Inspector starts the server
  mcpbind dev examples/app_server.py --print-command
"""


@click.command("dev", cls=OneLineCommand, epilog=EXAMPLE)
@click.argument("target")
@click.option("--host", default="127.0.0.1", show_default=True, help="Where the server listens.")
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(1, 65535),  # the Inspector is given this port: 0 would name none
    help="The server's port.",
)
@click.option(
    "--stdio", is_flag=True, help="Let the Inspector run the server over stdio (no reload)."
)
@click.option("--no-inspector", is_flag=True, help="Only serve and reload; start no Inspector.")
@click.option("--print-command", is_flag=True, help="Print the Inspector's command line and exit.")
def dev_command(
    target: str, host: str, port: int, stdio: bool, no_inspector: bool, print_command: bool
) -> None:
    """Develop TARGET (as for `mcpbind run`): serve it over Streamable HTTP, restart it when a
    file in its folder changes, and open the MCP Inspector on it (needs npx). Ctrl-C stops."""
    try:
        load_target(target)  # a TARGET that does not load is one line now, not a restart loop
    except TargetError as exc:
        fail(str(exc))
    npx = shutil.which("npx")
    command = inspector_command(npx or "npx", target, stdio, host, port)
    if print_command:
        click.echo(shlex.join(command))
        return
    if stdio:
        if npx is None:
            fail(NO_NPX.replace(", or pass --no-inspector", ""))
        progress("starting the MCP Inspector; it starts the server")
        with contextlib.suppress(KeyboardInterrupt):
            subprocess.run(command, check=False)
        return
    inspector: subprocess.Popen[bytes] | None = None
    if not no_inspector:
        if npx is None:
            click.echo(f"mcpbind: {NO_NPX}", err=True)
        else:
            progress(f"starting the MCP Inspector on http://{host}:{port}/mcp")
            inspector = subprocess.Popen(command, start_new_session=True, stdin=subprocess.DEVNULL)
    where = module_file(target)
    folder = where.parent if where is not None else Path.cwd()
    progress(f"serving http://{host}:{port}/mcp, reloading on changes in {folder}")
    try:
        _watch_and_serve(folder, server_command(target, True, host, port))
    finally:
        if inspector is not None:
            _stop(inspector)


if __name__ == "__main__":
    dev_command(prog_name="mcpbind dev")
