"""The transport seam: a source and a sink of parsed messages, in envelopes.

A transport is any async context manager that yields a ``Connection``. While the context is open
the transport moves messages between the wire and the two ends: a ``MessageSource`` the session
reads and a ``MessageSink`` it writes. anyio memory object streams are both (most transports use
a pair of them); the stdio transport instead reads and writes its pipes on demand, in the
session's own tasks, which saves an event-loop pass per message each way. The transport closing its
send side of ``incoming`` (end of stream) tells the session the peer is gone: the session fails
its pending requests, lets running handlers finish briefly, and returns. The session never
closes ``outgoing``; leaving the transport's context does, after flushing what was queued, and
shuts the wire down (the stdio client then stops the server process).

Each message travels in an ``Envelope``:

* incoming: ``message`` is the parsed JSON value (usually a dict) or ``Malformed`` if the frame
  was not JSON; ``context`` is a slot for the transport (an HTTP request, auth info...) that the
  runtime hands to handlers untouched as ``RequestContext.transport_context``; ``size`` is the
  frame's length in bytes where the transport knows it (0: the session measures the params
  itself), counted against the session's byte budget for pending requests; ``prepaid`` says
  the transport holds those bytes in the process's ``MemoryBudget`` until the request is
  answered (legacy SSE does), so the session does not hold them a second time; ``request``
  says the transport has already classified the message as a valid request (Streamable HTTP
  must, to answer an invalid one with a status), so the session does not classify it again;
* outgoing: ``message`` is a dict to serialise; ``related_id`` is the id of the incoming request
  this message answers or belongs to (a response, or a progress/log notification or nested
  request sent by its handler), so a transport with per-request channels (Streamable HTTP) can
  route it; ``None`` for unrelated messages.

stdio and Streamable HTTP transports frame and parse; the session classifies and dispatches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import anyio

from .jsonrpc import Malformed

__all__ = [
    "RUNTIME_OWN",
    "SERVING",
    "Connection",
    "Envelope",
    "Malformed",
    "MessageSink",
    "MessageSource",
    "put",
    "take",
]

_MEMORY_STREAMS = "anyio.streams.memory"
#: Default buffer of the streams a transport creates: enough to keep both ends busy, small
#: enough that a flood applies back-pressure instead of growing memory.
STREAM_BUFFER = 256


@dataclass(slots=True)
class Envelope:
    """One message plus the per-message metadata described in the module docstring."""

    message: Any
    context: Any = None
    related_id: int | str | None = None
    size: int = 0
    prepaid: bool = False
    request: bool = False


class MessageSource(Protocol):
    """What a session reads: the subset of ``MemoryObjectReceiveStream`` it uses.

    ``receive_nowait`` raises ``anyio.WouldBlock`` when nothing is ready yet; both raise
    ``anyio.EndOfStream`` once the peer is gone and everything it sent has been read.
    """

    def receive_nowait(self) -> Envelope: ...

    async def receive(self) -> Envelope: ...

    def close(self) -> None: ...


class MessageSink(Protocol):
    """What a session writes: the subset of ``MemoryObjectSendStream`` it uses.

    ``send_nowait`` raises ``anyio.WouldBlock`` when the sink is full (``send`` then waits),
    ``anyio.BrokenResourceError`` when the peer stopped reading, ``anyio.ClosedResourceError``
    once the transport closed it.
    """

    def send_nowait(self, item: Envelope, /) -> None: ...

    async def send(self, item: Envelope, /) -> None: ...

    def close(self) -> None: ...


def _no_reason() -> str | None:
    return None


@dataclass
class Connection:
    """What a transport yields: the session reads ``incoming`` and writes ``outgoing``.

    ``close_reason`` lets the transport explain an end of stream (e.g. "server exited with
    status 1"), which the session puts into the errors of requests it has to fail. ``extra``
    holds what else a transport wants to expose (the stdio client puts the server's ``pid``).
    """

    incoming: MessageSource
    outgoing: MessageSink
    close_reason: Callable[[], str | None] = field(default=_no_reason)
    extra: dict[str, Any] = field(default_factory=lambda: {})


#: The ``Connection.extra`` key of a session the runtime opens to its own server (the HTTP
#: transport listing tools to learn their header parameters): no client sent what it carries,
#: so an endpoint's middleware does not see it.
RUNTIME_OWN: Final = "mcpbind.runtime_own"

#: The ``Connection.extra`` key under which a session names itself while it reads the
#: connection on the native path (``loop_path.py``): a transport may then serve a request in
#: the task that received it (``Session.serve_here``) instead of handing it to the reader.
SERVING: Final = "mcpbind.serving"


async def put(stream: MessageSink, envelope: Envelope) -> None:
    """Send without yielding to the event loop when the buffer has room.

    ``MemoryObjectSendStream.send`` always passes a checkpoint first, which costs an event-loop
    iteration per message; on the hot path that doubled round-trip latency.
    """
    try:
        stream.send_nowait(envelope)
    except anyio.WouldBlock:
        await stream.send(envelope)


async def take(stream: MessageSource) -> Envelope:
    """Receive without yielding when a message is already queued (see ``put``).

    Raises ``anyio.EndOfStream`` once the stream is closed and drained. Loops built on it must
    checkpoint now and then themselves, or a flood would starve other tasks.
    """
    try:
        return stream.receive_nowait()
    except anyio.WouldBlock:
        if type(stream).__module__ == _MEMORY_STREAMS:
            # Imported here: a stdio server never uses memory streams, nor pays for importing them.
            from ._memory_receive import receive_directly

            envelope: Envelope = await receive_directly(stream)  # type: ignore[arg-type]
            return envelope
        return await stream.receive()
