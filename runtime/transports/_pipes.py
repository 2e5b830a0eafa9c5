"""Newline-delimited JSON on a pair of file descriptors, read and written on demand.

``PipeReader`` is a ``MessageSource`` and ``PipeWriter`` a ``MessageSink`` (``transport.py``):
the session reads the pipe itself when it wants the next message and writes a message straight
to the pipe when it sends one. A relay task with a memory stream on each side costs an
event-loop pass per message each way, about half of a sequential round trip; here a ``ping`` is
answered within the pass that read it. Back-pressure comes for free: when the session stops
asking (its answers are backed up behind a peer that does not read them, or too many
notification handlers run), the pipe fills and the peer's writes block. Requests beyond the
session's bounds do not stop it: they are answered "busy" at once (``_admission.py``).

Pipes are read with ``os.read`` in chunks of at most 64 KiB on non-blocking descriptors, waking
on readiness: larger reads made every read allocate and free a large block on this platform.
On asyncio the reader keeps its readiness callback registered while it keeps asking for
messages, instead of registering and removing it for every wait as ``anyio.wait_readable``
does (two ``epoll_ctl`` calls and a poll handle per message); which way, each side asks the
fast path seam (``core/loop_path.py``) once, at its first wait or burst.
Descriptors that cannot signal readiness (regular files, some ttys) are read in a worker thread
and written with blocking writes; with ``threaded`` (every pipe on Windows, where nothing can
wait for a pipe's readiness) they are written from a worker thread too, so a peer that is busy
writing to us while we write to it cannot stall the event loop that would read it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Final

import anyio
import orjson
from mcpbind.runtime.core.admission import SERVER_UNAVAILABLE
from mcpbind.runtime.core.budget import READ_FACTOR, SMALL_MESSAGE, MemoryBudget, resident_size
from mcpbind.runtime.core.errors import INVALID_REQUEST
from mcpbind.runtime.core.jsonrpc import LineFramer, Malformed, decode, encode
from mcpbind.runtime.core.loop_path import AsyncioPath, LoopPath, loop_path
from mcpbind.runtime.core.transport import Envelope

__all__ = ["CHUNK", "MAX_BATCH", "PipeReader", "PipeWriter"]

logger = logging.getLogger("mcpbind.runtime.stdio")

#: Read size: at most 64 KiB (see the module docstring).
CHUNK = 64 * 1024
#: Bytes a writer holds for a peer that is not reading before ``send`` waits (back-pressure).
WRITE_BACKLOG = 1024 * 1024
#: Default bound on a JSON-RPC batch's line, refused unparsed beyond it (see ``_envelope``).
MAX_BATCH = 4 * 1024 * 1024


_NEWLINE: Final = ord("\n")
#: Bytes of a line refused for the memory budget kept to find its id in.
HEAD = 4096
# The members a message starts with, up to its id: ``"jsonrpc"`` and ``"method"`` may come first.
_TO_ID = re.compile(
    rb'\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"\\]*"\s*,)*\s*"id"\s*:\s*'
    rb'(-?[0-9]+|"(?:[^"\\]|\\.)*")\s*[,}]'
)
# A response: "result" or "error" before any "method" or "params".
_RESPONSE = re.compile(
    rb'\s*\{(?:\s*"(?:jsonrpc|id)"\s*:\s*(?:"(?:[^"\\]|\\.)*"|-?[0-9]+|null)\s*,)*'
    rb'\s*"(?:result|error)"\s*:'
)


def _envelope(frame: bytes | Malformed, max_batch: int, large: int) -> Envelope:
    """``large``: the smaller of ``max_batch`` and ``SMALL_MESSAGE``, one comparison for most."""
    if isinstance(frame, Malformed):
        return Envelope(frame)
    size = len(frame)
    if size > large:
        if size > max_batch and frame.lstrip()[:1] == b"[":
            # Parsed, a batch takes ten times its size or more (a dict per member), and it
            # could never be admitted whole anyway: refused unread.
            return Envelope(
                Malformed(f"a batch of {size} bytes; at most {max_batch} are read", INVALID_REQUEST)
            )
        if size > SMALL_MESSAGE:
            # Held at what it takes parsed (``budget.py``), not at its JSON length.
            message = decode(frame)
            return Envelope(message, size=resident_size(message))
    return Envelope(decode(frame), size=size)


def _refusal(head: bytes, why: str) -> Malformed | None:
    """The frame answering a request refused for the memory budget; None if the line is not
    to be answered: a notification, or a request whose id is not among its first members
    (both dropped with a warning). The id is looked for in ``head`` only."""
    found = _TO_ID.match(head)
    if found is not None:
        with contextlib.suppress(orjson.JSONDecodeError):
            return Malformed(why, SERVER_UNAVAILABLE, orjson.loads(found.group(1)))
    logger.warning("dropped a message over the memory budget: %s", why)
    return None


class PipeReader:
    """The messages arriving on ``fd``, one ``Envelope`` per line, read when asked for.

    ``end()`` ends the input early (the parent died, the server exited but a grandchild keeps
    its pipe open): what was already read is still delivered, then ``EndOfStream``.
    ``on_eof`` is awaited once, before the first ``EndOfStream`` (the stdio client uses it to
    give the exit status a moment to arrive, so errors can say why the server went away).
    A line over ``max_message`` bytes, or a batch over ``max_batch``, is never parsed.

    With a memory ``budget`` (a server's input), a line longer than ``SMALL_MESSAGE`` is held
    there as it is read, at ``READ_FACTOR`` times its bytes (they, their parse, its result);
    one that does not fit is dropped as it streams in and answered busy (-31503) if it is a
    request whose id comes before its large members (a response is held even beyond). Once
    parsed, a large message's size is what it takes parsed.
    """

    __slots__ = (
        "_budget",
        "_drained",
        "_ended",
        "_fd",
        "_framer",
        "_frames",
        "_held",
        "_large",
        "_loop",
        "_max_batch",
        "_on_eof",
        "_path",
        "_pollable",
        "_waiter",
        "_waiting",
    )

    def __init__(
        self,
        fd: int,
        max_message: int,
        pollable: bool,
        on_eof: Callable[[], Awaitable[None]] | None = None,
        max_batch: int = MAX_BATCH,
        budget: MemoryBudget | None = None,
    ) -> None:
        self._fd = fd
        self._budget = budget
        self._held = 0  # bytes held in the budget for the line being read
        self._max_batch = max_batch
        self._large = min(max_batch, SMALL_MESSAGE)
        self._pollable = pollable
        self._framer = LineFramer(max_message)
        self._frames: deque[Envelope] = deque()
        self._ended = False
        # The pipe held nothing at the last read: wait for readiness before reading again.
        self._drained = False
        self._waiting = False
        self._on_eof = on_eof
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._path: LoopPath | None = None  # asked for once, at the first wait

    def buffered(self) -> bool:
        """Whether messages already read wait to be asked for (a burst is being handled)."""
        return bool(self._frames)

    def receive_nowait(self) -> Envelope:
        """The next message if one is buffered or readable without waiting.

        Once a read found the pipe empty, it is not read again until it is ready: ``take``
        tries this before ``receive``, and a second failed read there (a system call and two
        exceptions) was a tenth of a quick request's cost.
        """
        if self._frames:
            return self._frames.popleft()
        if self._ended:
            raise anyio.EndOfStream
        if not self._pollable or self._drained:
            raise anyio.WouldBlock
        try:
            chunk = os.read(self._fd, CHUNK)
        except BlockingIOError:
            self._drained = True
            raise anyio.WouldBlock from None
        except OSError as exc:
            logger.debug("read failed: %s", exc)
            chunk = b""
        self._absorb(chunk)
        if self._frames:
            return self._frames.popleft()
        if self._ended:
            raise anyio.EndOfStream
        raise anyio.WouldBlock

    async def receive(self) -> Envelope:
        """The next message, waiting for the pipe as long as it takes."""
        while True:
            try:
                if not self._drained or self._frames or self._ended:
                    return self.receive_nowait()
            except anyio.WouldBlock:
                pass
            except anyio.EndOfStream:
                if self._on_eof is not None:
                    on_eof, self._on_eof = self._on_eof, None
                    await on_eof()
                raise
            if not self._pollable:
                try:
                    chunk = await anyio.to_thread.run_sync(
                        os.read, self._fd, CHUNK, abandon_on_cancel=True
                    )
                except OSError as exc:
                    logger.debug("read failed: %s", exc)
                    chunk = b""
                if not self._ended:
                    self._absorb(chunk)
                continue
            path = self._path
            if path is None:
                path = self._path = loop_path()
            if isinstance(path, AsyncioPath):
                await self._wait_registered(path)
                self._drained = False
                continue
            self._waiting = True
            try:
                await anyio.wait_readable(self._fd)
            except anyio.ClosedResourceError:
                self._ended = True  # ``end()`` woke us
            finally:
                self._waiting = False
                self._drained = False

    async def _wait_registered(self, path: AsyncioPath) -> None:
        """Wait for readiness through a callback that stays registered between waits."""
        loop = path.loop
        if self._loop is not loop:
            loop.add_reader(self._fd, self._on_readable)
            self._loop = loop
        waiter = self._waiter = path.future()
        try:
            await waiter
        finally:
            self._waiter = None

    def _on_readable(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            if not waiter.done():
                waiter.set_result(None)
        else:
            # Nobody is asking (the session holds back): stop polling until somebody does,
            # or a level-triggered poll would call us on every pass of the loop.
            self._unregister()

    def _unregister(self) -> None:
        loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            loop.remove_reader(self._fd)

    def _absorb(self, chunk: bytes) -> None:
        if chunk:
            max_batch = self._max_batch
            large = self._large
            frames = self._framer.feed(chunk)
            if len(frames) == 1:  # a quiet pipe: one message per read
                self._frames.append(_envelope(frames[0], max_batch, large))
            else:
                self._frames.extend(_envelope(frame, max_batch, large) for frame in frames)
            # A line left partial by this read (its last byte no newline) may need holding.
            if self._held or (chunk[-1] != _NEWLINE and self._budget is not None):
                self._hold(bool(frames))
            return
        self._ended = True
        tail = self._framer.tail()
        if tail is not None:
            self._frames.append(_envelope(tail, self._max_batch, self._large))
        self._hold(True)

    def _hold(self, ended: bool) -> None:
        """Hold the line being read in the budget, or drop it (see the class docstring).

        ``ended``: a line ended in this read, so what was held was for it (parsed now, its
        size is the session's to hold)."""
        budget = self._budget
        if budget is None:
            return
        if ended:
            budget.release(self._held)
            self._held = 0
        held = self._held
        pending = self._framer.pending
        wanted = pending * READ_FACTOR if pending > SMALL_MESSAGE else 0
        if wanted > held and not budget.reserve(wanted - held):
            head = self._framer.head(HEAD)
            if _RESPONSE.match(head):  # never refused: it ends a request of ours
                budget.charge(wanted - held)
            else:
                self._framer.drop(_refusal(head, budget.refusal(wanted - held)))
                budget.release(held)
                wanted = 0
        elif wanted < held:
            budget.release(held - wanted)
        self._held = wanted

    def end(self) -> None:
        """Stop reading: deliver what is buffered, then end of stream."""
        self._ended = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)
        if self._waiting:
            anyio.notify_closing(self._fd)

    def close(self) -> None:
        """The session is done with the input (``MessageSource.close``)."""
        self.end()
        self._unregister()
        self._frames.clear()
        if self._budget is not None:
            self._budget.release(self._held)
            self._held = 0


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to a blocking descriptor (in a worker thread: no event loop here)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class PipeWriter:
    """Writes each message to ``fd`` as it is sent; a backlog only when the pipe is full.

    ``flush()`` is the task that drains the backlog: run it for as long as the writer is in use;
    it returns once the writer is closed and the backlog written (or the peer stopped reading).

    ``more()`` (on asyncio) tells whether input is already read and waiting to be handled: then
    the answers of a burst of requests (32 read in one chunk) are held and go out together, in
    one ``os.write`` with the last one, instead of a system call each. A lone answer is written
    at once. Held answers never wait past the current pass of the event loop (a callback sends
    them if the burst is not done by then); a write that fails there fails the next ``send``.
    """

    __slots__ = (
        "_backlog",
        "_broken",
        "_call_soon",
        "_closed",
        "_drained",
        "_fd",
        "_held",
        "_more",
        "_pollable",
        "_releasing",
        "_threaded",
        "_wake",
    )

    def __init__(
        self,
        fd: int,
        pollable: bool,
        more: Callable[[], bool] | None = None,
        threaded: bool = False,
    ) -> None:
        self._fd = fd
        self._pollable = pollable
        # A blocking descriptor written from a worker thread by ``flush`` (see the module doc).
        self._threaded = threaded and not pollable
        self._backlog = bytearray()
        self._closed = False
        self._broken: OSError | None = None
        self._wake = anyio.Event()
        self._drained = anyio.Event()
        self._more = more
        self._held = bytearray()
        #: ``loop.call_soon`` once a burst was held (the fast path seam: asyncio only).
        self._call_soon: Callable[[Callable[[], None]], asyncio.Handle] | None = None
        self._releasing: asyncio.Handle | None = None

    def send_nowait(self, item: Envelope) -> None:
        """Write the message now, or queue it behind the backlog (``WouldBlock`` if that is full)."""
        if self._broken is not None:
            raise anyio.BrokenResourceError from self._broken
        if self._closed:
            raise anyio.ClosedResourceError
        data = encode(item.message) + b"\n"
        backlog = self._backlog
        if self._threaded:
            if len(backlog) >= WRITE_BACKLOG:
                raise anyio.WouldBlock
            backlog += data
            self._wake.set()
            return
        if backlog:
            if len(backlog) >= WRITE_BACKLOG:
                raise anyio.WouldBlock
            backlog += data
            return
        more = self._more
        if more is not None and more() and self._hold(data):
            return
        held = self._held
        if held:
            held += data
            data = bytes(held)
            held.clear()
        written = self._write(data)
        if written < len(data):
            backlog += memoryview(data)[written:]
            self._wake.set()

    def _hold(self, data: bytes) -> bool:
        """Keep ``data`` for the rest of the burst (asyncio only); False if it cannot be."""
        call_soon = self._call_soon
        if call_soon is None:
            path = loop_path()
            if not isinstance(path, AsyncioPath):
                self._more = None
                return False
            call_soon = self._call_soon = path.call_soon
        self._held += data
        if self._releasing is None:
            self._releasing = call_soon(self._release)
        return True

    def _release(self) -> None:
        """Send what the burst held, if its last answer has not yet (an event-loop callback)."""
        self._releasing = None
        held = self._held
        if not held or self._broken is not None or self._backlog:
            if held and self._backlog:
                self._backlog += held
                held.clear()
            return
        data = bytes(held)
        held.clear()
        with contextlib.suppress(anyio.BrokenResourceError):  # the next ``send`` raises it
            self._emit(data)

    def _emit(self, data: bytes) -> None:
        written = self._write(data)
        if written < len(data):
            self._backlog += memoryview(data)[written:]
            self._wake.set()

    async def send(self, item: Envelope) -> None:
        """``send_nowait``, first waiting for the backlog to shrink if it is full."""
        while True:
            try:
                self.send_nowait(item)
                return
            except anyio.WouldBlock:
                if self._drained.is_set():
                    self._drained = anyio.Event()
                await self._drained.wait()

    def _write(self, data: bytes | bytearray | memoryview) -> int:
        """Write what the pipe takes without blocking (all of it, if it cannot signal readiness)."""
        try:
            if self._pollable:
                return os.write(self._fd, data)
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]
            return len(data)
        except BlockingIOError:
            return 0
        except OSError as exc:
            self._break(exc)
            raise anyio.BrokenResourceError from exc

    def _break(self, exc: OSError) -> None:
        logger.debug("peer stopped reading: %s", exc)
        self._broken = exc
        self._backlog.clear()
        self._wake.set()
        self._drained.set()

    async def flush(self) -> None:
        """Drain the backlog whenever there is one, until closed and empty (or broken)."""
        while True:
            if not self._backlog:
                self._drained.set()
                if self._closed or self._broken is not None:
                    return
                self._wake = anyio.Event()
                await self._wake.wait()
                continue
            if self._threaded:
                data = bytes(self._backlog)
                self._backlog.clear()
                try:
                    # Abandoned on cancellation: a peer that never reads must not hold us.
                    await anyio.to_thread.run_sync(
                        _write_all, self._fd, data, abandon_on_cancel=True
                    )
                except OSError as exc:
                    self._break(exc)
                    return
                continue
            await anyio.wait_writable(self._fd)
            try:
                written = self._write(self._backlog)
            except anyio.BrokenResourceError:
                return
            del self._backlog[:written]

    def close(self) -> None:
        """No more messages; ``flush()`` returns once the backlog is written."""
        self._closed = True
        if self._held:
            self._release()
        self._wake.set()
