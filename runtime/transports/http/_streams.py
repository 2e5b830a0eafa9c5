"""A logical stream of the Streamable HTTP server: a POST's answers, or the GET stream."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any, Final

import anyio
from mcpbind.runtime.core.loop_path import LoopPath

from ._signals import Signal

__all__ = ["BACKLOG", "CONSUMER_BUFFER", "JSON_MODE", "SSE_MODE", "RequestId", "Stream"]

RequestId = int | str

#: SSE events queued for an attached response before the sender waits for the client.
CONSUMER_BUFFER: Final = 64
#: Unrelated messages kept while no ``GET`` stream is open, delivered when one opens.
BACKLOG: Final = 64
#: Modes of a POST's stream: answered as JSON, as SSE, or not decided yet (``None``).
JSON_MODE: Final = "json"
SSE_MODE: Final = "sse"


class Stream:
    """One logical stream: a POST's answers, or the session's standalone GET stream.

    ``mode`` is ``JSON_MODE``, ``SSE_MODE`` or ``None`` (not decided). ``queue`` holds what the attached
    response has still to write: response messages (JSON and undecided) or encoded SSE events.
    ``consumer`` is the token of the attached response, if any; ``pending`` holds the request
    ids whose responses are still due. ``id`` is given when the stream becomes SSE.
    """

    __slots__ = (
        "consumer",
        "done",
        "full_since",
        "id",
        "mode",
        "pending",
        "queue",
        "signal",
        "space",
        "version",
    )

    def __init__(
        self,
        path: LoopPath,
        pending: Iterable[RequestId] = (),
        mode: str | None = SSE_MODE,
        version: str | None = None,
        stream_id: str | None = None,
    ) -> None:
        self.id = stream_id
        self.mode = mode
        self.version = version
        self.pending: set[RequestId] = set(pending)
        self.queue: deque[Any] = deque()
        self.signal = Signal(path)
        self.space: anyio.Event | None = None
        #: When the attached response's buffer last filled up, while it stays full.
        self.full_since: float | None = None
        self.consumer: int | None = None
        self.done = False

    def attach(self, token: int) -> None:
        """A new response writes this stream from now on; an older one ends."""
        if self.consumer is not None:
            self.signal.set()
        self.consumer = token

    def detach(self, token: int) -> None:
        """The response ``token`` is gone (finished or disconnected); the stream goes on."""
        if self.consumer == token:
            self.consumer = None
            self.signal.set()
            self.full_since = None  # ``drained``, inline: every POST's answer
            if self.space is not None:
                self.space.set()
                self.space = None

    def drained(self) -> None:
        self.full_since = None
        if self.space is not None:
            self.space.set()
            self.space = None

    def take(self) -> bytes:
        """Everything queued for an SSE response, as one chunk."""
        queue = self.queue
        if not queue:
            return b""
        chunk = queue.popleft() if len(queue) == 1 else b"".join(queue)
        queue.clear()
        self.drained()
        return chunk
