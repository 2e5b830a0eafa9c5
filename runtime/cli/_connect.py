"""A ``Client`` on what a command names: a file or module (served in memory), an ``http(s)``
URL (Streamable HTTP), or with ``--stdio "command args"`` a server process."""

from __future__ import annotations

import logging
import shlex
from collections.abc import AsyncGenerator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import click
from mcpbind.runtime.core.transport import Connection
from mcpbind.runtime.endpoints.client import Client
from mcpbind.runtime.transports.stdio_client import StdioParameters

from ._common import CliError, reason
from ._target import load_target

__all__ = ["STDIO_OPTION", "TARGET_ARGUMENT", "connected", "is_url"]

TARGET_ARGUMENT = click.argument("target", required=False, metavar="TARGET|URL")
STDIO_OPTION = click.option(
    "--stdio",
    "stdio",
    metavar="COMMAND",
    default=None,
    help='Start this stdio server command instead of TARGET, e.g. --stdio "python server.py".',
)


class _OneLine(logging.Formatter):
    """A served app's log record as one line: a crash inside a tool is the server's business,
    told briefly; the client's answer (an error result or error) says the rest."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage().strip().splitlines()
        cause = (
            f" ({type(record.exc_info[1]).__name__}: {record.exc_info[1]})"
            if record.exc_info and record.exc_info[1]
            else ""
        )
        return f"mcpbind: server {record.levelname.lower()}: {text[0] if text else ''}{cause}"


def _quiet_server_logs() -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(_OneLine())
    handler.setLevel(logging.WARNING)
    runtime_logger = logging.getLogger("mcpbind")
    runtime_logger.addHandler(handler)
    runtime_logger.propagate = False


def is_url(target: str) -> bool:
    return target.startswith(("http://", "https://"))


def _transport(
    target: str | None, stdio: str | None
) -> tuple[str, AbstractAsyncContextManager[Connection] | StdioParameters]:
    if (target is None) == (stdio is None):
        raise CliError("give TARGET (a file, module:object or URL) or --stdio COMMAND, not both")
    if stdio is not None:
        words = shlex.split(stdio)
        if not words:
            raise CliError("--stdio needs a command")
        return f"`{stdio}`", StdioParameters(words[0], words[1:], stderr="devnull")
    assert target is not None
    if is_url(target):
        # Imported here: the HTTP client (httpx) only when a URL is given.
        from mcpbind.runtime.transports.http.client import streamable_http_client

        return target, streamable_http_client(target, timeout=10.0)
    served = load_target(target)
    _quiet_server_logs()  # the server runs in this process: its logs would be ours
    return target, served.memory_transport()


@asynccontextmanager
async def connected(
    target: str | None, stdio: str | None, revision: str | None
) -> AsyncGenerator[Client[Any, Any, Any], None]:
    """A connected client; failing to connect is a ``CliError`` naming the peer."""
    label, transport = _transport(target, stdio)
    client: Client[Any, Any, Any] = Client(transport, name="mcpbind-cli", protocol_version=revision)
    try:
        await client.__aenter__()
    except Exception as exc:
        raise CliError(f"cannot connect to {label}: {reason(exc)}") from None
    try:
        yield client
    finally:
        await client.aclose()
