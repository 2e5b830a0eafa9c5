"""The public ``Server``: handlers registered per generated method, served on any transport."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Generic

import anyio
from mcpbind import generated
from mcpbind.generated.names import (
    NOTIFICATIONS_CANCELLED,
    NOTIFICATIONS_PROMPTS_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_UPDATED,
    NOTIFICATIONS_TOOLS_LIST_CHANGED,
    RESOURCES_SUBSCRIBE,
    RESOURCES_UNSUBSCRIBE,
)
from mcpbind.generated.support import (
    Direction,
    MCPModel,
    NotificationSpec,
)
from mcpbind.runtime.core.bindings import Bindings, dump
from mcpbind.runtime.core.capabilities import has_capability
from mcpbind.runtime.core.errors import McpError
from mcpbind.runtime.core.lifespan import (
    DEFAULT_SHUTDOWN_TIMEOUT,
    LifespanStartupError,
    SharedLifespan,
    check_shutdown_timeout,
)
from mcpbind.runtime.core.routing import OutgoingCall
from mcpbind.runtime.core.run import run
from mcpbind.runtime.core.session import Route, Session, SessionOptions
from mcpbind.runtime.core.transport import Connection, Envelope
from mcpbind.runtime.eras.both import BothEras
from mcpbind.runtime.eras.lifecycle import ASSUME_INITIALIZED, HandshakeServer, ServerLifecycle
from mcpbind.runtime.transports.stdio import stdio_server
from typing_extensions import TypeVar

from .endpoint import Endpoint

if TYPE_CHECKING:
    from mcpbind.runtime.eras.input_required import RequestStateKeeper
    from mcpbind.runtime.eras.subscriptions import Subscriptions

    from .broadcast import Delivery
    from .middleware import Middleware

__all__ = ["Server"]

#: Requests whose effect the server itself must know of, to honour them when notifying.
_TRACKED = frozenset({RESOURCES_SUBSCRIBE, RESOURCES_UNSUBSCRIBE})

#: What the server's lifespan yields (``lifespan_context``); Any for a server without one.
LifespanT = TypeVar("LifespanT", default=Any)


class Server(Endpoint, Generic[LifespanT]):
    """An MCP server: register handlers, then ``serve`` connections.

    It advertises the capabilities its handlers imply (a ``tools/call`` handler means
    ``tools``), plus ``capabilities`` given here (e.g. ``{"tools": {"listChanged": True}}``).
    ``revisions`` limits the revisions it speaks (default: all generated ones, both eras: a
    session that opens with ``initialize`` gets the handshake, stateless-era requests are served
    as they come).
    One ``Server`` may serve many sessions at once; each has its own ``Session``.

    Handlers ask the client (``await context.peer.create_message(...)``) the same way in both
    eras: in the stateless era the call becomes a multi round-trip request whose state
    ``request_state`` seals (give every worker the same ``RequestStateKeeper(key)``).
    Change notifications (``broadcast``, ``notify_tools_changed``...) reach both eras:
    handshake-era sessions directly, stateless-era clients on their ``subscriptions/listen``
    streams; ``send_timeout`` bounds how long one recipient may hold up a notification.
    ``middleware`` wraps every incoming request and notification, the first outermost
    (``add_middleware``).

    ``lifespan(server)`` returns an async context manager (an ``@asynccontextmanager``
    function) entered once before the first request is served and exited on shutdown: by
    ``serve_stdio``, by an HTTP app's ASGI lifespan (or its ``run()``), by
    ``memory_transport`` when nothing else has entered it, or by ``running()``. What it yields
    is ``lifespan_context``, also ``context.lifespan_context`` in handlers. Its exit part gets
    ``shutdown_timeout`` seconds (default 5; None: no bound), then it is cancelled, a warning
    names the server, and shutting down goes on.
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        revisions: Sequence[str] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        options: SessionOptions | None = None,
        lifecycle: ServerLifecycle | None = None,
        request_state: RequestStateKeeper | None = None,
        send_timeout: float = 5.0,
        middleware: Sequence[Middleware] = (),
        lifespan: Callable[[Server[LifespanT]], AbstractAsyncContextManager[LifespanT]]
        | None = None,
        shutdown_timeout: float | None = DEFAULT_SHUTDOWN_TIMEOUT,
    ) -> None:
        check_shutdown_timeout(shutdown_timeout)  # bad input fails here, lifespan or not
        super().__init__(Direction.SERVER_TO_CLIENT, capabilities)
        for each in middleware:
            self.add_middleware(each)
        #: The lifespan, shared by whatever serves (None: no lifespan, nothing to enter).
        self.lifespan: SharedLifespan[LifespanT] | None = (
            SharedLifespan(lambda: lifespan(self), f"server {name!r}", shutdown_timeout)
            if lifespan is not None
            else None
        )
        self.info: dict[str, Any] = {"name": name, "version": version}
        if title is not None:
            self.info["title"] = title
        self.instructions = instructions
        chosen = tuple(revisions) if revisions else generated.REVISIONS
        handshake_era = [r for r in chosen if generated.ERAS.get(r) != "stateless"]
        stateless_era = [r for r in chosen if generated.ERAS.get(r) == "stateless"]
        handshake = HandshakeServer(handshake_era) if handshake_era else None
        if lifecycle is None:
            if stateless_era and handshake is not None:
                # The stateless era's code is loaded by its first message (``BothEras``).
                lifecycle = BothEras(stateless_era, legacy=handshake)
            elif stateless_era:
                from mcpbind.runtime.eras.stateless import StatelessServer

                lifecycle = StatelessServer(stateless_era)
            else:
                lifecycle = handshake
        assert lifecycle is not None
        self._lifecycle: ServerLifecycle = lifecycle
        self.revisions: tuple[str, ...] = (
            *(handshake.supported if handshake else ()),
            *stateless_era,
        )
        self.options = options or SessionOptions()
        self.sessions: set[Session] = set()
        self._request_state = request_state
        self._subscriptions: Subscriptions | None = None
        self.send_timeout = send_timeout
        self._delivery: Delivery | None = None
        #: Hands every notification fanned out here to the other workers too (set by a shared
        #: HTTP transport, ``http.cluster``); they fan it out with ``fan_out_local``.
        self.relay: Callable[[str, dict[str, Any] | None], Awaitable[None]] | None = None

    @property
    def lifecycle(self) -> ServerLifecycle:
        """How sessions start and what each era adds: a ``StatelessServer`` (handing handshake
        sessions to its ``legacy`` ``HandshakeServer``) when both eras are served."""
        if isinstance(self._lifecycle, BothEras):
            return self._lifecycle.stateless
        return self._lifecycle

    @property
    def request_state(self) -> RequestStateKeeper:
        """The keeper of the stateless era's sealed request state: made when first used (by a
        stateless-era request that asks the client), not by every server."""
        if self._request_state is None:
            from mcpbind.runtime.eras.input_required import RequestStateKeeper

            self._request_state = RequestStateKeeper()
        return self._request_state

    @property
    def subscriptions(self) -> Subscriptions:
        """Who hears of which change (resource subscriptions, ``subscriptions/listen``
        streams): made by the first subscription or notification, not by every server."""
        if self._subscriptions is None:
            from mcpbind.runtime.eras.subscriptions import Subscriptions

            self._subscriptions = Subscriptions()
        return self._subscriptions

    @property
    def delivery(self) -> Delivery:
        """What became of the notifications sent so far (``broadcast`` and the ``notify_*``);
        ``endpoints.broadcast`` is imported by the first one, not by every server."""
        if self._delivery is None:
            from .broadcast import Delivery

            self._delivery = Delivery()
        return self._delivery

    # -- Router ---------------------------------------------------------------------------

    def route_request(
        self, session: Session, method: str, params: dict[str, Any] | None
    ) -> Route | McpError:
        decided = self._lifecycle.gate(self, session, method, params)
        if decided is not None:
            if self.tasks is not None and session.peer.era == "stateless":
                return self.tasks.route_stateless(session, method, params, decided)
            return decided
        route = self.find_route(session.bindings, method)
        if isinstance(route, Route):
            if self.tasks is not None:
                route = self.tasks.route(session, method, params, route)
            else:
                route = self.untasked(session.bindings, method, params, route)
        if method in _TRACKED and method in session.bindings.incoming_requests:
            offered = has_capability(self.capabilities_for(session.bindings), "resources.subscribe")
            return self.subscriptions.track(session, method, route, params, offered)
        return route

    def route_notification(
        self, session: Session, method: str, params: dict[str, Any] | None, envelope: Envelope
    ) -> Callable[[], Awaitable[None]] | None:
        self._lifecycle.on_notification(self, session, method, params)
        if method == NOTIFICATIONS_CANCELLED and params and self._subscriptions is not None:
            self._subscriptions.cancelled(session, params.get("requestId"))
        return self.find_notification(session, method, params, envelope)

    def prepare_call(self, call: OutgoingCall) -> None:
        self._lifecycle.prepare_call(self, call)

    async def finish_call(self, call: OutgoingCall) -> Any:
        return call.raw  # a server's requests are answered in one round

    # -- notifying ------------------------------------------------------------------------

    async def broadcast(
        self, spec: NotificationSpec[Any], params: MCPModel | dict[str, Any] | None = None
    ) -> int:
        """Send a notification to everyone who should get it, in both eras; returns how many did.

        Handshake-era sessions get it if their revision has it (``resources/updated`` only if
        they subscribed to the URI); stateless-era clients get list changes and resource
        updates on the ``subscriptions/listen`` streams whose filter asked for them. Sent to
        all at once: a recipient still full after ``send_timeout`` seconds is skipped for this
        message (counted in ``delivery.skipped``, and logged), so one peer that stopped reading
        never holds up the others, nor the caller. Closed sessions are skipped.
        """
        return await self._fan_out(spec.method, dump(params))

    async def notify_tools_changed(self) -> int:
        """``notifications/tools/list_changed`` to every client that wants it (see ``broadcast``)."""
        return await self._fan_out(NOTIFICATIONS_TOOLS_LIST_CHANGED, None)

    async def notify_prompts_changed(self) -> int:
        """``notifications/prompts/list_changed`` to every client that wants it."""
        return await self._fan_out(NOTIFICATIONS_PROMPTS_LIST_CHANGED, None)

    async def notify_resources_changed(self) -> int:
        """``notifications/resources/list_changed`` to every client that wants it."""
        return await self._fan_out(NOTIFICATIONS_RESOURCES_LIST_CHANGED, None)

    async def notify_resource_updated(self, uri: str) -> int:
        """``notifications/resources/updated`` for ``uri`` to every client subscribed to it."""
        return await self._fan_out(NOTIFICATIONS_RESOURCES_UPDATED, {"uri": uri})

    async def _fan_out(self, method: str, params: dict[str, Any] | None) -> int:
        if self.relay is not None:
            await self.relay(method, params)
        return await self.fan_out_local(method, params)

    async def fan_out_local(self, method: str, params: dict[str, Any] | None) -> int:
        """Send a notification to this process's recipients only; returns how many got it."""
        targets = self.subscriptions.targets(list(self.sessions), method, params)
        if not targets:
            return 0
        from .broadcast import deliver  # with the first notification sent, not every server

        outcome = await deliver(targets, self.send_timeout, method)
        self.delivery.add(outcome)
        return outcome.sent

    async def close_subscriptions(self) -> None:
        """End every ``subscriptions/listen`` stream gracefully (a ``complete`` response each),
        and refuse to keep new ones open: for shutting down."""
        await self.subscriptions.end()

    # -- lifespan -------------------------------------------------------------------------

    @property
    def lifespan_context(self) -> LifespanT:
        """What the lifespan yielded, while it runs (``LifespanNotRunning`` otherwise); None
        for a server without a lifespan."""
        if self.lifespan is None:
            return None  # type: ignore[return-value]  # no lifespan: LifespanT is Any
        return self.lifespan.value

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[LifespanT, None]:
        """The lifespan entered while the block runs, or shared with whatever entered it first
        (it is exited after the last one leaves); yields its value. ``LifespanStartupError``
        if it raises on entering. Every way of serving enters it: call this yourself around
        ``serve()`` of your own transports."""
        if self.lifespan is None:
            yield None  # type: ignore[misc]  # no lifespan: LifespanT is Any
            return
        async with self.lifespan.shared() as value:
            yield value

    # -- serving --------------------------------------------------------------------------

    def new_session(self, connection: Connection) -> Session:
        """A session of this server on ``connection``, not yet running; already initialised
        if the transport asks so (``ASSUME_INITIALIZED`` in ``connection.extra``)."""
        session = Session(
            connection,
            Bindings.load(self.revisions[-1], Direction.SERVER_TO_CLIENT),
            self,
            self.options,
        )
        self._new_session(session)
        revision = connection.extra.get(ASSUME_INITIALIZED)
        if revision is not None:
            self.assume_initialized(session, revision)
        return session

    def _running_sessions(self) -> list[Session]:
        return list(self.sessions)

    def assume_initialized(self, session: Session, revision: str) -> None:
        """Start ``session`` as if the client had initialised it at ``revision`` with empty
        capabilities: for transports whose sessions never see ``initialize``."""
        self._lifecycle.assume_initialized(session, revision)

    async def serve(self, connection: Connection) -> None:
        """Serve one connection until it ends."""
        session = self.new_session(connection)
        self.sessions.add(session)
        try:
            await session.run()
        finally:
            self.sessions.discard(session)
            if self._subscriptions is not None:
                self._subscriptions.forget(session)

    async def run(self, transport: AbstractAsyncContextManager[Connection]) -> None:
        """Open ``transport`` and serve its connection until it ends."""
        async with transport as connection:
            await self.serve(connection)

    @asynccontextmanager
    async def memory_transport(self) -> AsyncGenerator[Connection, None]:
        """A transport to this server in the same process: ``Client(server.memory_transport())``.

        The server side runs in a task of the caller's; leaving the context ends it. The
        lifespan is entered first unless something already runs it (``LifespanStartupError``
        here if it fails).
        """
        # Here, not at the top: a server on stdio or HTTP never loads the memory transport.
        from mcpbind.runtime.transports.memory import memory_pair

        async with (
            self.running(),
            memory_pair() as (near, far),
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(self.serve, far)
            yield near
            tg.cancel_scope.cancel()

    async def serve_stdio(self, **stdio_options: Any) -> None:
        """Serve on this process's stdin/stdout until stdin closes or the parent dies.

        SIGTERM (how a client stops a server that outlives its stdin) or SIGINT ends the listen
        streams gracefully, each with its ``complete`` response, before the process stops serving.
        The lifespan is entered before the first message is read, and exited after the last.
        """
        with contextlib.ExitStack() as stack:
            # The receiver before the lifespan: a signal while it starts is kept, and handled
            # once serving begins, so the lifespan's exit part still runs (asyncio's own SIGINT
            # handling would cancel the lifespan between its "enter" and its try).
            # SIGINT only where it is not ignored (a background job's): as asyncio does.
            wanted = [signal.SIGTERM]
            if signal.getsignal(signal.SIGINT) != signal.SIG_IGN:
                wanted.append(signal.SIGINT)
            try:
                signals = stack.enter_context(anyio.open_signal_receiver(*wanted))
            except (NotImplementedError, RuntimeError, ValueError):
                signals = None  # not the main thread, or no signals here: the default stays
            async with self.running(), anyio.create_task_group() as tg:
                if signals is not None:
                    tg.start_soon(self._end_on_signal, signals, tg.cancel_scope)
                await self.run(stdio_server(**stdio_options))
                tg.cancel_scope.cancel()

    async def _end_on_signal(
        self, signals: AsyncIterator[signal.Signals], scope: anyio.CancelScope
    ) -> None:
        async for _ in signals:
            with anyio.move_on_after(self.send_timeout):
                await self.close_subscriptions()
            scope.cancel()
            return

    def run_stdio(self, **stdio_options: Any) -> None:
        """Blocking ``serve_stdio``, for ``if __name__ == "__main__": server.run_stdio()``.

        A lifespan that fails to start ends the process with its one-line error on stderr
        and exit status 1."""
        try:
            run(lambda: self.serve_stdio(**stdio_options))
        except LifespanStartupError as exc:
            raise SystemExit(f"mcpbind: {exc}") from None
