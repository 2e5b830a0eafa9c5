"""What resuming a dropped SSE stream needs (``streamable-http.md``, "Resumability and
Redelivery"): the last event id seen and the server's ``retry`` advice."""

from __future__ import annotations

from httpx_sse import ServerSentEvent

__all__ = ["DEFAULT_RETRY", "StreamState"]

#: How long to wait before reconnecting when the server gave no ``retry`` advice.
DEFAULT_RETRY = 1.0


class StreamState:
    """What resuming needs: the last event id seen and the server's ``retry`` advice."""

    __slots__ = ("events", "last_event_id", "retry")

    def __init__(self) -> None:
        self.last_event_id: str | None = None
        self.retry: float | None = None
        self.events = 0

    def seen(self, event: ServerSentEvent) -> None:
        self.events += 1
        if event.id:
            self.last_event_id = event.id
        if event.retry is not None:
            self.retry = event.retry / 1000

    def delay(self) -> float:
        return self.retry if self.retry is not None else DEFAULT_RETRY
