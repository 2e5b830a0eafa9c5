"""Who wants the server's change notifications, in both eras (``basic/patterns/subscriptions.md``).

Stateless era: a client opens a stream with ``subscriptions/listen``; the server acknowledges the
filter subset it honours (by its capabilities: ``tools.listChanged``, ``prompts.listChanged``,
``resources.listChanged``, ``resources.subscribe``) and sends each matching notification on that
request (``related_id``, and ``_meta`` ``subscriptionId`` = the request id) until the client
cancels it, or, on shutdown, answers it with a ``complete`` result. Handshake era: list changes go
to every operating session, ``notifications/resources/updated`` only to sessions that subscribed
to the URI with ``resources/subscribe`` (tracked here, around the user's handler or instead of
one). ``Subscriptions.targets`` turns one notification into the messages for all of them.

A feature above may honour a filter member of its own (``Subscriptions.extra``: the tasks
extension's ``taskIds``, for ``notifications/tasks``): it decides what of the member it accepts
for the request, and which of its notifications each stream then gets.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import anyio
from mcpbind.generated.names import (
    META_SUBSCRIPTION_ID,
    NOTIFICATIONS_PROMPTS_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_UPDATED,
    NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
    NOTIFICATIONS_TOOLS_LIST_CHANGED,
    RESOURCES_SUBSCRIBE,
)
from mcpbind.runtime.core.capabilities import has_capability
from mcpbind.runtime.core.errors import INVALID_REQUEST, McpError
from mcpbind.runtime.core.routing import Route
from mcpbind.runtime.core.session import Target

if TYPE_CHECKING:
    from mcpbind.runtime.core.context import RequestContext
    from mcpbind.runtime.core.jsonvalue import JsonValue
    from mcpbind.runtime.core.session import Session

__all__ = [
    "ExtraFilter",
    "Subscriptions",
]

URIS: Final = "resourceSubscriptions"
#: Filter flag -> the notification it asks for, and the server capability that offers it.
FLAGS: Final = {
    "toolsListChanged": (NOTIFICATIONS_TOOLS_LIST_CHANGED, "tools.listChanged"),
    "promptsListChanged": (NOTIFICATIONS_PROMPTS_LIST_CHANGED, "prompts.listChanged"),
    "resourcesListChanged": (NOTIFICATIONS_RESOURCES_LIST_CHANGED, "resources.listChanged"),
}


# A NamedTuple, not a frozen dataclass: as immutable, for a fraction of the import-time cost.
class ExtraFilter(NamedTuple):
    """A filter member a feature above honours: ``accept(requested, context)`` is what of the
    requested value it agrees to (None: nothing; an ``McpError`` refuses the request), and
    ``matches(accepted, params)`` whether notification ``method`` goes to a stream that got
    ``accepted``."""

    method: str
    accept: Callable[[Any, RequestContext], Awaitable[Any]]
    matches: Callable[[Any, Mapping[str, Any]], bool]


class _Listener:
    """One open ``subscriptions/listen`` request and what it asked for."""

    __slots__ = ("done", "ended", "extra", "methods", "request_id", "session", "uris")

    def __init__(
        self,
        session: Session,
        request_id: int | str,
        methods: set[str],
        uris: set[str],
        extra: dict[str, Any],
    ) -> None:
        self.session = session
        self.request_id = request_id
        self.methods = methods
        self.uris = uris
        self.extra = extra
        self.ended = anyio.Event()
        self.done = anyio.Event()


def honoured(capabilities: Mapping[str, Any], requested: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a requested filter a server with ``capabilities`` honours."""
    out: dict[str, Any] = {
        flag: True
        for flag, (_, capability) in FLAGS.items()
        if requested.get(flag) is True and has_capability(capabilities, capability)
    }
    uris: JsonValue = requested.get(URIS)
    if isinstance(uris, list) and has_capability(capabilities, "resources.subscribe"):
        out[URIS] = [uri for uri in uris if isinstance(uri, str)]
    return out


class Subscriptions:
    """A server's open listen streams and handshake-era resource subscriptions."""

    def __init__(self) -> None:
        self._listeners: dict[tuple[Session, int | str], _Listener] = {}
        self._resources: dict[Session, set[str]] = {}
        self._open: dict[Session, int] = {}
        self.closing = False
        #: Filter members that features above honour, by name (see ``ExtraFilter``).
        self.extra: dict[str, ExtraFilter] = {}

    @property
    def listening(self) -> int:
        """How many listen streams are open."""
        return len(self._listeners)

    # -- stateless era --------------------------------------------------------------------

    async def listen(
        self, capabilities: Mapping[str, Any], requested: Mapping[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        """Serve one ``subscriptions/listen`` request until it is cancelled, the client goes
        away or the server ends it.

        Each open stream holds one of its session's handler slots, so a session may keep at
        most half of them (``SessionOptions.max_concurrent_handlers``) listening; the other
        half stays free for its requests.
        """
        session = context.session
        limit = max(1, session.options.max_concurrent_handlers // 2)
        if self._open.get(session, 0) >= limit:
            raise McpError(
                INVALID_REQUEST,
                f"Invalid Request: {limit} subscriptions/listen streams are open on this "
                "connection already; cancel one first",
            )
        self._open[session] = self._open.get(session, 0) + 1
        try:
            return await self._listen(capabilities, requested, context)
        finally:
            left = self._open.pop(session) - 1
            if left:
                self._open[session] = left

    async def _listen(
        self, capabilities: Mapping[str, Any], requested: Mapping[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        stream = context.request_id
        accepted = honoured(capabilities, requested)
        extra: dict[str, Any] = {}
        for name, member in self.extra.items():
            if name in requested:
                value = await member.accept(requested[name], context)
                if value is not None:
                    accepted[name] = extra[name] = value
        ack = {"_meta": {META_SUBSCRIPTION_ID: stream}, "notifications": accepted}
        await context.session.send_raw(
            {"jsonrpc": "2.0", "method": NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED, "params": ack},
            stream,
        )
        # Registered only now: nothing may reach the stream before its acknowledgement.
        methods = {FLAGS[flag][0] for flag in FLAGS if accepted.get(flag)}
        uris = set(accepted.get(URIS, ()))
        if uris:
            methods.add(NOTIFICATIONS_RESOURCES_UPDATED)
        methods.update(self.extra[name].method for name in extra)
        listener = _Listener(context.session, stream, methods, uris, extra)
        key = (context.session, stream)
        self._listeners[key] = listener
        try:
            if not self.closing:
                async with anyio.create_task_group() as tg:
                    # The client is gone: nothing to wait for (nor to drain at its end).
                    tg.start_soon(_chain, context.session.input_ended, listener.ended)
                    await listener.ended.wait()
                    tg.cancel_scope.cancel()
        finally:
            if self._listeners.get(key) is listener:
                del self._listeners[key]
            listener.done.set()
        return {"resultType": "complete", "_meta": {META_SUBSCRIPTION_ID: stream}}

    async def end(self) -> None:
        """End every listen stream gracefully (each gets its ``complete`` response), and any
        opened from now on; returns once their handlers have answered."""
        self.closing = True
        listeners = list(self._listeners.values())
        for listener in listeners:
            listener.ended.set()
        for listener in listeners:
            await listener.done.wait()

    # -- handshake era --------------------------------------------------------------------

    def track(
        self,
        session: Session,
        method: str,
        route: Route | McpError,
        params: JsonValue,
        offered: bool,
    ) -> Route | McpError:
        """Route ``resources/subscribe``/``unsubscribe`` so this registry learns of it: around
        the user's handler, or (if the server ``offered`` ``resources.subscribe``) instead."""
        uri = params.get("uri") if isinstance(params, dict) else None
        if isinstance(route, McpError):
            if not offered:
                return route
            spec = session.bindings.methods[method]
            route = Route(spec, _nothing)
        handler = route.handler
        assert handler is not None

        async def tracked(parsed: Any, context: RequestContext) -> Any:
            result = await handler(parsed, context)
            if isinstance(uri, str):
                uris = self._resources.setdefault(session, set())
                if method == RESOURCES_SUBSCRIBE:
                    uris.add(uri)
                else:
                    uris.discard(uri)
            return result

        route.handler = tracked
        return route

    def cancelled(self, session: Session, request_id: Any) -> None:
        """The client cancelled a request: if it is a listen stream, it gets nothing more from
        now on (its handler task only ends at its next turn)."""
        if isinstance(request_id, (int, str)):
            self._listeners.pop((session, request_id), None)

    def forget(self, session: Session) -> None:
        """Drop what a session that ended had subscribed to."""
        self._resources.pop(session, None)

    # -- fan-out --------------------------------------------------------------------------

    def targets(
        self, sessions: Iterable[Session], method: str, params: dict[str, Any] | None
    ) -> list[Target]:
        """The messages that carry notification ``method`` to everyone who should get it."""
        uri = params.get("uri") if params else None
        out: list[Target] = []
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        for session in sessions:
            peer = session.peer
            if (
                peer.phase != "operating"
                or peer.era == "stateless"
                or method not in session.bindings.notifications
            ):
                continue
            if method == NOTIFICATIONS_RESOURCES_UPDATED and uri not in self._resources.get(
                session, ()
            ):
                continue
            out.append((session, message, None))
        for listener in self._listeners.values():
            if method not in listener.methods:
                continue
            if method == NOTIFICATIONS_RESOURCES_UPDATED and uri not in listener.uris:
                continue
            if listener.extra and not self._extra_matches(listener, method, params or {}):
                continue
            body = dict(params or {})
            body["_meta"] = {**(body.get("_meta") or {}), META_SUBSCRIPTION_ID: listener.request_id}
            out.append(
                (
                    listener.session,
                    {"jsonrpc": "2.0", "method": method, "params": body},
                    listener.request_id,
                )
            )
        return out

    def _extra_matches(self, listener: _Listener, method: str, params: Mapping[str, Any]) -> bool:
        for name, accepted in listener.extra.items():
            member = self.extra.get(name)
            if member is not None and member.method == method:
                return member.matches(accepted, params)
        return True


async def _chain(first: anyio.Event, then: anyio.Event) -> None:
    await first.wait()
    then.set()


async def _nothing(params: Any, context: RequestContext) -> dict[str, Any]:
    return {}
