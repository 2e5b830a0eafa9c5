"""Where a Streamable HTTP server keeps the SSE events it sent, so a client can resume.

A client that lost a stream sends ``GET`` with ``Last-Event-ID``; the server replays what the
store holds after that id *on the same stream* and then continues live. The store is
pluggable (a shared one, e.g. in Redis, lets another worker replay); the in-memory one here
is the default and keeps a bounded number of events per stream and of streams, so a session
that never resumes cannot grow it without limit.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Any, Protocol

__all__ = ["EventStore", "InMemoryEventStore"]


class EventStore(Protocol):
    """Stores events per stream and replays them.

    ``message`` is ``None`` for a priming event (an id with no payload); replay must skip
    those but must still accept their ids as ``Last-Event-ID``. Event ids must be unique across
    every stream the store serves.
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


class InMemoryEventStore:
    """A bounded in-process store: event ids are ``<stream>/<sequence>``.

    Keeping the stream in the id makes lookups O(1) and lets ids be compared by sequence.
    Once a stream holds ``max_events_per_stream`` events the oldest are dropped (a client
    resuming from before them gets ``None``: it cannot be replayed faithfully); beyond
    ``max_streams`` the least recently written stream is dropped whole.
    """

    def __init__(self, max_events_per_stream: int = 512, max_streams: int = 64) -> None:
        self.max_events_per_stream = max_events_per_stream
        self.max_streams = max_streams
        self._streams: OrderedDict[str, deque[tuple[int, Any]]] = OrderedDict()
        self._next: dict[str, int] = {}

    async def store_event(self, stream_id: str, message: Any) -> str:
        events = self._streams.get(stream_id)
        if events is None:
            events = self._streams[stream_id] = deque(maxlen=self.max_events_per_stream)
            while len(self._streams) > self.max_streams:
                dropped, _ = self._streams.popitem(last=False)
                self._next.pop(dropped, None)
        else:
            self._streams.move_to_end(stream_id)
        seq = self._next.get(stream_id, 0) + 1
        self._next[stream_id] = seq
        events.append((seq, message))
        return f"{stream_id}/{seq}"

    async def replay_events_after(
        self, last_event_id: str
    ) -> tuple[str, list[tuple[str, Any]]] | None:
        stream_id, _, raw_seq = last_event_id.rpartition("/")
        events = self._streams.get(stream_id)
        if events is None or not raw_seq.isdigit():
            return None
        seq = int(raw_seq)
        if seq > self._next.get(stream_id, 0) or (events and seq < events[0][0] - 1):
            return None
        return stream_id, [(f"{stream_id}/{n}", m) for n, m in events if n > seq and m is not None]
