"""What ``Client`` and ``Server`` share: typed handler registration, capabilities, routing.

Handlers are registered per generated ``MethodSpec``; mypy checks a handler's params and result
types against the spec's ``MethodSpec[P, R]`` generics. A handler registered with one revision's
spec also serves sessions that negotiated another revision (it gets the classes it was typed
with); registering the same method for several revisions picks the exact match.
"""

from __future__ import annotations

import typing
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from mcpbind.generated.support import Direction, MethodSpec, NotificationSpec
from mcpbind.runtime.core.bindings import Bindings, validator
from mcpbind.runtime.core.capabilities import capability_tree, has_capability, merge
from mcpbind.runtime.core.errors import METHOD_NOT_FOUND, McpError
from mcpbind.runtime.core.routing import Handler, Router
from mcpbind.runtime.core.session import RequestContext, Route, Session
from mcpbind.runtime.core.transport import Envelope
from mcpbind.runtime.core.watched import WatchedDict, plain

if typing.TYPE_CHECKING:
    from mcpbind.runtime.tasks import TaskSupport

    from .middleware import Middleware, OutgoingMiddleware

__all__ = ["Endpoint", "ServedExtension"]

P = TypeVar("P")
R = TypeVar("R")

RequestHandler = Callable[[P, RequestContext], Awaitable[R]]
NotificationHandler = Callable[[P, Session], Awaitable[None]]


class ServedExtension(Protocol):
    """A protocol extension whose request methods no ``schema.json`` holds (``add_extension``):
    what it declares under ``capabilities.extensions`` and the handlers of its methods, per
    revision. Its handlers get the raw params (a dict, or None) and return JSON data."""

    @property
    def identifier(self) -> str:
        """Its key in ``capabilities.extensions`` (``io.modelcontextprotocol/skills``)."""
        ...

    def settings(self, bindings: Bindings) -> dict[str, Any] | None:
        """Its settings object under ``bindings``' revision; None: not offered there."""
        ...

    def handler(self, bindings: Bindings, method: str) -> Handler | None:
        """The handler of ``method`` under ``bindings``' revision; None: not one of its own."""
        ...


class Endpoint:
    """Handler registry and routing for one side (``local`` is the direction this side sends)."""

    local: Direction
    #: The outgoing middleware, outermost first (``add_outgoing_middleware``): the class's
    #: ``None`` until the first is added, so an endpoint without any has not even an attribute.
    _outgoing: list[OutgoingMiddleware] | None = None

    def __init__(self, local: Direction, capabilities: Mapping[str, Any] | None = None) -> None:
        self.local = local
        self.remote = (
            Direction.SERVER_TO_CLIENT
            if local is Direction.CLIENT_TO_SERVER
            else Direction.CLIENT_TO_SERVER
        )
        #: Bumped whenever the advertised capabilities may have changed (a handler registered,
        #: tasks enabled, ``extra_capabilities`` written): a cache key for what derives from them.
        self.capabilities_version = 0
        self._capabilities: dict[tuple[str, Direction], dict[str, Any]] = {}
        self._extra = WatchedDict(capabilities or {}, self._capabilities_changed)
        self._handlers: dict[
            str, dict[str, tuple[MethodSpec[Any, Any], RequestHandler[Any, Any]]]
        ] = {}
        self._notification_handlers: dict[
            str, list[tuple[NotificationSpec[Any], NotificationHandler[Any]]]
        ] = {}
        #: Task support (``enable_tasks``); None: task-augmented requests are served normally.
        self.tasks: TaskSupport | None = None
        #: The middleware every incoming message passes through, outermost first.
        self.middleware: list[Middleware] = []
        #: Protocol extensions served beside the schema's methods (``add_extension``).
        self.extensions: list[ServedExtension] = []

    def enable_tasks(self, support: TaskSupport | None = None) -> TaskSupport:
        """Serve task-augmented requests (2025-11-25 tasks): a server's ``tools/call`` for tools
        whose ``taskSupport`` allows it, a client's sampling and elicitation (register those
        handlers first); adds the ``tasks/*`` handlers and the ``tasks`` capability."""
        from mcpbind.runtime.tasks import CLIENT_METHODS, SERVER_METHODS, TaskSupport

        support = support if support is not None else TaskSupport()
        if self.local is Direction.SERVER_TO_CLIENT:
            receives = SERVER_METHODS
        else:
            receives = {k: v for k, v in CLIENT_METHODS.items() if k in self._handlers}
        support.attach(self, receives)
        self.tasks = support
        self._capabilities_changed()
        return support

    def add_extension(self, extension: ServedExtension) -> None:
        """Serve ``extension``: its methods are routed here (after the revision's own, which
        win) and its settings are declared under ``capabilities.extensions``."""
        self.extensions.append(extension)
        self._capabilities_changed()

    @property
    def extra_capabilities(self) -> dict[str, Any]:
        """Capabilities given explicitly, merged over the derived ones (e.g. ``listChanged``
        flags). Writable in place, at any depth, or replaced whole: either is noticed."""
        return self._extra

    @extra_capabilities.setter
    def extra_capabilities(self, value: dict[str, Any]) -> None:
        self._extra = WatchedDict(value, self._capabilities_changed)
        self._capabilities_changed()

    def _capabilities_changed(self) -> None:
        self._capabilities.clear()
        self.capabilities_version += 1

    # -- middleware -----------------------------------------------------------------------

    def add_middleware(self, middleware: Middleware, *, outermost: bool = False) -> None:
        """Run every incoming request and notification through ``middleware`` (see
        ``mcpbind.runtime.IncomingCall``): inside those added before it, or outside all of them
        with ``outermost=True``. Sessions already running are served through it too."""
        if not callable(middleware):
            raise TypeError(f"a middleware is an async callable, not {type(middleware).__name__}")
        if not self.middleware:
            # Here, not at the top: an endpoint without middleware never loads its module.
            from .middleware import install

            # Every endpoint class (``Client``, ``Server``) is the router of its sessions.
            install(typing.cast(Router, self), self.middleware)
        if outermost:
            self.middleware.insert(0, middleware)
        else:
            self.middleware.append(middleware)

    def add_outgoing_middleware(
        self, middleware: OutgoingMiddleware, *, outermost: bool = False
    ) -> None:
        """Run every request this side sends through ``middleware`` (see
        ``mcpbind.runtime.OutgoingRequest``): inside those added before it, or outside all of
        them with ``outermost=True``. Sessions already running send through it too."""
        if not callable(middleware):
            raise TypeError(f"a middleware is an async callable, not {type(middleware).__name__}")
        chain = self._outgoing
        if chain is None:
            chain = self._outgoing = []
            for session in self._running_sessions():
                self._new_session(session)  # on the chain's seam, as a new one is
        if outermost:
            chain.insert(0, middleware)
        else:
            chain.append(middleware)

    @property
    def outgoing_middleware(self) -> Sequence[OutgoingMiddleware]:
        """The middleware every request this side sends passes through, outermost first."""
        return self._outgoing or ()

    def _running_sessions(self) -> Iterable[Session]:
        """The sessions of this endpoint already running (``Client``, ``Server`` say)."""
        return ()

    def _new_session(self, session: Session) -> Session:
        """``session``, just made by this endpoint, on the outgoing middleware's seam if there
        is any (the one check a session costs; none per request)."""
        chain = self._outgoing
        if chain is not None:
            # Here, not at the top: an endpoint without middleware never loads its module.
            from .middleware import install_outgoing

            install_outgoing(session, chain)
        return session

    # -- registration ---------------------------------------------------------------------

    def add_handler(self, spec: MethodSpec[P, R], handler: RequestHandler[P, R]) -> None:
        """Register ``handler`` for requests of ``spec`` sent by the peer."""
        if self.remote not in spec.directions:
            raise ValueError(
                f"{spec.method} is not sent to this side, so it cannot have a handler here"
            )
        self._handlers.setdefault(spec.method, {})[spec.revision] = (spec, handler)
        self._capabilities_changed()

    def handler(
        self, spec: MethodSpec[P, R]
    ) -> Callable[[RequestHandler[P, R]], RequestHandler[P, R]]:
        """Decorator form of ``add_handler``: ``@server.handler(methods.TOOLS_CALL)``."""

        def register(fn: RequestHandler[P, R]) -> RequestHandler[P, R]:
            self.add_handler(spec, fn)
            return fn

        return register

    def add_notification_handler(
        self, spec: NotificationSpec[P], handler: NotificationHandler[P]
    ) -> None:
        """Register ``handler`` for a notification from the peer; several may share a method."""
        if self.remote not in spec.directions:
            raise ValueError(f"{spec.method} is not sent to this side")
        self._notification_handlers.setdefault(spec.method, []).append((spec, handler))

    def notification_handler(
        self, spec: NotificationSpec[P]
    ) -> Callable[[NotificationHandler[P]], NotificationHandler[P]]:
        """Decorator form of ``add_notification_handler``."""

        def register(fn: NotificationHandler[P]) -> NotificationHandler[P]:
            self.add_notification_handler(spec, fn)
            return fn

        return register

    def register(self, handlers: object, revision: str) -> list[str]:
        """Register every method of ``handlers`` named like a handler of ``revision``.

        For objects implementing the generated ``ServerHandlers``/``ClientHandlers`` protocol.
        Returns the methods registered.
        """
        bindings = Bindings.load(revision, self.local)
        done: list[str] = []
        for name, spec in bindings.incoming_requests.items():
            fn = getattr(handlers, spec.handler_name, None)
            if fn is not None:
                self.add_handler(spec, fn)
                done.append(name)
        return done

    # -- capabilities ---------------------------------------------------------------------

    def capabilities_for(self, bindings: Bindings) -> dict[str, Any]:
        """The capabilities this side advertises under a revision: those its handlers need,
        merged with the ones given explicitly (e.g. ``listChanged`` flags).

        Kept per revision until ``capabilities_version`` moves (a stateless-era client sends
        them on every request): the dict returned is shared, so copy it before changing it.
        """
        key = (bindings.revision, bindings.local)
        found = self._capabilities.get(key)
        if found is None:
            found = self._capabilities[key] = self._derive_capabilities(bindings)
        return found

    def _derive_capabilities(self, bindings: Bindings) -> dict[str, Any]:
        paths = [
            spec.capabilities[self.remote]
            for method, spec in bindings.incoming_requests.items()
            if method in self._handlers and self.remote in spec.capabilities
        ]
        side = (
            "ServerCapabilities"
            if self.local is Direction.SERVER_TO_CLIENT
            else "ClientCapabilities"
        )
        derived = capability_tree(paths, bindings.module.methods.CAPABILITIES.get(side))
        if self.tasks is not None:
            derived = merge(derived, self.tasks.capabilities_for(bindings))
        for extension in self.extensions:
            settings = extension.settings(bindings)
            if settings is not None:
                derived = merge(derived, {"extensions": {extension.identifier: settings}})
        return merge(derived, plain(self._extra))

    # -- routing (the Router protocol's common part) --------------------------------------

    def find_route(self, bindings: Bindings, method: str) -> Route | McpError:
        """The handler for ``method`` under a revision, or -32601.

        Takes the bindings rather than the session because a stateless-era lifecycle picks
        them per request, from the request's ``_meta``.
        """
        if method not in bindings.incoming_requests:
            for extension in self.extensions:
                handler = extension.handler(bindings, method)
                if handler is not None:
                    return Route(None, handler)
            return McpError(METHOD_NOT_FOUND, "Method not found", {"method": method})
        by_revision = self._handlers.get(method)
        if not by_revision:
            return McpError(METHOD_NOT_FOUND, "Method not found", {"method": method})
        chosen = by_revision.get(bindings.revision) or by_revision[max(by_revision)]
        return Route(chosen[0], chosen[1])

    def untasked(
        self, bindings: Bindings, method: str, params: dict[str, Any] | None, route: Route
    ) -> Route | McpError:
        """``route``, or -32601 for the task form of a request to an endpoint that neither serves
        tasks (``enable_tasks``) nor advertises the method's task capability for its handler to
        answer itself: the handler would answer a plain result where a task is due. Refused
        before it runs, as a tool whose ``taskSupport`` forbids it is (tasks.md, "Tool-Level
        Negotiation")."""
        if params is None or "task" not in params:
            return route
        spec = route.spec
        if spec is None or spec.task_result_type is None or spec.task_capability is None:
            return route  # no task form in this revision: the member is the handler's
        if has_capability(self.capabilities_for(bindings), ".".join(spec.task_capability)):
            return route  # advertised: the handler answers the task form itself
        return McpError(
            METHOD_NOT_FOUND, f"{method} is not served as a task here", {"method": method}
        )

    def find_notification(
        self, session: Session, method: str, params: dict[str, Any] | None, envelope: Envelope
    ) -> Callable[[], Awaitable[None]] | None:
        """Work that runs the user's handlers of a notification, validating its params first."""
        entries = self._notification_handlers.get(method)
        if not entries:
            return None

        async def run() -> None:
            for spec, fn in entries:
                value = (
                    validator(spec.params_type)(params or {})
                    if spec.params_type is not None
                    else params
                )
                await fn(value, session)

        return run
