"""Where a Streamable HTTP server keeps the SSE events it sent, so a client can resume.

A client that lost a stream sends ``GET`` with ``Last-Event-ID``; the server replays what the
store holds after that id *on the same stream* and then continues live. The store is
pluggable (a shared one, e.g. in Redis, lets another worker replay); the in-memory one here
is the default. It keeps events long enough to survive a real outage (a window of time *or*
a number of events per stream, whichever keeps more), never lets a response go by age, and is
bounded in bytes and events so that a session that never resumes cannot grow it.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any, Final, NamedTuple, Protocol

from mcpbind.runtime.core.budget import MemoryBudget, process_budget
from mcpbind.runtime.core.jsonrpc import encode

__all__ = ["EventStore", "InMemoryEventStore"]

logger = logging.getLogger("mcpbind.runtime.http")

#: A sequence number longer than this is not one we issued (and ``int()`` of 5,000 digits
#: raises): such ids are unknown, not an error.
_MAX_SEQ_DIGITS: Final = 19
# TOMBSTONES, BUSY_REPLAY, EVENT_OVERHEAD, is_response and parse_event_id are shared with the
# Redis store (``cluster/_redis_events.py``), which keeps the same bounds and event ids.
#: Streams whose events are all gone are remembered (a few bytes each) this many at most, so
#: that resuming from them is answered "no longer available" rather than "unknown".
TOMBSTONES: Final = 1024
#: How a store's ``unavailable_reason`` starts when a replay found no room in the memory budget
#: (the GET is then answered 503 with ``Retry-After``, not 400).
BUSY_REPLAY: Final = "busy: "
#: What an event costs beyond its encoded message (its entry, key and record), counted
#: against ``max_bytes`` so that many tiny events are bounded too.
EVENT_OVERHEAD: Final = 200


class EventStore(Protocol):
    """Stores events per stream and replays them.

    ``message`` is ``None`` for a priming event (an id with no payload); replay must skip
    those but must still accept their ids as ``Last-Event-ID``. Event ids must be unique across
    every stream the store serves. ``replay_events_after`` must answer any string (``None``
    for ids it does not know or can no longer replay in full), never raise.
    """

    async def store_event(self, stream_id: str, message: Any) -> str:
        """Record ``message`` as the next event of ``stream_id``; return its event id."""
        ...

    async def replay_events_after(
        self, last_event_id: str
    ) -> tuple[str, list[tuple[str, Any]]] | None:
        """The stream of ``last_event_id`` and its later events (id, message), oldest first,
        priming events left out; ``None`` if the id is unknown (or was evicted)."""
        ...


class _Stream:
    """One stream's retained sequence numbers (oldest first) and what was dropped of it."""

    __slots__ = ("floor", "id", "last", "seqs")

    def __init__(self, stream_id: str) -> None:
        self.id = stream_id
        self.seqs: deque[int] = deque()
        self.last = 0
        #: Every event up to ``floor`` is gone: resuming from before it would leave a gap.
        self.floor = 0


class _Event(NamedTuple):
    stream: _Stream
    seq: int
    message: Any
    size: int
    at: float
    pinned: bool


def is_response(message: Any) -> bool:
    return type(message) is dict and "method" not in message and "id" in message


def parse_event_id(last_event_id: Any) -> tuple[str, int] | None:
    """``<stream>/<seq>`` as issued by this store, or ``None`` for anything else."""
    if type(last_event_id) is not str:
        return None
    stream_id, slash, raw = last_event_id.rpartition("/")
    if not slash or not raw or len(raw) > _MAX_SEQ_DIGITS:
        return None
    if not (raw.isascii() and raw.isdigit()):  # "²".isdigit() is True; int("²") raises
        return None
    return stream_id, int(raw)


class InMemoryEventStore:
    """A bounded in-process store: event ids are ``<stream>/<sequence>``.

    Retention: an event is kept while it is younger than ``window`` seconds *or* among the
    last ``max_events_per_stream`` of its stream, whichever keeps more; a response (the message
    that ends a request's stream) is never dropped for age or count, as the client may not
    have received it yet. Over everything, the store holds at most ``max_bytes`` of encoded
    messages and ``max_events`` events: beyond either, the oldest events go first, whatever
    they are (a response dropped this way is logged); each event counts its encoded size plus
    200 bytes of bookkeeping. One store serves one session; all of them together are bounded by
    the process's memory ``budget`` (``None``: ``process_budget()``), where each event is
    held until it is dropped: an event is always recorded (the request it belongs to is already
    running), but while the budget is exceeded the store drops its own oldest events first, so
    resumption is what gives way under memory pressure, never an answer. ``close()`` (the
    session ended) gives back every byte.

    Resuming from an id whose later events are partly gone answers ``None`` (the server
    refuses it with 400) instead of replaying with a silent gap; ``unavailable_reason`` says
    why in words. Resuming from an id also releases the events up to it, which the client has.
    ``clock`` (seconds, monotonic) is injectable so tests can move time without sleeping.
    """

    def __init__(
        self,
        max_events_per_stream: int = 512,
        max_streams: int = 4096,
        *,
        window: float = 300.0,
        max_bytes: int = 8 * 1024 * 1024,
        max_events: int = 20_000,
        clock: Callable[[], float] = time.monotonic,
        budget: MemoryBudget | None = None,
    ) -> None:
        self.max_events_per_stream = max_events_per_stream
        self.max_streams = max_streams
        self.window = window
        self.max_bytes = max_bytes
        self.max_events = max_events
        self.clock = clock
        self.budget = budget or process_budget()
        #: Every retained event by id, oldest first: the global eviction order.
        self._events: OrderedDict[str, _Event] = OrderedDict()
        self._streams: dict[str, _Stream] = {}
        self._gone: OrderedDict[str, _Stream] = OrderedDict()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._events)

    async def store_event(self, stream_id: str, message: Any) -> str:
        stream = self._streams.get(stream_id)
        if stream is None:
            stream = self._gone.pop(stream_id, None) or _Stream(stream_id)
            self._streams[stream_id] = stream
        stream.last += 1
        seq = stream.last
        event_id = f"{stream_id}/{seq}"
        size = EVENT_OVERHEAD + (len(encode(message)) if message is not None else 0)
        now = self.clock()
        self._events[event_id] = _Event(stream, seq, message, size, now, is_response(message))
        stream.seqs.append(seq)
        self.bytes += size
        self.budget.charge(size)
        self._trim(stream, now)
        self._enforce_caps()
        return event_id

    async def replay_events_after(
        self, last_event_id: str
    ) -> tuple[str, list[tuple[str, Any]]] | None:
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            return None
        stream_id, seq = parsed
        stream = self._streams.get(stream_id) or self._gone.get(stream_id)
        if stream is None or seq > stream.last or seq < stream.floor:
            return None
        self._trim(stream, self.clock())
        if seq < stream.floor:
            return None
        self._release(stream, seq)
        events = self._events
        replay: list[tuple[str, Any]] = []
        for n in stream.seqs:
            key = f"{stream_id}/{n}"
            message = events[key].message
            if message is not None:
                replay.append((key, message))
        return stream_id, replay

    def unavailable_reason(self, last_event_id: str) -> str:
        """Why ``replay_events_after(last_event_id)`` answers ``None``, for the client."""
        parsed = parse_event_id(last_event_id)
        if parsed is not None:
            stream_id, seq = parsed
            stream = self._streams.get(stream_id) or self._gone.get(stream_id)
            if stream is not None and seq <= stream.last:
                return (
                    f"events after Last-Event-ID {last_event_id!r} are no longer available "
                    f"(kept {self.window:g} s or the last {self.max_events_per_stream} per "
                    "stream); reissue the request"
                )
        return "unknown Last-Event-ID"

    def close(self) -> None:
        """The session is gone: drop every event and give its bytes back to the budget."""
        self.budget.release(self.bytes)
        self.bytes = 0
        self._events.clear()
        self._streams.clear()
        self._gone.clear()

    # -- dropping ----------------------------------------------------------------------------

    def _drop_front(self, stream: _Stream) -> _Event:
        """Drop the oldest retained event of ``stream`` (the only place events leave)."""
        seq = stream.seqs.popleft()
        event = self._events.pop(f"{stream.id}/{seq}")
        self.bytes -= event.size
        self.budget.release(event.size)
        stream.floor = max(stream.floor, seq)
        if not stream.seqs:
            self._retire(stream)
        return event

    def _retire(self, stream: _Stream) -> None:
        """A stream with no events left: remembered as a tombstone only."""
        if self._streams.get(stream.id) is stream:
            del self._streams[stream.id]
        self._gone[stream.id] = stream
        while len(self._gone) > min(self.max_streams, TOMBSTONES):
            self._gone.popitem(last=False)

    def _release(self, stream: _Stream, seq: int) -> None:
        """The client resumed from ``seq``: it has every event up to it."""
        while stream.seqs and stream.seqs[0] <= seq:
            self._drop_front(stream)

    def _trim(self, stream: _Stream, now: float) -> None:
        """Per-stream retention: drop what is both out of the window and beyond the count."""
        cutoff = now - self.window
        events = self._events
        while len(stream.seqs) > self.max_events_per_stream:
            event = events[f"{stream.id}/{stream.seqs[0]}"]
            if event.at > cutoff or event.pinned:
                break
            self._drop_front(stream)

    def _enforce_caps(self) -> None:
        """Global bounds: oldest first, whatever they are."""
        events = self._events
        while len(events) > 1 and (
            self.bytes > self.max_bytes
            or len(events) > self.max_events
            or len(self._streams) > self.max_streams
            or self.budget.exceeded
        ):
            oldest = next(iter(events.values()))
            dropped = self._drop_front(oldest.stream)
            if dropped.pinned:
                logger.warning(
                    "event store full: dropped the undelivered response %s/%d",
                    dropped.stream.id.encode("unicode_escape").decode("ascii"),
                    dropped.seq,
                )
