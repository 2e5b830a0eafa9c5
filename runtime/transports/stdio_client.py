"""The stdio transport, the client's end: spawn a server process and talk over its pipes.

``stdio_client`` starts the server in a process group of its own, watches it exit, and stops
it and whatever it started (``_process_tree.py`` says how on each platform). Apart from the
server's end (``stdio.py``), so a server imports none of it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Literal

import anyio
from mcpbind.runtime.core.errors import ConnectionClosedError
from mcpbind.runtime.core.jsonrpc import LineFramer, Malformed
from mcpbind.runtime.core.transport import Connection

from ._pipes import CHUNK, MAX_BATCH, PipeReader, PipeWriter
from ._platform import PORTABLE, binary, pollable, set_nonblocking, spawn_options
from ._process_tree import process_tree
from .stdio import flush_and_flag, flush_then_stop

__all__ = ["StdioParameters", "stdio_client"]

logger = logging.getLogger("mcpbind.runtime.stdio")

#: Default bound on one message a client reads (a server's results: a ``resources/read`` blob
#: may be large); a larger line is answered -32700 and never buffered whole.
MAX_MESSAGE = 64 * 1024 * 1024
#: How often a stopping client looks whether the server's process group is empty yet.
GROUP_POLL = 0.02
#: How long a killed group may take to be gone (a process in uninterruptible sleep may take
#: a while; past this the client stops waiting, but the signal still lands).
KILL_WAIT = 5.0


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
    server's process tree, ended with ``terminate`` then ``kill`` (``_process_tree.py``).
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
            tg.start_soon(flush_and_flag, writer, writer_done)
            if callable(params.stderr):
                tg.start_soon(child.forward_stderr, params.stderr)
            try:
                yield Connection(reader, writer, close_reason, {"pid": child.process.pid})
            finally:
                await flush_then_stop(writer, writer_done, params.close_wait)
                with anyio.CancelScope(shield=True):
                    await child.stop()
                tg.cancel_scope.cancel()
    finally:
        reader.close()
        child.close_fd(child.from_child)
        child.close_fd(child.to_child)
