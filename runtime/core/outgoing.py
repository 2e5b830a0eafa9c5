"""Our requests to the peer: ids, correlation with responses, deadlines, progress, cancelling.

The outgoing half of a ``Session`` (``_session.py``), kept apart because it shares nothing with
the incoming half but the connection: a request's answer arrives through ``_on_response`` and
its progress through ``_on_progress``, both called by the session's reading task.
"""

from __future__ import annotations

import contextlib
import heapq
import logging
import math
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Generator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final

import anyio
from mcpbind.generated.names import INITIALIZE, NOTIFICATIONS_CANCELLED
from mcpbind.generated.support import (
    MCPModel,
    MethodSpec,
    NotificationSpec,
    ProgressCallback,
    RequestOptions,
)

from . import jsonrpc as rpc
from .bindings import Bindings, dump
from .errors import INTERNAL_ERROR, ConnectionClosedError, McpError, RequestTimeoutError
from .logsafe import LogLimiter, printable
from .loop_path import Event, LoopPath, loop_path
from .routing import SessionOptions
from .transport import Connection, Envelope, put

if TYPE_CHECKING:
    from .jsonvalue import JsonValue

__all__ = ["DEADLINE_HOLD", "REQUEST_SENT", "UNCANCELLABLE", "Outgoing", "RawSend"]

logger = logging.getLogger("mcpbind.runtime")

RequestId = int | str

#: Told ``(method, id)`` of each request the current task sends, before it leaves: for a caller
#: that must route what comes back for a request before its answer does (a listen
#: subscription's notifications), whatever ids retries of the request get.
REQUEST_SENT: ContextVar[Callable[[str, RequestId], None] | None] = ContextVar(
    "mcpbind_request_sent", default=None
)

#: The key, in ``Connection.extra``, of ``Outgoing.hold_deadline``: a transport hands it on with
#: a request (the HTTP client, as an httpx request extension), so that time the request spends
#: on something else than the peer (a user signing in on a 401) does not count against it.
DEADLINE_HOLD: Final = "mcpbind.deadline_hold"

#: Sends one whole request given its params, returning its raw result (``send_request_raw``).
RawSend = Callable[[dict[str, Any] | None], Awaitable[Any]]

#: The one request that must never be cancelled (lifecycle.md, cancellation.md).
UNCANCELLABLE: Final = frozenset({INITIALIZE})


class _Pending:
    """A request we sent and its answer-to-be; progress updates queue here for the caller."""

    __slots__ = (
        "deadline",
        "error",
        "event",
        "has_result",
        "held",
        "held_since",
        "paused",
        "progress",
        "result",
        "timed_out",
        "updates",
    )

    def __init__(self, progress: ProgressCallback | None, event: Event) -> None:
        self.deadline = math.inf
        self.timed_out = False
        self.event = event
        self.progress = progress
        self.updates: list[tuple[float, float | None, str | None]] = []
        self.result: Any = None
        self.has_result = False
        self.error: BaseException | None = None
        #: Holds on the deadline (``hold_deadline``), since when, and the time held in all.
        self.held = 0
        self.held_since = 0.0
        self.paused = 0.0


_UNSET: Final[Any] = object()


def _weak_hold(owner: Outgoing) -> Callable[[RequestId], contextlib.AbstractContextManager[None]]:
    """``owner.hold_deadline`` through a weak reference: a connection may outlive its session
    (a server keeps some for a while), and must not keep the session alive through it."""
    ref = weakref.ref(owner)

    @contextlib.contextmanager
    def hold(request_id: RequestId) -> Generator[None, None, None]:
        target = ref()
        if target is None:
            yield
            return
        with target.hold_deadline(request_id):
            yield

    return hold


class Outgoing:
    """The requests this side sent and waits for; the base of ``Session``."""

    def __init__(
        self,
        connection: Connection,
        bindings: Bindings,
        options: SessionOptions | None = None,
    ) -> None:
        self.connection = connection
        self.bindings = bindings
        self.options = options or SessionOptions()
        self._closed_error: ConnectionClosedError | None = None
        self._input_closed: ConnectionClosedError | None = None
        self._next_id = 0
        self._pending: dict[RequestId, _Pending] = {}
        # Ids we cancelled recently: their late responses are expected, not worth a warning.
        self._abandoned: deque[RequestId] = deque(maxlen=256)
        #: Rate-limits the warning for responses to no request (a peer can send any number);
        #: made on the first one.
        self._unknown_log: LogLimiter | None = None
        self._deadlines: list[tuple[float, int, RequestId]] = []
        self._deadline_seq = 0
        self._next_wake = math.inf
        #: Made by the watcher when it starts (an anyio.Event costs several us; a session per
        #: stateless HTTP request never has a watcher).
        self._deadline_moved: anyio.Event | None = None
        #: Whether ``_watch_deadlines`` runs: started with the first deadline, so a session that
        #: never sends a request with a timeout (one per stateless HTTP request) has no watcher.
        self._watching = False
        #: The fast path seam (``loop_path.py``): picked when the session starts, or by the
        #: first request sent before that.
        self._path: LoopPath | None = None
        connection.extra[DEADLINE_HOLD] = _weak_hold(self)

    @property
    def loop_path(self) -> LoopPath:
        """How this session uses its event loop (``loop_path.py``), picked once."""
        path = self._path
        if path is None:
            path = self._path = loop_path()
        return path

    def now(self) -> float:
        """``anyio.current_time()``, minus its backend lookup (4 us a call) on asyncio."""
        return (self._path or self.loop_path).clock()

    def _fail_pending(self, reason: str) -> None:
        error = self._closed_error or ConnectionClosedError(reason)
        for pending in self._pending.values():
            if not pending.has_result and pending.error is None:
                pending.error = error
                pending.event.set()

    # -- sending --------------------------------------------------------------------------

    async def send_raw(self, message: Any, related_id: RequestId | None = None) -> None:
        """Hand one message (or a batch's array of responses) to the transport; a closed
        connection raises ``ConnectionClosedError``."""
        if self._closed_error is not None:
            raise self._closed_error
        try:
            await put(self.connection.outgoing, Envelope(message, related_id=related_id))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise self._closed_error or ConnectionClosedError("the transport is closed") from exc

    async def send_notification(
        self,
        spec: NotificationSpec[Any],
        params: MCPModel | dict[str, Any] | None,
        related_id: RequestId | None = None,
    ) -> None:
        """Send a notification described by a generated spec."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": spec.method}
        body = dump(params)
        if body is not None:
            message["params"] = body
        await self.send_raw(message, related_id)

    async def send_request_raw(
        self,
        spec: MethodSpec[Any, Any],
        body: dict[str, Any] | None,
        options: RequestOptions | None = None,
        send: RawSend | None = None,
    ) -> Any:
        """Send one whole request the router does not type (a lifecycle's ``initialize`` and
        ``server/discover``, an extension's requests) and return its raw result: ``send(body)``,
        by default ``request_raw``; a ``send`` of its own is for a request that takes more than
        one message (the stateless era's input rounds).

        The seam the endpoint's outgoing middleware wraps for these requests, as it wraps
        ``send_request`` for the others (``endpoints/middleware.py``): a request sent through
        either is seen once, whatever messages it takes.
        """
        if send is not None:
            return await send(body)
        return await self.request_raw(spec, body, options)

    async def request_raw(
        self,
        spec: MethodSpec[Any, Any],
        body: dict[str, Any] | None,
        options: RequestOptions | None = None,
        related_id: RequestId | None = None,
    ) -> Any:
        """Send a request as given, without asking the router, and return the raw result.

        One message, past the outgoing middleware: a whole request the router does not type
        goes by ``send_request_raw``, which the middleware sees.
        """
        closed = self._closed_error or self._input_closed
        if closed is not None:
            raise closed
        opts: RequestOptions = options or {}
        progress = opts.get("progress")
        self._next_id += 1
        request_id = self._next_id
        if progress is not None:
            body = dict(body) if body else {}
            meta = dict(body.get("_meta") or {})
            meta["progressToken"] = request_id
            body["_meta"] = meta
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": spec.method}
        if body is not None:
            message["params"] = body
        sent = REQUEST_SENT.get()
        if sent is not None:
            sent(spec.method, request_id)
        pending = _Pending(progress, (self._path or self.loop_path).event())
        self._pending[request_id] = pending
        try:
            await self.send_raw(message, related_id)
            await self._await_answer(spec, request_id, pending, opts.get("timeout", _UNSET))
        except anyio.get_cancelled_exc_class():
            if (
                not pending.has_result
                and pending.error is None
                and spec.method not in UNCANCELLABLE
            ):
                with anyio.CancelScope(shield=True):
                    await self._send_cancel(
                        request_id, "the caller cancelled the request", related_id
                    )
            raise
        finally:
            del self._pending[request_id]
        if pending.error is not None:
            raise pending.error
        return pending.result

    async def _await_answer(
        self, spec: MethodSpec[Any, Any], request_id: int, pending: _Pending, timeout: Any
    ) -> None:
        """Wait for the answer, running progress callbacks here, in the caller's task.

        The deadline lives on the pending request and one watcher task enforces all of them,
        which is cheaper than a cancel scope per request; progress moves it forward, up to the
        hard deadline.
        """
        if timeout is _UNSET:
            timeout = self.options.request_timeout
        cap = self.options.max_request_timeout
        start = self.now()
        hard_deadline = start + cap if cap is not None else math.inf
        pending.deadline = min(start + timeout if timeout is not None else math.inf, hard_deadline)
        self._watch(request_id, pending.deadline)
        while True:
            await pending.event.wait()
            finished = pending.has_result or pending.error is not None
            if pending.timed_out and not finished:
                waited = self.now() - start
                await self._send_cancel(request_id, f"timed out after {waited:g} s", None)
                raise RequestTimeoutError(spec.method, request_id, waited)
            if not finished:
                pending.event = (self._path or self.loop_path).event()
            if pending.updates:
                updates, pending.updates = pending.updates, []
                if timeout is not None and not finished:
                    pending.deadline = min(self.now() + timeout, hard_deadline + pending.paused)
                if pending.progress is not None:
                    for update in updates:
                        await pending.progress(*update)
            if finished:
                return

    @contextlib.contextmanager
    def hold_deadline(self, request_id: RequestId) -> Generator[None, None, None]:
        """While in this block, request ``request_id``'s deadline does not run: the time spent
        is added to it (and to its hard cap) when the last hold ends."""
        pending = self._pending.get(request_id)
        if pending is None:
            yield
            return
        if pending.held == 0:
            pending.held_since = self.now()
        pending.held += 1
        try:
            yield
        finally:
            pending.held -= 1
            if pending.held == 0:
                spent = self.now() - pending.held_since
                pending.paused += spent
                pending.deadline += spent
                if request_id in self._pending:
                    self._watch(request_id, pending.deadline)

    def _watch(self, request_id: RequestId, deadline: float) -> None:
        """Put a deadline under the watcher's eye, waking it if it is now the earliest."""
        if deadline == math.inf:
            return
        heap = self._deadlines
        if len(heap) > 2 * len(self._pending) + 64:
            # Answered requests leave their entries behind; drop them before the heap grows.
            heap[:] = [entry for entry in heap if entry[2] in self._pending]
            heapq.heapify(heap)
        self._deadline_seq += 1
        heapq.heappush(heap, (deadline, self._deadline_seq, request_id))
        if not self._watching:
            self._watching = True
            self._start_watching()
        elif deadline < self._next_wake and self._deadline_moved is not None:
            self._deadline_moved.set()

    def _start_watching(self) -> None:
        """Run ``_watch_deadlines`` in the owner's task group (the session's)."""
        raise NotImplementedError

    async def _watch_deadlines(self) -> None:
        """Time out pending requests whose deadline passed (one task for all of them)."""
        heap = self._deadlines
        while True:
            now = self.now()
            while heap and heap[0][0] <= now:
                _, _, request_id = heapq.heappop(heap)
                pending = self._pending.get(request_id)
                if pending is None or pending.has_result or pending.error is not None:
                    continue
                if pending.held:
                    continue  # watched again when the hold ends (``hold_deadline``)
                if pending.deadline > now:
                    self._deadline_seq += 1
                    heapq.heappush(heap, (pending.deadline, self._deadline_seq, request_id))
                    continue
                pending.timed_out = True
                pending.event.set()
            self._next_wake = heap[0][0] if heap else math.inf
            moved = self._deadline_moved = anyio.Event()
            with anyio.move_on_after(self._next_wake - now):
                await moved.wait()

    async def _send_cancel(
        self, request_id: RequestId, reason: str, related_id: RequestId | None
    ) -> None:
        self._abandoned.append(request_id)
        message = {
            "jsonrpc": "2.0",
            "method": NOTIFICATIONS_CANCELLED,
            "params": {"requestId": request_id, "reason": reason},
        }
        with contextlib.suppress(ConnectionClosedError):
            await self.send_raw(message, related_id)

    def _on_response(self, message: dict[str, Any], kind: object) -> None:
        request_id = message.get("id")
        pending = self._pending.get(request_id) if rpc.is_request_id(request_id) else None
        if pending is None or pending.has_result or pending.error is not None:
            if request_id in self._abandoned:
                logger.debug("ignored the late response to cancelled request %r", request_id)
                return
            if self._unknown_log is None:
                self._unknown_log = LogLimiter(logger)
            if kind == rpc.ERROR_RESPONSE and request_id is None:
                text = "the peer reported an error: %s"
                self._unknown_log.log(logging.WARNING, text, printable(message.get("error")))
            else:
                text = "dropped a response with an unknown id %r"
                self._unknown_log.log(logging.WARNING, text, printable(request_id))
            return
        if kind == rpc.RESPONSE:
            pending.result = message["result"]
            pending.has_result = True
        else:
            error: JsonValue = message.get("error")
            if type(error) is dict and type(error.get("code")) is int:
                pending.error = McpError(
                    error["code"], str(error.get("message", "")), error.get("data")
                )
            else:
                pending.error = McpError(INTERNAL_ERROR, f"malformed error response: {error!r}")
        pending.event.set()

    def _on_progress(self, params: dict[str, Any] | None) -> None:
        if not params:
            return
        token = params.get("progressToken")
        pending = self._pending.get(token) if rpc.is_request_id(token) else None
        progress: Any = params.get("progress")
        if pending is None or pending.progress is None or type(progress) not in (int, float):
            return
        total: Any = params.get("total")
        message = params.get("message")
        pending.updates.append(
            (
                float(progress),
                float(total) if type(total) in (int, float) else None,
                message if type(message) is str else None,
            )
        )
        pending.event.set()
