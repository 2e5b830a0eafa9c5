"""The stdio transport: newline-delimited JSON over pipes, for both ends.

The session reads and writes the pipes itself, through ``PipeReader`` and ``PipeWriter``
(``_pipes.py``); this module owns the processes around them: guarding the server's stdout,
watching its parent, and spawning, watching and stopping a client's server process.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Literal

import anyio
from mcpbind.runtime.core.budget import MemoryBudget, process_budget
from mcpbind.runtime.core.errors import ConnectionClosedError
from mcpbind.runtime.core.jsonrpc import LineFramer, Malformed
from mcpbind.runtime.core.transport import Connection

from ._pipes import CHUNK, MAX_BATCH, PipeReader, PipeWriter
from ._platform import (
    PORTABLE,
    binary,
    parent_watch,
    pollable,
    process_tree,
    restore_flags,
    set_nonblocking,
    spawn_options,
)

__all__ = ["StdioParameters", "stdio_client", "stdio_server"]

logger = logging.getLogger("mcpbind.runtime.stdio")

#: This process and its parent when this module was imported: comparing later ``getppid()``
#: against a parent read only once serving starts would miss one that died during start-up.
_FIRST_PARENT = (os.getpid(), os.getppid())
#: Default bound on one message a client reads (a server's results: a ``resources/read`` blob
#: may be large); a larger line is answered -32700 and never buffered whole.
MAX_MESSAGE = 64 * 1024 * 1024
#: Default bound on one message a server reads: a client's request or answer. Its largest
#: legitimate ones are tool arguments and sampling results with an image; 16 MiB is four times
#: what the HTTP transports take in a body (4 MiB) and holds a 12 MB file in base64, while a
#: line of it, parsed, stays a small part of the process's memory budget (256 MiB).
MAX_SERVER_MESSAGE = 16 * 1024 * 1024
#: How often a stopping client looks whether the server's process group is empty yet.
GROUP_POLL = 0.02
#: How long a killed group may take to be gone (a process in uninterruptible sleep may take
#: a while; past this the client stops waiting, but the signal still lands).
KILL_WAIT = 5.0


async def _flush_then_stop(writer: PipeWriter, done: anyio.Event, wait: float) -> None:
    """Let the writer flush its backlog, within ``wait`` seconds."""
    writer.close()
    with anyio.move_on_after(wait):
        await done.wait()


async def _flush_and_flag(writer: PipeWriter, done: anyio.Event) -> None:
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
            tg.start_soon(_flush_and_flag, writer, writer_done)
            if watch_parent:
                tg.start_soon(_watch_parent, watch_parent, reader, reason)
            try:
                yield Connection(
                    reader, writer, lambda: reason[0] if reason else "stdin was closed"
                )
            finally:
                await _flush_then_stop(writer, writer_done, 5.0)
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


StderrMode = Literal["inherit", "devnull"] | Callable[[str], None]


@dataclass
class StdioParameters:
    """How to start a server process and how to stop it.

    ``env`` is added to this process's environment (``inherit_env=False``: used alone).
    ``stderr``: ``"inherit"`` forwards the server's stderr to ours, ``"devnull"`` drops it, a
    callable receives it line by line. Shutdown closes the server's stdin, waits ``close_wait``
    seconds, sends SIGTERM to its process group, waits ``term_wait``, then sends SIGKILL. The
    server runs in a process group of its own, and whatever it started there goes too: when the
    server exits (or is stopped), what is left of its group gets SIGTERM, then SIGKILL after
    ``term_wait``, so no grandchild outlives it holding the pipes. On Windows the group is the
    server's process tree, ended with ``terminate`` then ``kill`` (``_platform.py``).
    """

    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] | None = None
    inherit_env: bool = True
    cwd: str | os.PathLike[str] | None = None
    stderr: StderrMode = "inherit"
    close_wait: float = 2.0
    term_wait: float = 2.0
    max_message: int = MAX_MESSAGE
    max_batch: int = MAX_BATCH


def _describe_exit(status: int | None) -> str:
    if status is None:
        return "the server closed its output"
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = str(-status)
        return f"the server process was killed by {name}"
    return f"the server process exited with status {status}"


class _Child:
    """A spawned server: its pipes, its process group and its exit."""

    def __init__(self, params: StdioParameters) -> None:
        self.params = params
        env = dict(os.environ) if params.inherit_env else {}
        env.update(params.env or {})
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        err_r = err_w = None
        stderr: int | None
        if callable(params.stderr):
            err_r, err_w = os.pipe()
            stderr = err_w
        elif params.stderr == "devnull":
            stderr = subprocess.DEVNULL
        else:
            stderr = None
        try:
            self.process = subprocess.Popen(
                [params.command, *params.args],
                stdin=to_child_r,
                stdout=from_child_w,
                stderr=stderr,
                env=env,
                cwd=params.cwd,
                close_fds=True,
                **spawn_options(),
            )
        except BaseException as exc:
            for fd in (self.to_child, self.from_child, err_r):
                if fd is not None:
                    os.close(fd)
            if isinstance(exc, OSError):
                raise ConnectionClosedError(
                    f"could not start the server {params.command!r}: {exc}"
                ) from exc
            raise
        finally:
            for fd in (to_child_r, from_child_w, err_w):
                if fd is not None:
                    os.close(fd)
        self.stderr_fd = err_r
        self._open = {self.to_child, self.from_child}
        self.tree = process_tree(self.process)
        self.pollable = pollable(self.from_child)
        for fd in (self.to_child, self.from_child, err_r):
            if fd is not None:
                binary(fd)
                if self.pollable:
                    set_nonblocking(fd)
        self.exited = anyio.Event()
        self._group_lock = anyio.Lock()

    async def wait_exit(self) -> None:
        """Reap the process as soon as it exits (pidfd where the kernel has it, else polling)."""
        pidfd = None
        with contextlib.suppress(AttributeError, OSError):
            pidfd = os.pidfd_open(self.process.pid)
        try:
            while self.process.poll() is None:
                if pidfd is not None:
                    await anyio.wait_readable(pidfd)
                else:
                    await anyio.sleep(0.02)
        finally:
            if pidfd is not None:
                os.close(pidfd)
            self.exited.set()

    def close_fd(self, fd: int) -> None:
        """Close one of our pipe ends once (a second close could hit a reused descriptor)."""
        if fd in self._open:
            self._open.discard(fd)
            with contextlib.suppress(OSError):
                os.close(fd)

    def group_running(self) -> bool:
        """Whether anything of the server's group (its process tree on Windows) still runs."""
        return self.tree.running()

    async def remember_tree(self) -> None:
        """Keep the tree's member list current while the server runs (where it needs that)."""
        every = self.tree.refresh_every
        if every is None:
            return
        while not self.exited.is_set():
            self.tree.refresh()
            with anyio.move_on_after(every):
                await self.exited.wait()

    async def _group_gone(self) -> None:
        """Wait until the server has exited and nothing runs in its group (polled: the others
        are not our children, so there is nothing to wait on)."""
        await self.exited.wait()
        while self.group_running():
            await anyio.sleep(GROUP_POLL)

    async def stop(self) -> None:
        """Close stdin, then SIGTERM, then SIGKILL, each after its configured wait."""
        self.tree.refresh()  # before the server may exit and leave its children parentless
        self.close_fd(self.to_child)
        with anyio.move_on_after(self.params.close_wait):
            await self.exited.wait()
        await self.end_group()

    async def end_group(self) -> None:
        """End the server's whole process group: SIGTERM to whoever is in it, SIGKILL to
        whoever is left ``term_wait`` seconds later; then reap the server."""
        async with self._group_lock:
            if self.exited.is_set() and not self.group_running():
                return
            pid = self.process.pid
            logger.info("server %d or its children still running; terminating them", pid)
            if self.tree.end(force=False):
                with anyio.move_on_after(self.params.term_wait):
                    await self._group_gone()
                if not self.exited.is_set() or self.group_running():
                    logger.info("server %d or its children still running; killing them", pid)
                    self.tree.end(force=True)
            # SIGKILL cannot be refused; this waits for it to land (and for the server's reaping).
            with anyio.move_on_after(KILL_WAIT):
                await self._group_gone()

    async def forward_stderr(self, sink: Callable[[str], None]) -> None:
        fd = self.stderr_fd
        assert fd is not None
        framer = LineFramer(CHUNK)
        try:
            while True:
                try:
                    if self.pollable:
                        chunk = os.read(fd, CHUNK)
                    else:  # a blocking pipe (Windows): read in a worker thread
                        chunk = await anyio.to_thread.run_sync(
                            os.read, fd, CHUNK, abandon_on_cancel=True
                        )
                except BlockingIOError:
                    await anyio.wait_readable(fd)
                    continue
                if not chunk:
                    break
                for line in framer.feed(chunk):
                    sink(
                        line.reason
                        if isinstance(line, Malformed)
                        else line.decode("utf-8", "replace")
                    )
            tail = framer.tail()
            if isinstance(tail, bytes):
                sink(tail.decode("utf-8", "replace"))
        finally:
            os.close(fd)


@asynccontextmanager
async def stdio_client(params: StdioParameters) -> AsyncGenerator[Connection, None]:
    """The client end: spawn the server in its own process group and talk over its stdio.

    If the server exits, the incoming stream ends at once (after what it wrote is read), so the
    session fails pending requests with the exit status instead of waiting for timeouts.
    """
    child = _Child(params)

    async def on_eof() -> None:
        # Output closed: the exit status, if it follows at once, explains why.
        with anyio.move_on_after(0.2):
            await child.exited.wait()

    reader = PipeReader(
        child.from_child, params.max_message, child.pollable, on_eof, params.max_batch
    )
    writer = PipeWriter(child.to_child, child.pollable, threaded=PORTABLE)
    writer_done = anyio.Event()

    def close_reason() -> str:
        return _describe_exit(child.process.poll())

    async def end_after_exit() -> None:
        # The server exited but its stdout may stay open (a grandchild holds it): give up
        # shortly after, so pending requests fail at once, and end what it left running.
        await child.exited.wait()
        await anyio.sleep(0.2)
        reader.end()
        await child.end_group()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(child.wait_exit)
            tg.start_soon(child.remember_tree)
            tg.start_soon(end_after_exit)
            tg.start_soon(_flush_and_flag, writer, writer_done)
            if callable(params.stderr):
                tg.start_soon(child.forward_stderr, params.stderr)
            try:
                yield Connection(reader, writer, close_reason, {"pid": child.process.pid})
            finally:
                await _flush_then_stop(writer, writer_done, params.close_wait)
                with anyio.CancelScope(shield=True):
                    await child.stop()
                tg.cancel_scope.cancel()
    finally:
        reader.close()
        child.close_fd(child.from_child)
        child.close_fd(child.to_child)
