"""The session's receiving side: reading its input, and each request's way to an answer.

Split from ``session.py`` (which keeps running and closing a session, and sending): the read
loop, batches, a request's checks (params form, id in use, route, admission) up to its
handler's start (in the reading task on asyncio: ``_eager.py``), its answer, and the
notifications, cancellations included. ``Session`` is the one class built on it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final

import anyio
from anyio.abc import TaskGroup
from anyio.lowlevel import checkpoint
from mcpbind.generated.names import NOTIFICATIONS_CANCELLED, NOTIFICATIONS_PROGRESS

from . import _eager as eager, jsonrpc as rpc, jsonvalue
from ._background import Background
from ._respond import respond
from .admission import BATCH_REVISIONS, Admission, BatchReply, Incoming, measure, unavailable
from .errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, ConnectionClosedError, McpError
from .handler_tasks import Borrowed, HandlerTasks
from .logsafe import LogLimiter, printable
from .outgoing import Outgoing
from .routing import PeerState, Router
from .transport import Envelope, take

if TYPE_CHECKING:
    from .session import Session

__all__ = ["FAIRNESS", "Receiving"]

logger = logging.getLogger("mcpbind.runtime")

RequestId = int | str

#: Messages handled back to back before the reading task lets others run.
FAIRNESS: Final = 64


class Receiving(Outgoing):
    """What a ``Session`` does with what it reads; its state is made by ``Session.__init__``."""

    router: Router
    peer: PeerState
    _handlers: HandlerTasks | None
    _admission: Admission
    _room: anyio.Event | None
    _tg: TaskGroup | None
    _notifying: int
    _dropped_log: LogLimiter | None
    _background: Background | None
    _eager: bool
    _relay: eager.Relay

    def _spawn(self, job: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run ``job(*args)`` in the session's task group, or with its background jobs."""
        if self._tg is not None:
            self._tg.start_soon(job, *args)
        elif self._background is not None:
            self._background.start_soon(job, *args)

    @property
    def _running(self) -> bool:
        return self._tg is not None or self._background is not None

    # -- receiving ------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        """Read until the input ends. On asyncio the reading runs in a task of its own, which a
        handler started in it may keep (``_begin``); a new task then reads on."""
        if self._eager:
            await self._relay.run()
        else:
            await self._read_messages(None)

    async def _read_messages(self, token: object | None) -> None:
        incoming = self.connection.incoming
        admission = self._admission
        streak = 0
        try:
            while True:
                try:
                    envelope = await take(incoming)
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    return
                message: jsonvalue.JsonValue | rpc.Malformed = envelope.message
                if envelope.request and type(message) is dict:  # a valid request: classified
                    await self._on_request(message, envelope, None, envelope.size)
                elif type(message) is list:
                    await self._on_batch(message, envelope)
                else:
                    await self._on_message(message, envelope, None, envelope.size)
                # Not held while waiting for the next one: an idle session would keep its last
                # message, no longer charged to the memory budget once answered.
                del envelope, message
                if self._relay.token is not token:
                    return  # this task ran a handler that had to wait; another one reads now
                # Nothing holds the reading back: requests queue or are refused, notifications
                # past their bound are dropped (``_on_notification``), so pings, cancellations
                # and responses are always read.
                streak += 1
                if streak >= FAIRNESS or admission.waiting:
                    # With requests queued, handlers get a turn after every message read, so
                    # a peer that pipelines many quick requests has them answered, not refused.
                    streak = 0
                    await checkpoint()
        finally:
            if self._relay.token is token:
                incoming.close()

    async def _on_batch(self, batch: list[Any], envelope: Envelope) -> None:
        """A JSON-RPC batch: refused whole (one error, id null) unless the negotiated revision
        has batches (none is negotiated yet: ``initialize`` must not be batched) and it fits
        the pending bound; else each member is admitted like a single message, and the
        responses go back as one array once all are in (none for notifications only)."""
        revision = self.peer.revision
        if revision not in BATCH_REVISIONS:
            why = (
                f"revision {revision} has no JSON-RPC batches"
                if revision is not None
                else "no batch before initialization"
            )
            await self._answer(rpc.error_response(None, INVALID_REQUEST, "Invalid Request", why))
            return
        if not batch:
            await self._answer_error(None, INVALID_REQUEST, "an empty batch is not a valid request")
            return
        if len(batch) > self.options.max_pending_requests:
            await self._answer_error(
                None,
                INVALID_REQUEST,
                "Invalid Request",
                f"a batch of {len(batch)} messages; at most "
                f"{self.options.max_pending_requests} are taken at once",
            )
            return
        reply = BatchReply()
        size = envelope.size // len(batch) if envelope.size else 0
        for item in batch:
            await self._on_message(item, envelope, reply, size)
        responses = reply.settle(None)
        if responses is not None:
            await self._send_batch(responses)

    async def _on_message(
        self, message: Any, envelope: Envelope, batch: BatchReply | None, size: int
    ) -> None:
        if isinstance(message, rpc.Malformed):
            if message.request_id is not None:  # a request refused unread (memory budget)
                return await self._answer(unavailable(message.request_id, "busy", message.reason))
            title = "Parse error" if message.code == PARSE_ERROR else "Invalid Request"
            await self._answer_error(None, message.code, title, message.reason)
            return
        kind = rpc.classify(message)
        if kind == rpc.REQUEST:
            await self._on_request(message, envelope, batch, size)
        elif kind == rpc.RESPONSE or kind == rpc.ERROR_RESPONSE:
            self._on_response(message, kind)
        elif kind == rpc.NOTIFICATION:
            self._on_notification(message, envelope)
        elif isinstance(kind, rpc.Invalid):
            if kind.answer:
                response = rpc.error_response(
                    kind.request_id, kind.code, "Invalid Request", kind.reason
                )
                await self._answer(response, batch)
            else:
                logger.warning("dropped an invalid response: %s", kind.reason)

    async def _answer_error(
        self, request_id: RequestId | None, code: int, message: str, data: Any = None
    ) -> None:
        await self._answer(rpc.error_response(request_id, code, message, data))

    async def _answer(self, response: dict[str, Any], batch: BatchReply | None = None) -> None:
        """Send a response at once, or add it to the batch being read (sent with the rest)."""
        if batch is not None:
            batch.responses.append(response)
            return
        try:  # noqa: SIM105 - ``contextlib.suppress`` costs an object and two calls
            await self.send_raw(response, response["id"])
        except ConnectionClosedError:
            pass

    async def _send_batch(self, responses: list[dict[str, Any]]) -> None:
        with contextlib.suppress(ConnectionClosedError):
            await self.send_raw(responses)

    async def _on_request(
        self,
        message: dict[str, Any],
        envelope: Envelope,
        batch: BatchReply | None,
        size: int,
        here: bool = False,
    ) -> Borrowed | dict[str, Any] | None:
        """Check, admit and start a request (``here``: in the calling task, ``serve_here``)."""
        request_id: RequestId = message["id"]
        method: str = message["method"]
        params: jsonvalue.JsonValue = message.get("params")
        if params is not None and type(params) is not dict:
            await self._answer(
                rpc.error_response(
                    request_id, INVALID_PARAMS, "Invalid params", "params must be a JSON object"
                ),
                batch,
            )
            return None
        admission = self._admission
        if request_id in admission:
            why = "this request id is already in use"
            await self._answer(
                rpc.error_response(request_id, INVALID_REQUEST, "Invalid Request", why), batch
            )
            return None
        session: Session = self  # type: ignore[assignment]  # the one class built on this
        route = self.router.route_request(session, method, params)
        if isinstance(route, McpError):
            await self._answer(
                {"jsonrpc": "2.0", "id": request_id, "error": route.to_error()}, batch
            )
            return None
        if route.immediate is not None:
            await self._answer(
                {"jsonrpc": "2.0", "id": request_id, "result": route.immediate}, batch
            )
            return None
        if route.inline:
            response = await respond(session, route, request_id, method, params, envelope.context)
            await self._answer(response, batch)
            return None
        entry = Incoming(
            request_id, method, params, route, envelope.context, size or measure(params), batch
        )
        admitted = admission.admit(entry, envelope.prepaid)
        if admitted is None:
            refused = admission.refusal(entry.size)
            await self._answer(unavailable(request_id, "busy", refused), batch)
            return None
        if batch is not None:
            batch.open += 1
        if admitted:
            if self._eager and batch is None:
                # The eager start (``_begin``) is no coroutine of its own: a handler that
                # never waits is answered with one coroutine fewer per request.
                entry.here = here  # only here: queued, it would start in a task of its own
                started = self._begin(entry)
                if started is None:
                    return entry.reply  # ``serve_here``'s caller sends it (None: nothing to)
                handlers = self._handlers
                assert handlers is not None
                if here:
                    entry.here = False  # it waits: its answer goes out through the sink
                    return handlers.borrow(request_id, started)
                handlers.adopt_current(request_id)
                self._relay.start()
                await started
                return None
            handlers = self._handlers
            assert handlers is not None
            handlers.start(request_id, self._handle, entry)
        return None

    def serve_here(
        self, message: dict[str, Any], envelope: Envelope
    ) -> Coroutine[Any, Any, Borrowed | dict[str, Any] | None]:
        """Serve one request in the calling task, not the reading one: a fast path for a
        transport that received it in a task of its own (a pooled stateless-era POST,
        ``transports/http/_exchange.py``), which saves handing it to the reading task and
        waking both. The same checks, admission, handler and answer as a request read from the
        input; ``message`` must be a valid request (``envelope.request``).

        Awaited, None once it is answered (or refused, or queued for a handler slot); a
        ``Borrowed`` when its handler has to wait: the caller drives it to its end with
        ``run()``, in this same task. A dict is the answer of a handler that ended in its first
        step, handed back unsent: the caller sends it, as ``send_raw(answer, its id)`` would
        (a transport may write it to its peer itself when nothing of the request went out
        before it: nothing can have since, no other task having run). Only while the session
        reads on the native path (``SERVING``); a closed session raises
        ``anyio.ClosedResourceError``, as its input would. (A plain method returning the
        coroutine: one coroutine fewer per request.)"""
        if self._closed_error is not None or self._input_closed is not None:
            raise anyio.ClosedResourceError
        return self._on_request(message, envelope, None, envelope.size, True)

    def _begin(self, entry: Incoming) -> eager.Started | None:
        """Handle a request in the calling task (``_eager.py``): None once answered, as a
        handler that never waits is; else its ``Started`` rest, which the caller drives. The
        calling task is the reading one, which then becomes the handler's while a new one reads
        on, or a transport's that called ``serve_here``, which keeps the handler
        (``Borrowed``)."""
        request_id = entry.request_id
        try:
            started = eager.start(self._handle(entry))
        except Exception:
            logger.exception("the handler task of request %r failed", printable(request_id))
            started = None
        except BaseException:
            self._on_handler_done(request_id)
            raise
        if started is None:
            self._on_handler_done(request_id)
        return started

    async def _handle(self, entry: Incoming) -> None:
        session: Session = self  # type: ignore[assignment]  # the one class built on this
        response = await respond(
            session, entry.route, entry.request_id, entry.method, entry.params, entry.context
        )
        if entry.batch is not None or entry.answered:
            await self._reply(entry, response)
            return
        entry.answered = True  # ``_reply`` inlined: this is the hot path
        if self._closed_error is not None:
            return  # ``send_raw`` would raise it, and a closed session's answer is dropped
        if entry.here:  # ended in its first step, in a transport's task: handed back there
            entry.reply = response
            return
        # ``send_raw`` and ``put`` written out: two coroutines per answer (3.3k instructions of
        # an echo call, bench/README.md) for a sink that takes it at once, as nearly all do.
        outgoing = self.connection.outgoing
        envelope = Envelope(response, None, entry.request_id)
        try:
            outgoing.send_nowait(envelope)
        except anyio.WouldBlock:
            try:  # noqa: SIM105 - ``contextlib.suppress`` costs an object and two calls
                await outgoing.send(envelope)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    async def _reply(self, entry: Incoming, response: dict[str, Any]) -> None:
        """Answer an admitted request once (the session's closing may have answered it)."""
        if entry.answered:
            return
        entry.answered = True
        if entry.batch is None:
            with contextlib.suppress(ConnectionClosedError):
                await self.send_raw(response, entry.request_id)
            return
        responses = entry.batch.settle(response)
        if responses is not None:
            await self._send_batch(responses)

    def _unanswered(self, entry: Incoming) -> None:
        """An admitted request ends without a response (cancelled): its batch may be complete."""
        if entry.answered:
            return
        entry.answered = True
        if entry.batch is not None:
            responses = entry.batch.settle(None)
            if responses is not None and self._running:
                self._spawn(self._send_batch, responses)

    def _on_handler_done(self, request_id: Any) -> None:
        """A handler task ended, however: free its place and start what waited for it."""
        admission = self._admission
        entry = admission.finish(request_id)
        if entry is not None and not entry.answered:
            self._unanswered(entry)
        handlers = self._handlers
        if (
            admission.waiting
            and handlers is not None
            and self._input_closed is None
            and self._closed_error is None
        ):
            while (ready := admission.next_ready()) is not None:
                handlers.start(ready.request_id, self._handle, ready)
        if self._room is not None:
            self._room.set()

    def _on_notification(self, message: dict[str, Any], envelope: Envelope) -> None:
        method: str = message["method"]
        params: jsonvalue.JsonValue = message.get("params")
        if params is not None and type(params) is not dict:
            logger.warning("dropped notification %s: params is not an object", printable(method))
            return
        if method == NOTIFICATIONS_CANCELLED:
            self._on_cancelled(params)
        elif method == NOTIFICATIONS_PROGRESS:
            self._on_progress(params)
        session: Session = self  # type: ignore[assignment]  # the one class built on this
        work = self.router.route_notification(session, method, params, envelope)
        if work is None or not self._running:
            return
        if self._notifying >= max(1, self.options.max_pending_requests):
            # Waiting for room would stop the reading of pings and responses too: past the
            # bound the handler is not run; the log says so, rate-limited (the peer sets the pace).
            self._dropped_log = self._dropped_log or LogLimiter(logger)
            text = "dropped notification %s: %d notification handlers are already running"
            self._dropped_log.log(logging.WARNING, text, printable(method), self._notifying)
            return
        self._notifying += 1
        self._spawn(self._run_notification, method, work)

    async def _run_notification(self, method: str, work: Callable[[], Awaitable[None]]) -> None:
        try:
            await work()
        except Exception:
            logger.exception("notification handler of %s failed", printable(method))
        finally:
            self._notifying -= 1
            if self._room is not None:
                self._room.set()

    def _on_cancelled(self, params: dict[str, Any] | None) -> None:
        """The peer gave up a request: a queued one leaves the queue, a running one is cancelled;
        neither is answered (cancellation.md)."""
        request_id = params.get("requestId") if params else None
        entry = self._admission.get(request_id) if rpc.is_request_id(request_id) else None
        if entry is None:
            return
        if entry.queued:
            self._admission.withdraw(entry)
            self._unanswered(entry)
        elif self._handlers is None or not self._handlers.cancel(request_id):
            return
        else:
            self._admission.release(entry)
        logger.info(
            "peer cancelled request %r: %s",
            printable(request_id),
            printable((params or {}).get("reason")),
        )
