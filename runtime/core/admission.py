"""Which incoming requests run now, which wait and which are refused: the session's bounds.

The session reads whatever the peer sends, always: stopping reading when handlers are saturated
would also stop ``ping``, ``notifications/cancelled`` (which frees a slot) and the responses to
our own requests, a head-of-line block. Memory is bounded here instead, per request:

* ``max_concurrent_handlers`` handlers run at once; up to ``spare_handlers`` more may run, each
  for a request whose method has nothing running or waiting, so a flood of one method (slow
  ``tools/call``) never holds up another (``tools/list``);
* the rest wait in a queue, without a task, and start first in, first out as handlers end;
  a queued request cancelled by the peer leaves the queue at once (a running one leaves the
  count and byte bounds at once, and its handler slot when its task has ended);
* requests running or waiting are bounded in count and in JSON bytes; past either bound a
  request is refused at once with ``SERVER_UNAVAILABLE`` (reason ``busy``), never stalled;
* their bytes are also held in the process-wide ``MemoryBudget`` (``budget.py``) from
  admission until they end, so all sessions together stay within it: past it, refused alike
  (unless the transport already holds them there: ``Envelope.prepaid``).

``SERVER_UNAVAILABLE`` (-31503): JSON-RPC leaves -32000..-32099 to implementations, but MCP
2026-07-28 (basic/index.md) reserves -32020..-32099 for the specification and tells new
implementations not to use the legacy -32000..-32019 (where the SDKs already give -32000 the
meaning "connection closed" and -32001 "request timeout", so a busy -32000 would be misread);
codes for other purposes go outside the reserved range. -31503 recalls HTTP 503 Service
Unavailable: the request was not handled and may be retried later. ``data.reason`` tells
``busy`` (bounds reached) from ``closing`` (the input ended before the request finished).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Final

from . import jsonrpc as rpc
from .budget import SMALL_MESSAGE, MemoryBudget, resident_size
from .routing import Route

__all__ = [
    "BATCH_REVISIONS",
    "SERVER_UNAVAILABLE",
    "Admission",
    "BatchReply",
    "Incoming",
    "measure",
    "unavailable",
]

SERVER_UNAVAILABLE: Final = -31503
#: Revisions whose JSON-RPC allows batches: 2025-03-26 says so, 2024-11-05 inherits JSON-RPC
#: 2.0; 2025-06-18 removed them, and no later revision has them.
BATCH_REVISIONS: Final = frozenset({"2024-11-05", "2025-03-26"})
#: Bytes counted for a message beyond its params when the transport did not say its size.
ENVELOPE_BYTES: Final = 64

RequestId = int | str


def unavailable(request_id: RequestId | None, reason: str, detail: str) -> dict[str, Any]:
    """The error response of a request this side will not (or no longer) handle."""
    message = "Busy" if reason == "busy" else "Session closing"
    return rpc.error_response(
        request_id, SERVER_UNAVAILABLE, f"{message}: {detail}", {"reason": reason}
    )


def measure(params: dict[str, Any] | None) -> int:
    """A request's size, for transports that hand over parsed messages only: its JSON length,
    or for a large one what it takes parsed (``budget.py``)."""
    size = len(rpc.encode(params)) if params else 0
    if size > SMALL_MESSAGE:
        return ENVELOPE_BYTES + resident_size(params)
    return ENVELOPE_BYTES + size


class BatchReply:
    """The responses of one JSON-RPC batch, sent as one array once every request is settled.

    ``open`` counts requests still to answer, plus one while the batch is being dispatched, so
    the array is not sent before its last member has been read.
    """

    __slots__ = ("open", "responses")

    def __init__(self) -> None:
        self.open = 1
        self.responses: list[dict[str, Any]] = []

    def settle(self, response: dict[str, Any] | None) -> list[dict[str, Any]] | None:
        """Record one answer (None: cancelled, no response); the array once all are in."""
        if response is not None:
            self.responses.append(response)
        self.open -= 1
        if self.open == 0 and self.responses:
            return self.responses
        return None


class Incoming:
    """An admitted incoming request: what its handler needs, and its share of the bounds."""

    __slots__ = (
        "answered",
        "batch",
        "charged",
        "context",
        "counted",
        "here",
        "method",
        "params",
        "queued",
        "reply",
        "request_id",
        "route",
        "size",
    )

    def __init__(
        self,
        request_id: RequestId,
        method: str,
        params: dict[str, Any] | None,
        route: Route,
        context: Any,
        size: int,
        batch: BatchReply | None,
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.params = params
        self.route = route
        self.context = context
        self.size = size
        self.batch = batch
        self.queued = False
        self.answered = False
        self.counted = True
        #: Bytes held in the memory budget for it (0: none, or the transport holds them).
        self.charged = 0
        #: Served in a transport's task (``Receiving.serve_here``) and still in its handler's
        #: first step: the answer is handed back there (``reply``), not sent.
        self.here = False
        self.reply: dict[str, Any] | None = None


class Admission:
    """The incoming requests running or waiting, by id, and the bounds they live under."""

    __slots__ = (
        "_budget",
        "_by_id",
        "_limit",
        "_max_bytes",
        "_max_count",
        "_running",
        "_spare",
        "_waiting",
        "active",
        "bytes",
        "count",
        "waiting",
    )

    def __init__(
        self, limit: int, spare: int, max_count: int, max_bytes: int, budget: MemoryBudget
    ) -> None:
        self._budget = budget
        self._limit = max(1, limit)
        self._spare = max(0, spare)
        self._max_count = max(1, max_count)
        self._max_bytes = max(1, max_bytes)
        self._by_id: dict[RequestId, Incoming] = {}
        #: The queue, first in first; empty (false) unless handlers are saturated.
        self.waiting: OrderedDict[RequestId, Incoming] = OrderedDict()
        self._running: dict[str, int] = {}
        self._waiting: dict[str, int] = {}
        self.active = 0
        self.count = 0
        self.bytes = 0

    def __len__(self) -> int:
        return self.count

    def __contains__(self, request_id: RequestId) -> bool:
        return request_id in self._by_id

    def get(self, request_id: RequestId) -> Incoming | None:
        return self._by_id.get(request_id)

    def refusal(self, size: int) -> str:
        """Why a request of ``size`` bytes was not admitted (``admit`` returned None)."""
        if self.count >= self._max_count:
            return f"{self.count} requests pending, the most this session takes"
        if self.count and self.bytes + size > self._max_bytes:
            return (
                f"{self.bytes} bytes of requests pending; {size} more would exceed "
                f"{self._max_bytes}"
            )
        return self._budget.refusal(size)

    def admit(self, entry: Incoming, prepaid: bool = False) -> bool | None:
        """Take ``entry`` if the bounds have room: True if it may start now, False if it waits
        in the queue, None if it is refused (``refusal`` says why).

        A request alone in its session is admitted however large (the transport's bound on a
        message holds it), but never beyond the process's memory budget, unless ``prepaid``:
        the transport holds its bytes there until it is answered.
        """
        count = self.count
        if count >= self._max_count or (count and self.bytes + entry.size > self._max_bytes):
            return None
        if not prepaid:
            if not self._budget.reserve(entry.size):
                return None
            entry.charged = entry.size
        self._by_id[entry.request_id] = entry
        self.count += 1
        self.bytes += entry.size
        method = entry.method
        running = self._running
        if self.active < self._limit or (
            self.active < self._limit + self._spare
            and not running.get(method)
            and not self._waiting.get(method)
        ):
            self.active += 1
            running[method] = running.get(method, 0) + 1
            return True
        entry.queued = True
        self.waiting[entry.request_id] = entry
        self._waiting[method] = self._waiting.get(method, 0) + 1
        return False

    def next_ready(self) -> Incoming | None:
        """The first queued request, now counted as running, if a handler slot is free."""
        if self.active >= self._limit or not self.waiting:
            return None
        _, entry = self.waiting.popitem(last=False)
        self._unqueue(entry)
        self.active += 1
        self._running[entry.method] = self._running.get(entry.method, 0) + 1
        return entry

    def _unqueue(self, entry: Incoming) -> None:
        entry.queued = False
        left = self._waiting[entry.method] - 1
        if left:
            self._waiting[entry.method] = left
        else:
            del self._waiting[entry.method]

    def release(self, entry: Incoming) -> None:
        """``entry`` no longer counts against the bounds on count and bytes: it ended, or it
        was cancelled (its task ends at its next checkpoint, keeping its handler slot and its
        id until then)."""
        if entry.counted:
            entry.counted = False
            self.count -= 1
            self.bytes -= entry.size
            if entry.charged:
                self._budget.release(entry.charged)

    def _forget(self, entry: Incoming) -> None:
        del self._by_id[entry.request_id]
        self.release(entry)

    def finish(self, request_id: RequestId) -> Incoming | None:
        """The handler of ``request_id`` ended: its slot and its share of the bounds are free.
        Returns its entry (None if it was not running here)."""
        entry = self._by_id.pop(request_id, None)
        if entry is None:
            return None
        if entry.counted:  # ``release``, inlined on this hot path
            entry.counted = False
            self.count -= 1
            self.bytes -= entry.size
            if entry.charged:
                self._budget.release(entry.charged)
        self.active -= 1
        running = self._running
        method = entry.method
        left = running[method] - 1
        if left:
            running[method] = left
        else:
            del running[method]
        return entry

    def withdraw(self, entry: Incoming) -> None:
        """A queued request leaves the queue without running (cancelled, or the input ended)."""
        del self.waiting[entry.request_id]
        self._unqueue(entry)
        self._forget(entry)

    def queued(self) -> list[Incoming]:
        """The requests waiting, first in first."""
        return list(self.waiting.values())

    def running(self) -> list[Incoming]:
        """The requests whose handlers run, except those cancelled (ending, not to answer)."""
        return [entry for entry in self._by_id.values() if entry.counted and not entry.queued]
