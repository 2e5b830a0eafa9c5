"""The session: one JSON-RPC peer connection, method-agnostic.

It correlates responses, enforces timeouts and carries cancellation and progress both ways (our
own requests: ``_outgoing.py``, the base class); it runs each incoming request in its own task
under the bounds of ``_admission.py`` (it never stops reading for them: excess requests wait in
a bounded queue or are refused at once), answers batches with one array, and turns failures
into the JSON-RPC error codes. Which methods exist, how params are validated and who handles
them is asked of a ``Router`` (the ``Client`` or ``Server`` together with its lifecycle), so
the same session serves both sides and both eras.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final, TypeVar

import anyio
from anyio.abc import TaskGroup
from anyio.lowlevel import checkpoint
from mcpbind.generated.names import NOTIFICATIONS_CANCELLED, NOTIFICATIONS_PROGRESS, PING
from mcpbind.generated.support import MCPModel, MethodSpec, RequestOptions
from pydantic import ValidationError

from . import _eager as eager, jsonrpc as rpc, jsonvalue
from ._background import Background, Host
from ._drain import drain
from ._flag import Flag
from ._respond import respond
from .admission import BATCH_REVISIONS, Admission, BatchReply, Incoming, measure, unavailable
from .bindings import Bindings, dump, validator
from .budget import process_budget
from .context import RequestContext
from .errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ConnectionClosedError,
    InvalidResultError,
    McpError,
    RequestTimeoutError,
)
from .handler_tasks import HandlerTasks
from .logsafe import LogLimiter, printable
from .outgoing import Outgoing
from .routing import OutgoingCall, PeerState, Route, Router, SessionOptions
from .transport import Connection, Envelope, take

__all__ = [
    "PeerState",
    "RequestContext",
    "Route",
    "Router",
    "Session",
    "SessionOptions",
    "Target",
]

logger = logging.getLogger("mcpbind.runtime")

ResultT = TypeVar("ResultT")
RequestId = int | str

#: Messages handled back to back before the reading task lets others run.
FAIRNESS: Final = 64


#: One message for one session, and the incoming request it belongs to (if any).
Target = tuple["Session", dict[str, Any], "int | str | None"]


class Session(Outgoing):
    """A JSON-RPC session over one ``Connection``; implements the generated ``RequestSender``.

    ``run()`` reads until the connection ends or ``close()`` is called; requests may be sent
    while it runs. ``bindings`` are the revision in use (a lifecycle may switch them once
    negotiated); the router decides everything method-specific.
    """

    def __init__(
        self,
        connection: Connection,
        bindings: Bindings,
        router: Router,
        options: SessionOptions | None = None,
    ) -> None:
        super().__init__(connection, bindings, options)
        self.router = router
        self.peer = PeerState()
        self._handlers: HandlerTasks | None = None
        options = self.options
        self._admission = Admission(
            options.max_concurrent_handlers,
            options.spare_handlers,
            options.max_pending_requests,
            options.max_pending_bytes,
            options.memory_budget or process_budget(),
        )
        # Set when a handler ends, for whoever waits for one to (``_wait_room``).
        self._room: anyio.Event | None = None
        self._tg: TaskGroup | None = None
        self._notifying = 0
        self._dropped_log: LogLimiter | None = None
        self._failure: str | None = None
        # Events made only if waited for: a session per stateless HTTP request waits for none.
        self._started = Flag()
        self._finished = Flag()
        self._input_ended = Flag()
        # On asyncio: the task serving, and the jobs that outlive a request (``_background.py``).
        self._host: Host | None = None
        self._live = False
        self._background: Background | None = None
        # On asyncio, handlers start in the reading task (``_eager.py``).
        self._eager = False
        self._relay = eager.Relay(self._read_messages)

    # -- running --------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once the connection has ended."""
        return self._closed_error is not None

    @property
    def input_ended(self) -> anyio.Event:
        """Set when the peer's input ends, before running handlers get their drain time."""
        return self._input_ended.event

    @property
    def handling(self) -> int:
        """Incoming requests being handled or waiting for a handler slot."""
        return len(self._admission)

    async def run(self) -> None:
        """Serve the connection until it ends, then fail what is pending and stop all handlers.

        At end of input, requests still queued are answered with an error at once, handlers
        already running get ``drain_timeout`` seconds to answer (a stdio client may write its
        requests and close stdin), and those still running then are answered with an error and
        cancelled; ``close()`` stops them at once, unanswered. On asyncio there is no task
        group unless a background job needs one (``_background.py``).
        """
        try:
            if self.loop_path.native:  # the one choice of the fast path, for this session
                host = self._host = Host(lambda exc: self._interrupt())
                self._background = host.background
                self._eager = True
                await host.serve(self._serve(None))
            else:
                async with anyio.create_task_group() as tg:
                    self._tg = tg
                    await self._serve(tg)
                    tg.cancel_scope.cancel()
        finally:
            self._finished.set()

    async def _serve(self, tg: TaskGroup | None) -> None:
        self._handlers = HandlerTasks(tg, self._on_handler_done, self.loop_path)
        self._live = True
        if self._watching:  # a deadline came before the session ran
            self._spawn(self._watch_deadlines)
        self._started.set()
        if self.options.keepalive_interval:
            self._spawn(self._keepalive, self.options.keepalive_interval)
        try:
            await self._read_loop()
            self._input_ended.set()
            reason = self._failure or self.connection.close_reason() or "the connection was closed"
            self._input_closed = ConnectionClosedError(reason)
            self._fail_pending(reason)
            assert self._handlers is not None
            await drain(
                self._admission,
                self._handlers,
                self._reply,
                self._wait_room,
                self.options.drain_timeout,
            )
        finally:
            self._live = False  # from here on, ``close()`` interrupts nothing
            reason = self._failure or self.connection.close_reason() or "the connection was closed"
            self._shut(reason)
            await self._handlers.wait_all()

    def _spawn(self, job: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run ``job(*args)`` in the session's task group, or with its background jobs."""
        if self._tg is not None:
            self._tg.start_soon(job, *args)
        elif self._background is not None:
            self._background.start_soon(job, *args)

    @property
    def _running(self) -> bool:
        return self._tg is not None or self._background is not None

    def _interrupt(self) -> None:
        """Cancel ``run()`` where it waits, as cancelling a task group's scope would."""
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
            return
        if self._host is not None and self._live:
            self._host.interrupt()

    def _start_watching(self) -> None:
        if self._running:
            self._spawn(self._watch_deadlines)

    def start_soon(self, job: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run ``job(*args)`` in the session's task group: work that outlives the request that
        started it (a task's handler), stopped when the session ends."""
        if not self._running or self.closed:
            raise ConnectionClosedError("the session is not running")
        self._spawn(job, *args)

    async def wait_started(self) -> None:
        """Wait until ``run()`` accepts requests (for owners that start it in a task)."""
        await self._started.wait()

    def close(self, reason: str = "the session was closed") -> None:
        """End the session from this side: ``run()`` returns and pending requests fail."""
        if self._failure is None:
            self._failure = reason
        self._shut(reason)
        self._interrupt()

    async def wait_closed(self) -> None:
        """Wait until ``run()`` has returned."""
        await self._finished.wait()

    def _shut(self, reason: str) -> None:
        if self._closed_error is None:
            self._closed_error = ConnectionClosedError(reason)
        self._fail_pending(reason)
        if self._handlers is not None:
            self._handlers.cancel_all()

    async def _wait_room(self) -> None:
        """Wait until a handler (of a request or a notification) ends."""
        room = self._room = anyio.Event()
        try:
            await room.wait()
        finally:
            self._room = None

    async def _keepalive(self, interval: float) -> None:
        spec = self.bindings.methods.get(PING)
        if spec is None:
            return
        while True:
            await anyio.sleep(interval)
            try:
                await self.send_request(spec, None, {"timeout": self.options.keepalive_timeout})
            except ConnectionClosedError:
                return
            except (RequestTimeoutError, McpError) as exc:
                logger.warning("keep-alive ping failed: %s", printable(str(exc)))
                self.close(
                    f"keep-alive ping unanswered within {self.options.keepalive_timeout:g} s"
                )
                return

    # -- sending (the rest is in ``Outgoing``) --------------------------------------------

    async def send_request(
        self,
        spec: MethodSpec[Any, ResultT],
        params: MCPModel | dict[str, Any] | None,
        options: RequestOptions | None = None,
        related_id: RequestId | None = None,
    ) -> ResultT:
        """Send a request and wait for its result, validated with the spec's result class.

        Raises ``McpError`` if the peer answered an error, ``RequestTimeoutError`` on timeout
        (after telling the peer), ``ConnectionClosedError`` if the connection ends first, and
        whatever the router raises for a request the peer cannot take (before sending it).
        """
        if self._closed_error is not None:
            raise self._closed_error
        call = OutgoingCall(self, spec, dump(params), options)
        router = self.router
        router.prepare_call(call)
        body = call.body
        call.raw = await self.request_raw(spec, body, options, related_id)
        raw = await router.finish_call(call)
        result_type = spec.result_type
        if spec.task_result_type is not None and body is not None and "task" in body:
            # A task-augmented request is answered with the task it created (2025-11-25).
            result_type = spec.task_result_type
        try:
            return validator(result_type)(raw)  # type: ignore[no-any-return]
        except ValidationError as exc:
            raise InvalidResultError(
                f"the result of {spec.method!r} does not match revision {self.bindings.revision}: {exc}"
            ) from exc

    # -- receiving ------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        """Read until the input ends. On asyncio the reading runs in a task of its own, which a
        handler started in it may keep (``_start_handler``); a new task then reads on."""
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
        self, message: dict[str, Any], envelope: Envelope, batch: BatchReply | None, size: int
    ) -> None:
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
            return
        admission = self._admission
        if request_id in admission:
            why = "this request id is already in use"
            await self._answer(
                rpc.error_response(request_id, INVALID_REQUEST, "Invalid Request", why), batch
            )
            return
        route = self.router.route_request(self, method, params)
        if isinstance(route, McpError):
            await self._answer(
                {"jsonrpc": "2.0", "id": request_id, "error": route.to_error()}, batch
            )
            return
        if route.immediate is not None:
            await self._answer(
                {"jsonrpc": "2.0", "id": request_id, "result": route.immediate}, batch
            )
            return
        if route.inline:
            response = await respond(self, route, request_id, method, params, envelope.context)
            await self._answer(response, batch)
            return
        entry = Incoming(
            request_id, method, params, route, envelope.context, size or measure(params), batch
        )
        admitted = admission.admit(entry, envelope.prepaid)
        if admitted is None:
            refused = admission.refusal(entry.size)
            await self._answer(unavailable(request_id, "busy", refused), batch)
            return
        if batch is not None:
            batch.open += 1
        if admitted:
            if self._eager and batch is None:
                await self._start_handler(entry)
                return
            handlers = self._handlers
            assert handlers is not None
            handlers.start(request_id, self._handle, entry)

    async def _start_handler(self, entry: Incoming) -> None:
        """Handle a request in the reading task (``_eager.py``): answered at once if its handler
        never waits; else this task stays the handler's, and a new one reads on."""
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
            return
        handlers = self._handlers
        assert handlers is not None
        handlers.adopt_current(request_id)
        self._relay.start()
        await started

    async def _handle(self, entry: Incoming) -> None:
        response = await respond(
            self, entry.route, entry.request_id, entry.method, entry.params, entry.context
        )
        if entry.batch is not None or entry.answered:
            await self._reply(entry, response)
            return
        entry.answered = True  # ``_reply`` inlined: this is the hot path
        try:  # noqa: SIM105 - ``contextlib.suppress`` costs an object and two calls
            await self.send_raw(response, entry.request_id)
        except ConnectionClosedError:
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
        work = self.router.route_notification(self, method, params, envelope)
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
