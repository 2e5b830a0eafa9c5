"""Middleware: code that wraps every incoming request and notification of an endpoint.

``endpoint.add_middleware(mw)`` with ``async def mw(call: IncomingCall, call_next) -> Any``.
The first added is the outermost: it sees the call first and the result last. A middleware
reads ``call`` (method, raw params, the ``RequestContext`` and so the identity), then either
returns ``await call_next()`` (the result of the rest of the chain and the handler, which it may
time, log or replace) or answers by itself: a result, or ``raise McpError(...)`` for a JSON-RPC
error. Any other exception is the client's -32603 "Internal error" (logged, the session lives
on), as for a handler.

The seam is the endpoint's router (``route_request``, ``route_notification``): installing the
first middleware replaces them on that endpoint with the wrapping versions below, so an
endpoint without middleware runs exactly the code it ran before.

Outgoing middleware is the mirror, for every request the endpoint sends through its sessions:
``endpoint.add_outgoing_middleware(mw)`` with ``async def mw(call: OutgoingRequest, call_next)``.
``call_next()`` sends the request (``call.params`` as they are then: replace them to change
what goes, e.g. its ``_meta``) and returns its typed result; an exception raised by a middleware
is the caller's. The seams are each session's ``send_request`` and ``send_request_raw`` (the
requests no revision types: a lifecycle's ``initialize`` and ``server/discover``, an
extension's; ``call.raw``, and ``call_next()`` returns JSON data), put on a session's instance
only when its endpoint has outgoing middleware (``install_outgoing``), so a session without
any runs the class's own methods, unchanged. Each request passes the chain once, however many
messages it takes (the stateless era's input rounds).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from mcpbind import generated
from mcpbind.generated.support import MethodSpec, RequestOptions
from mcpbind.runtime.core.access_token import AccessToken
from mcpbind.runtime.core.bindings import dump
from mcpbind.runtime.core.errors import McpError
from mcpbind.runtime.core.outgoing import RawSend
from mcpbind.runtime.core.routing import BuiltResult, Handler, Router
from mcpbind.runtime.core.session import RequestContext, Route, Session
from mcpbind.runtime.core.transport import RUNTIME_OWN, Envelope

__all__ = [
    "CallNext",
    "IncomingCall",
    "Middleware",
    "OutgoingMiddleware",
    "OutgoingRequest",
    "install",
    "install_outgoing",
]

#: The rest of the chain: the next middleware, or the handler itself.
CallNext = Callable[[], Awaitable[Any]]


@dataclass(slots=True)
class IncomingCall:
    """One incoming request or notification, as a middleware sees it.

    ``params`` are the raw params as received (``_meta`` included); a request's have already
    passed validation against the revision's model. ``context`` is the handler's
    ``RequestContext`` for a request, ``None`` for a notification. ``revision`` and ``era``
    are those this message is served under (in the stateless era, the ones its ``_meta`` named;
    ``None`` before a handshake-era session negotiated one: ``initialize`` itself).
    """

    method: str
    params: dict[str, Any] | None
    kind: Literal["request", "notification"]
    context: RequestContext | None
    session: Session
    revision: str | None
    era: str | None
    transport_context: Any = None

    @property
    def request_id(self) -> int | str | None:
        """The JSON-RPC id of a request; ``None`` for a notification."""
        return self.context.request_id if self.context is not None else None

    @property
    def auth(self) -> AccessToken | None:
        """Who the message's OAuth access token speaks for (``RequestContext.auth``), on an HTTP
        server protected by a ``ResourceServer``; ``None`` elsewhere."""
        token: AccessToken | None = getattr(self.transport_context, "auth", None)
        return token


Middleware = Callable[[IncomingCall, CallNext], Awaitable[Any]]


@dataclass(slots=True)
class OutgoingRequest:
    """One request an endpoint sends, as an outgoing middleware sees it.

    ``params`` are the request's params as JSON data, before the era's lifecycle completes them
    (the stateless era adds its ``_meta`` members, the caller's own winning): replace them, or
    their ``_meta``, with a copy to change what is sent (they may be the caller's own dict).
    ``call_next()`` returns the result typed by ``spec`` (after any input-required rounds of
    the stateless era: one call, however many rounds), or, when ``raw`` is true (a request the
    runtime sends untyped: a lifecycle's ``initialize`` and ``server/discover``, an
    extension's), the result as JSON data. ``related_id`` is the id of the incoming request it
    is sent during (a server's sampling in a tool call), if any.
    """

    method: str
    params: dict[str, Any] | None
    session: Session
    spec: MethodSpec[Any, Any]
    options: RequestOptions | None = None
    related_id: int | str | None = None
    raw: bool = False

    @property
    def revision(self) -> str:
        """The revision the session speaks (the one offered, before the handshake ends)."""
        return self.session.bindings.revision

    @property
    def era(self) -> str:
        """The session's era: ``"handshake"`` or ``"stateless"`` (the revision's, until the
        lifecycle settled one: a stateless-era client may fall back)."""
        return self.session.peer.era or generated.ERAS[self.session.bindings.revision]


OutgoingMiddleware = Callable[[OutgoingRequest, CallNext], Awaitable[Any]]


def _chain(
    chain: Sequence[Callable[[Any, CallNext], Awaitable[Any]]], call: Any, last: CallNext
) -> Awaitable[Any]:
    """Run ``chain`` around ``last``, the first middleware outermost."""
    return _step(chain, 0, call, last)


def _step(
    chain: Sequence[Callable[[Any, CallNext], Awaitable[Any]]],
    index: int,
    call: Any,
    last: CallNext,
) -> Awaitable[Any]:
    if index == len(chain):
        return last()
    # A partial rather than a closure per step: C-made, and cheaper on the per-call path.
    return chain[index](call, functools.partial(_step, chain, index + 1, call, last))


def install(router: Router, chain: Sequence[Middleware]) -> None:
    """Route ``router``'s incoming requests and notifications through ``chain`` (the endpoint's
    own list: middleware added later joins it). Done once, when the first middleware is added,
    so the routing of an endpoint without any is untouched."""
    plain_request = router.route_request
    plain_notification = router.route_notification

    def route_request(
        session: Session, method: str, params: dict[str, Any] | None
    ) -> Route | McpError:
        route = plain_request(session, method, params)
        if isinstance(route, McpError) or RUNTIME_OWN in session.connection.extra:
            # Refused before any handler (unknown method, wrong era...), or asked by the
            # runtime itself, not a client.
            return route
        return _wrapped(chain, route, session, method, params)

    def route_notification(
        session: Session, method: str, params: dict[str, Any] | None, envelope: Envelope
    ) -> Callable[[], Awaitable[None]] | None:
        work = plain_notification(session, method, params, envelope)
        if RUNTIME_OWN in session.connection.extra:
            return work
        call = IncomingCall(
            method,
            params,
            "notification",
            None,
            session,
            session.peer.revision,
            session.peer.era,
            envelope.context,
        )

        async def run() -> None:
            await _chain(chain, call, work if work is not None else _nothing)

        return run

    # The session asks ``router.route_request`` per message: an attribute of the instance
    # shadows the class's method, so only this endpoint pays for its middleware.
    router.route_request = route_request  # type: ignore[method-assign]
    router.route_notification = route_notification  # type: ignore[method-assign]


async def _nothing() -> None:
    return None


def _wrapped(
    chain: Sequence[Middleware],
    route: Route,
    session: Session,
    method: str,
    params: dict[str, Any] | None,
) -> Route:
    """``route`` with its handler run through ``chain``. A route the runtime answers by itself
    (``ping``) gets a handler that answers the same, so the chain sees it too."""
    handler = route.handler
    if handler is None:
        answer: dict[str, Any] = route.immediate if route.immediate is not None else {}

        async def answer_immediately(parsed: Any, context: RequestContext) -> Any:
            return answer

        handler = answer_immediately
    inner = handler
    # Read when routed: a stateless-era session's peer describes the request it last routed.
    revision, era = session.peer.revision, session.peer.era

    async def run(parsed: Any, context: RequestContext) -> Any:
        call = IncomingCall(
            method, params, "request", context, session, revision, era, context.transport_context
        )
        return await _chain(chain, call, functools.partial(_plain, inner, parsed, context))

    route.handler = run
    route.immediate = None
    return route


async def _plain(handler: Handler, parsed: Any, context: RequestContext) -> Any:
    """``handler``'s result as the middleware sees it: a ``BuiltResult`` as a plain dict, which
    the session validates, whatever the middleware did with it."""
    result = await handler(parsed, context)
    return dict(result) if type(result) is BuiltResult else result


def install_outgoing(session: Session, chain: Sequence[OutgoingMiddleware]) -> None:
    """Send ``session``'s requests through ``chain`` (its endpoint's own list: middleware added
    later joins it), typed and raw. Done once per session, by the endpoint, when the session is
    made or the first outgoing middleware is added: a session without any is untouched."""
    if "send_request" in vars(session):
        return
    plain = session.send_request
    plain_raw = session.send_request_raw

    async def send_request(
        spec: MethodSpec[Any, Any],
        params: Any,
        options: RequestOptions | None = None,
        related_id: int | str | None = None,
    ) -> Any:
        call = OutgoingRequest(spec.method, dump(params), session, spec, options, related_id)
        return await _chain(chain, call, functools.partial(_send, plain, call))

    async def send_request_raw(
        spec: MethodSpec[Any, Any],
        body: dict[str, Any] | None,
        options: RequestOptions | None = None,
        send: RawSend | None = None,
    ) -> Any:
        call = OutgoingRequest(spec.method, body, session, spec, options, raw=True)
        return await _chain(chain, call, functools.partial(_send_raw, plain_raw, call, send))

    # Every sender (``Client``, ``RequestContext``, the keep-alive, tasks, the lifecycles, the
    # extensions) asks the session's ``send_request`` or ``send_request_raw`` per request:
    # the instance's attributes shadow the class's methods.
    session.send_request = send_request  # type: ignore[method-assign]
    session.send_request_raw = send_request_raw  # type: ignore[method-assign]


async def _send(plain: Callable[..., Awaitable[Any]], call: OutgoingRequest) -> Any:
    return await plain(call.spec, call.params, call.options, call.related_id)


async def _send_raw(
    plain: Callable[..., Awaitable[Any]], call: OutgoingRequest, send: RawSend | None
) -> Any:
    return await plain(call.spec, call.params, call.options, send)
