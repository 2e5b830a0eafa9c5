"""The byte-bounded queues between a legacy HTTP+SSE session and its HTTP side.

On HTTP+SSE a POST is answered 202 once its message is queued, so the queue is where memory
goes when a session falls behind (or its SSE stream is not read): counted in messages, 60
POSTs of 3 MB once took a server from 48 MB to 1.3 GB. Here both directions are counted in
bytes: a ``MemoryBudget`` is a byte allowance (one per session, one shared by the whole
server, and the process's, ``core/budget.py``),
``Inbox`` takes a POST's message only if every budget has room (else the POST gets 429),
``Answers`` gives the bytes back once every request in it is answered (or cancelled; a body
of notifications and responses as soon as the session reads it), so handlers at work count
too, and ``Outbox`` makes the session wait while too many encoded events are waiting for a
slow SSE reader.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio
from mcpbind.generated.names import NOTIFICATIONS_CANCELLED
from mcpbind.runtime.core.budget import MemoryBudget
from mcpbind.runtime.core.transport import Envelope

from .asgi import CONTROL_BYTES, held_for
from .common import encode_event

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = ["Answers", "Inbox", "Outbox", "Reservation"]


class Reservation:
    """Bytes held in several budgets at once (a session's, the server's) for one body, and in
    the process's ``memory`` budget: there a body of at most ``CONTROL_BYTES`` is held even
    beyond the limit (``forced``), so that pings, cancellations and responses go on; a request
    in it is then refused by its session, which holds its bytes again (not ``prepaid``).

    The ``memory`` budget holds what the body takes in memory (``held``): while it is read, as
    much as ``held_for`` its size (the bytes, their parse and its result); once parsed, what its
    value takes (``settle``)."""

    __slots__ = ("budgets", "forced", "handed", "held", "memory", "size", "unanswered")

    def __init__(self, budgets: Sequence[MemoryBudget], memory: MemoryBudget) -> None:
        self.budgets = tuple(budgets)
        self.memory = memory
        self.size = 0
        self.held = 0
        self.forced = False
        #: Queued: ``Answers`` releases it, not the POST.
        self.handed = False
        self.unanswered = 0

    @property
    def prepaid(self) -> bool:
        """Whether its bytes are held in the process budget within its limit."""
        return not self.forced

    def grow(self, size: int) -> bool:
        """Hold ``size`` more bytes in every budget, or none (and answer False)."""
        taken: list[MemoryBudget] = []
        for budget in self.budgets:
            if not budget.reserve(size):
                for done in taken:
                    done.release(size)
                return False
            taken.append(budget)
        more = held_for(self.size + size) - self.held
        if not self.memory.reserve(more):
            if self.size + size > CONTROL_BYTES:
                for done in taken:
                    done.release(size)
                return False
            self.memory.charge(more)
            self.forced = True
        self.held += more
        self.size += size
        return True

    def settle(self, resident: int) -> None:
        """The body is parsed: hold what its value takes (``resident`` bytes) instead."""
        if resident > self.held:
            self.memory.charge(resident - self.held)
        else:
            self.memory.release(self.held - resident)
        self.held = resident

    def release(self) -> None:
        for budget in self.budgets:
            budget.release(self.size)
        self.memory.release(self.held)
        self.size = 0
        self.held = 0


class Answers:
    """Which requests of a session are unanswered, and the reservations their bodies hold."""

    def __init__(self) -> None:
        self._waiting: dict[Any, deque[Reservation]] = {}

    def read(self, message: JsonValue, held: Reservation) -> None:
        """The session read ``message`` (a batch or one message): wait for its requests."""
        item: JsonValue
        for item in message if type(message) is list else (message,):
            if type(item) is not dict:
                continue
            method = item.get("method")
            if method is None:
                continue
            request_id = item.get("id")
            if request_id is not None and type(request_id) in (int, str):
                held.unanswered += 1
                self._waiting.setdefault(request_id, deque()).append(held)
            elif method == NOTIFICATIONS_CANCELLED:
                params: JsonValue = item.get("params")
                if type(params) is dict:
                    self.answered(params.get("requestId"))
        if held.unanswered == 0:
            held.release()

    def answered(self, request_id: Any) -> None:
        """A response (or a cancellation) for ``request_id`` went out."""
        if type(request_id) not in (int, str):
            return
        waiting = self._waiting.get(request_id)
        if not waiting:
            return
        held = waiting.popleft()
        if not waiting:
            del self._waiting[request_id]
        held.unanswered -= 1
        if held.unanswered == 0:
            held.release()

    def clear(self) -> None:
        """The session ended: nothing will be answered, every byte is free."""
        for waiting in self._waiting.values():
            for held in waiting:
                held.release()
        self._waiting.clear()


class Inbox:
    """The session's ``incoming``: messages POSTed and not yet read, each with its bytes held.

    ``offer`` never waits (a waiting POST would hold its body in memory just the same): the
    message is queued with its reservation, or refused when ``max_messages`` are waiting.
    """

    def __init__(self, max_messages: int, answers: Answers) -> None:
        self.max_messages = max_messages
        self.answers = answers
        self.count = 0
        self._items: deque[tuple[Envelope, Reservation, int]] = deque()
        self._arrived = anyio.Event()
        self._ended = False

    def offer(self, envelope: Envelope, held: Reservation, count: int) -> bool:
        """Queue ``envelope`` (``count`` JSON-RPC messages, a batch counting each) or refuse."""
        if self._ended:
            raise anyio.ClosedResourceError
        if self._items and self.count + count > self.max_messages:
            return False
        self._items.append((envelope, held, count))
        held.handed = True
        self.count += count
        self._arrived.set()
        return True

    def end(self) -> None:
        """No more input: the session reads what is queued, then the end."""
        self._ended = True
        self._arrived.set()

    # MessageSource, for the session
    def receive_nowait(self) -> Envelope:
        if self._items:
            envelope, held, count = self._items.popleft()
            self.answers.read(envelope.message, held)
            self.count -= count
            return envelope
        if self._ended:
            raise anyio.EndOfStream
        raise anyio.WouldBlock

    async def receive(self) -> Envelope:
        while True:
            try:
                return self.receive_nowait()
            except anyio.WouldBlock:
                self._arrived = anyio.Event()
                await self._arrived.wait()

    def close(self) -> None:
        """The session stopped reading: drop what is queued and give its bytes back."""
        self._ended = True
        while self._items:
            _, held, _ = self._items.popleft()
            held.release()
        self.count = 0
        self.answers.clear()
        self._arrived.set()


class Outbox:
    """The session's ``outgoing``: SSE events encoded and waiting for the stream's writer.

    A send waits while more than ``max_bytes`` are waiting, or the process's ``budget`` is
    exceeded (one event always fits), so a client that does not read its stream stalls its
    own session, not the server's memory. Waiting events are held in the budget.
    """

    def __init__(self, max_bytes: int, answers: Answers, budget: MemoryBudget) -> None:
        self.max_bytes = max_bytes
        self.answers = answers
        self.budget = budget
        self.bytes = 0
        self._chunks: deque[bytes] = deque()
        self._arrived = anyio.Event()
        self._space = anyio.Event()
        self._closed = False

    # MessageSink, for the session
    def send_nowait(self, item: Envelope) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._chunks and (self.bytes >= self.max_bytes or self.budget.exceeded):
            raise anyio.WouldBlock
        message: JsonValue = item.message
        chunk = encode_event(message, event="message")
        part: JsonValue
        for part in message if type(message) is list else (message,):  # a batch's answer
            if type(part) is dict and "method" not in part:
                self.answers.answered(part.get("id"))
        self._chunks.append(chunk)
        self.bytes += len(chunk)
        self.budget.charge(len(chunk))
        self._arrived.set()

    async def send(self, item: Envelope) -> None:
        while True:
            try:
                self.send_nowait(item)
                return
            except anyio.WouldBlock:
                if self._space.is_set():
                    self._space = anyio.Event()
                await self._space.wait()

    def close(self) -> None:
        self._closed = True
        self._arrived.set()
        self._space.set()

    def discard(self) -> None:
        """The stream's writer is gone: what waits will never be sent; its bytes are free."""
        self._chunks.clear()
        self.budget.release(self.bytes)
        self.bytes = 0

    # for the SSE writer
    async def take(self) -> bytes | None:
        """Everything waiting, as one chunk; ``None`` once closed and drained."""
        while not self._chunks:
            if self._closed:
                return None
            self._arrived = anyio.Event()
            await self._arrived.wait()
        chunk = b"".join(self._chunks)
        self._chunks.clear()
        self.budget.release(self.bytes)
        self.bytes = 0
        self._space.set()
        return chunk
