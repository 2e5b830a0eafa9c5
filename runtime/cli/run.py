"""``mcpbind run TARGET``: serve an App or Server over stdio, or Streamable HTTP with ``--http``.

SIGINT (Ctrl-C) and SIGTERM stop it cleanly: exit status 0, no traceback. Runs alone too:
``python -m mcpbind.runtime.cli.run TARGET`` (what ``mcpbind dev`` restarts on each change).
"""

from __future__ import annotations

import contextlib
import signal
import socket
from typing import Any

import anyio
import click
from mcpbind.runtime.app import App
from mcpbind.runtime.core.run import run
from mcpbind.runtime.endpoints.server import Server

from ._common import OneLineCommand, fail, progress
from ._target import TargetError, load_target

__all__ = ["asgi_app", "run_command", "serve_http"]


def asgi_app(served: App | Server) -> Any:
    """The Streamable HTTP app of ``served``, both eras on ``/mcp`` (as ``App.run_http``):
    its own ``http_app()`` where it has one (what it sets up there, it sets up here too)."""
    if isinstance(served, App):
        return served.http_app()
    own = getattr(served, "http_app", None)  # a Server of a runtime that gives it one
    if callable(own):
        return own()
    from mcpbind.runtime.transports.http.server import StreamableHTTPServer

    return StreamableHTTPServer(served.serve)


async def serve_http(
    served: App | Server, host: str, port: int, fd: int | None = None, print_url: bool = False
) -> None:
    """Serve until SIGINT or SIGTERM, then end open streams gracefully and return.

    ``fd``: an inherited listening socket served instead of binding ``port``, so that whoever
    chose the port holds it until the server serves it (no other process can take it between).
    ``print_url``: the endpoint's URL on stdout once it listens (a script's way to learn the
    port the kernel picked for ``port`` 0).
    """
    from mcpbind.runtime.transports.http.uvicorn import serving

    where = f"{host}:{port}" if fd is None else f"fd {fd}"
    # The signals are ours before anything listens: a SIGINT while starting is a clean stop too.
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        try:
            sock = None if fd is None else socket.socket(fileno=fd)
            opened = serving(asgi_app(served), host, port, sock=sock)
            url = await opened.__aenter__()
        except OSError as exc:
            fail(f"cannot listen on {where}: {exc.strerror or exc}")
        try:
            if print_url:
                click.echo(f"{url}/mcp")  # flushed by click: a reader sees it now
            progress(f"serving {url}/mcp (Ctrl-C stops)")
            async for _ in signals:
                break
        finally:
            await opened.__aexit__(None, None, None)


def _serve_stdio(served: App | Server) -> None:
    # Ctrl-C is how a user stops a server in a terminal: not an error.
    with contextlib.suppress(KeyboardInterrupt):
        served.run_stdio()


EXAMPLE = """
\b
Examples:
  mcpbind run examples/app_server.py               # stdio
  mcpbind run examples.app_server:app --http --port 8000
  mcpbind run examples/app_server.py --http --port 0 --print-url  # prints the URL
  mcpbind run examples/app_server.py --http --fd 3  # serve an inherited listening socket
"""


@click.command("run", cls=OneLineCommand, epilog=EXAMPLE)
@click.argument("target")
@click.option("--http", "http", is_flag=True, help="Serve Streamable HTTP (both eras) on /mcp.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Where --http listens.")
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port of --http (0: a free port; see --print-url).",
)
@click.option(
    "--fd",
    type=click.IntRange(min=0),
    help="Serve --http on this inherited listening socket instead of binding --port.",
)
@click.option(
    "--print-url",
    is_flag=True,
    help="Print the --http endpoint's URL on stdout, one line, once it listens.",
)
def run_command(
    target: str, http: bool, host: str, port: int, fd: int | None, print_url: bool
) -> None:
    """Serve TARGET: path/to/file.py[:obj] or module:obj, an App, a Server or a function of
    no arguments returning one (without :obj: `app`, `server`, `mcp` or the module's only one).
    Stdio by default; SIGINT or SIGTERM stops it (exit status 0)."""
    if fd is not None and not http:
        fail("--fd serves HTTP: pass --http too")
    if print_url and not http:
        fail("--print-url prints the HTTP endpoint: pass --http too")
    try:
        served = load_target(target)
    except TargetError as exc:
        fail(str(exc))
    if http:
        # A SIGINT that lands outside the receiver (before the loop runs) is a clean stop too.
        with contextlib.suppress(KeyboardInterrupt):
            run(serve_http, served, host, port, fd, print_url)
    else:
        _serve_stdio(served)


if __name__ == "__main__":
    run_command(prog_name="mcpbind run")
