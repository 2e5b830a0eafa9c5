"""The stdio transport: newline-delimited JSON over pipes, the server's end.

The session reads and writes the pipes itself, through ``PipeReader`` and ``PipeWriter``
(``_pipes.py``); this module owns the process around them: guarding the server's stdout and
watching its parent. The client's end (spawning, watching and stopping a server process) is
``stdio_client.py``, which a server never imports.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import anyio
from mcpbind.runtime.core.budget import MemoryBudget, process_budget
from mcpbind.runtime.core.transport import Connection

from ._pipes import MAX_BATCH, PipeReader, PipeWriter
from ._platform import PORTABLE, binary, parent_watch, pollable, restore_flags, set_nonblocking

__all__ = ["flush_and_flag", "flush_then_stop", "stdio_server"]

logger = logging.getLogger("mcpbind.runtime.stdio")

#: This process and its parent when this module was imported: comparing later ``getppid()``
#: against a parent read only once serving starts would miss one that died during start-up.
_FIRST_PARENT = (os.getpid(), os.getppid())
#: Default bound on one message a server reads: a client's request or answer. Its largest
#: legitimate ones are tool arguments and sampling results with an image; 16 MiB is four times
#: what the HTTP transports take in a body (4 MiB) and holds a 12 MB file in base64, while a
#: line of it, parsed, stays a small part of the process's memory budget (256 MiB).
MAX_SERVER_MESSAGE = 16 * 1024 * 1024


async def flush_then_stop(writer: PipeWriter, done: anyio.Event, wait: float) -> None:
    """Let the writer flush its backlog, within ``wait`` seconds."""
    writer.close()
    with anyio.move_on_after(wait):
        await done.wait()


async def flush_and_flag(writer: PipeWriter, done: anyio.Event) -> None:
    """Flush the writer's backlog until it is closed, then set ``done``."""
    try:
        await writer.flush()
    finally:
        done.set()


@asynccontextmanager
async def stdio_server(
    *,
    stdin: int = 0,
    stdout: int = 1,
    guard_stdout: bool = True,
    watch_parent: float | None = 1.0,
    max_message: int = MAX_SERVER_MESSAGE,
    max_batch: int = MAX_BATCH,
    memory_budget: MemoryBudget | None = None,
) -> AsyncGenerator[Connection, None]:
    """The server end: messages on ``stdin``/``stdout`` (file descriptors).

    ``guard_stdout`` keeps anything but MCP messages off the real stdout: the protocol gets a
    private duplicate of it, and descriptor 1 and ``sys.stdout`` are pointed at stderr, so a
    stray ``print`` (or a C library) writes to the log instead of corrupting the stream.
    ``watch_parent`` (seconds) ends the connection when the parent process dies, even if the
    pipe stays open in some other process. End of ``stdin`` ends it too. A line over
    ``max_message`` bytes (default 16 MiB, ``MAX_SERVER_MESSAGE``), or a JSON-RPC batch over
    ``max_batch``, is answered with an error (-32700, id null; -32600 for a batch) without
    being parsed (parsed, a line of JSON takes several times its size in memory), and the
    session goes on. A line longer than 64 KiB is held in the ``memory_budget`` (default
    ``process_budget()``) while it is read; one that does not fit is dropped as it comes and
    answered busy (-31503; see ``PipeReader``).
    """
    out_fd = stdout
    saved_stdout = sys.stdout
    if guard_stdout and stdout == 1:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        out_fd = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    binary(stdin)
    binary(out_fd)
    in_poll, out_poll = pollable(stdin), pollable(out_fd)
    restore: list[tuple[int, int]] = []
    if in_poll:
        restore.append((stdin, set_nonblocking(stdin)))
    if out_poll:
        restore.append((out_fd, set_nonblocking(out_fd)))
    budget = memory_budget or process_budget()
    reader = PipeReader(stdin, max_message, in_poll, max_batch=max_batch, budget=budget)
    # Answers to requests read in one chunk go out together (``PipeWriter``'s ``more``).
    writer = PipeWriter(out_fd, out_poll, reader.buffered, threaded=PORTABLE)
    writer_done = anyio.Event()
    reason: list[str] = []
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(flush_and_flag, writer, writer_done)
            if watch_parent:
                tg.start_soon(_watch_parent, watch_parent, reader, reason)
            try:
                yield Connection(
                    reader, writer, lambda: reason[0] if reason else "stdin was closed"
                )
            finally:
                await flush_then_stop(writer, writer_done, 5.0)
                tg.cancel_scope.cancel()
    finally:
        reader.close()
        for fd, flags in restore:
            restore_flags(fd, flags)
        if out_fd != stdout:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
            os.dup2(out_fd, 1)
            os.close(out_fd)
            sys.stdout = saved_stdout


async def _watch_parent(interval: float, reader: PipeReader, reason: list[str]) -> None:
    # A process forked after the import has another parent: read it now instead.
    importer, parent = _FIRST_PARENT
    if importer != os.getpid():
        parent = os.getppid()
    alive = parent_watch(parent)
    if alive is None:
        return  # nothing to watch here; the end of stdin still ends the connection
    while True:
        await anyio.sleep(interval)
        if not alive():
            reason.append("the parent process exited")
            logger.info("parent process %d exited; shutting down", parent)
            reader.end()
            return
