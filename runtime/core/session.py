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

import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import anyio
from anyio.abc import TaskGroup
from mcpbind.generated.names import PING
from mcpbind.generated.support import MCPModel, MethodSpec, RequestOptions
from pydantic import ValidationError

from . import _eager as eager
from ._background import Background, Host
from ._drain import drain
from ._flag import Flag
from ._receiving import Receiving
from .admission import Admission
from .bindings import Bindings, dump, validator
from .budget import process_budget
from .context import RequestContext
from .errors import ConnectionClosedError, InvalidResultError, McpError, RequestTimeoutError
from .handler_tasks import HandlerTasks
from .logsafe import LogLimiter, printable
from .routing import OutgoingCall, PeerState, Route, Router, SessionOptions
from .transport import SERVING, Connection

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

#: One message for one session, and the incoming request it belongs to (if any).
Target = tuple["Session", dict[str, Any], "int | str | None"]


class Session(Receiving):
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
        if self._eager:
            self.connection.extra[SERVING] = self
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
            self.connection.extra.pop(SERVING, None)
            reason = self._failure or self.connection.close_reason() or "the connection was closed"
            self._shut(reason)
            await self._handlers.wait_all()

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
