"""The stateless era (2026-07-28 and later): no handshake, every request says who sends it.

Each client request carries, in ``params._meta``, the protocol version, the client's
capabilities and (optionally) its identity (``basic/index.md``, "Per-request protocol fields");
the server checks them per request and answers ``UnsupportedProtocolVersionError`` (-32022) for
a version it lacks. ``server/discover`` tells a client the server's versions, capabilities and
identity. Servers never send requests: what they need from the client comes back as an
``InputRequiredResult`` and the client retries with ``inputResponses`` (multi round-trip
requests, ``basic/patterns/mrtr.md``).

Both strategies can also serve the handshake era (``versioning.md``, "dual-era"): the server
hands a session that opens with ``initialize`` to a ``HandshakeServer``; the client probes with
``server/discover`` and falls back to a ``HandshakeClient`` when the answer is not a modern one.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, get_args

from mcpbind import generated
from mcpbind.generated.names import (
    INITIALIZE,
    META_CLIENT_CAPABILITIES as CLIENT_CAPABILITIES,
    META_CLIENT_INFO as CLIENT_INFO,
    META_PROTOCOL_VERSION as PROTOCOL_VERSION,
    META_SERVER_INFO as SERVER_INFO,
    SERVER_DISCOVER,
    SUBSCRIPTIONS_LISTEN,
)
from mcpbind.generated.support import Direction, MethodSpec
from mcpbind.runtime.core.bindings import Bindings, dump, validator
from mcpbind.runtime.core.bounded import remember
from mcpbind.runtime.core.errors import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    CapabilityError,
    McpError,
)
from mcpbind.runtime.core.revisions import STATELESS_REVISIONS
from mcpbind.runtime.core.routing import OutgoingCall, ResultCheck
from mcpbind.runtime.core.session import RequestContext, Route, Session
from pydantic import BaseModel, ValidationError

from .input_required import NO_PARAMS, InputRounds, input_result_type
from .lifecycle import LEGACY, HandshakeServer, ServerSide, era_revisions, handshake_opens

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = [
    "CLIENT_CAPABILITIES",
    "CLIENT_INFO",
    "COMPLETE",
    "LEGACY",
    "PROTOCOL_VERSION",
    "SERVER_INFO",
    "STATELESS_REVISIONS",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "StatelessServer",
    "implementation",
]

# Shared with the client side (``stateless_client.py``): the probe and the ``resultType`` of a
# complete result (``LEGACY``, the ``peer.era`` of a handshake session, is ``lifecycle``'s).
COMPLETE = "complete"
_RESULT_STAMP: Final = {"resultType": COMPLETE}
#: What a handler written for a handshake revision cannot know it must say, with the value the
#: spec gives an absent one: ``ttlMs`` 0 is "immediately stale" (caching.md), and ``private``
#: the cautious scope. Stamped only where the served result has the member.
_NEUTRAL: Final = {"resultType": COMPLETE, "ttlMs": 0, "cacheScope": "private"}


@functools.cache
def _cross_era_stamp(spec: MethodSpec[Any, Any]) -> dict[str, Any]:
    """The neutral members ``spec``'s result classes declare (any member of a union)."""
    members = get_args(spec.result_type) or (spec.result_type,)
    declared = {
        name
        for member in members
        if isinstance(member, type) and issubclass(member, BaseModel)
        for name in member.model_fields
    }
    return {key: value for key, value in _NEUTRAL.items() if key in declared or key == "resultType"}


class _Plan:
    """How a (revision, method) is served, from the generated tables: the bindings, the
    method's spec there (None: not of that revision), the stamp a handler written for another
    revision gets and the check of its results, and whether its result may ask the client for
    input (rounds). A class with slots, read per request (a ``NamedTuple``'s fields cost more)."""

    __slots__ = ("bindings", "cross_check", "cross_stamp", "rounds", "served")

    def __init__(
        self,
        bindings: Bindings,
        served: MethodSpec[Any, Any] | None,
        cross_stamp: dict[str, Any],
        cross_check: ResultCheck | None,
        rounds: bool,
    ) -> None:
        self.bindings = bindings
        self.served = served
        self.cross_stamp = cross_stamp
        self.cross_check = cross_check
        self.rounds = rounds


_MISSING: Final = object()
#: Distinct ``clientInfo`` values kept, validated (all dropped when full).
_MAX_INFOS: Final = 256


def implementation(bindings: Bindings, data: Any) -> Any:
    """The peer's self-description as the revision's ``Implementation``, like the handshake's;
    None if absent or malformed (it is for display only, never a reason to refuse)."""
    if data is None:
        return None
    try:
        return validator(bindings.module.types.Implementation)(data)
    except ValidationError:
        return None


class StatelessServer:
    """Serves stateless-era requests, and (with ``legacy``) handshake-era sessions too.

    A session that opens with ``initialize`` is handed to ``legacy`` for good; every other
    request must carry the per-request ``_meta`` fields, or it is refused with -32602 (or, with
    ``legacy`` and no ``_meta`` version at all, as a handshake server refuses requests before
    ``initialize``). ``server/discover`` is answered here.
    """

    def __init__(
        self,
        supported: Sequence[str] | None = None,
        legacy: HandshakeServer | None = None,
        *,
        discover_ttl_ms: int = 0,
    ) -> None:
        self.supported = era_revisions("stateless", supported)
        self.legacy = legacy
        self.discover_ttl_ms = discover_ttl_ms
        #: revision -> method -> plan (two lookups of a string: no tuple to make and hash)
        self._plans: dict[str, dict[str, _Plan]] = {}
        self._infos: dict[tuple[Any, ...], Any] = {}

    @property
    def all_supported(self) -> list[str]:
        """Every version served, newest first (the ``supported`` list of -32022)."""
        legacy = list(self.legacy.supported) if self.legacy is not None else []
        return sorted([*self.supported, *legacy], reverse=True)

    def _unsupported(self, requested: Any) -> McpError:
        return McpError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": self.all_supported, "requested": requested},
        )

    def assume_initialized(self, session: Session, revision: str) -> None:
        """Start ``session`` as if initialised at ``revision``: a handshake-era one goes to
        ``legacy``; a stateless-era one is marked so, and its requests then say everything
        (one without the ``_meta`` fields is invalid params, never a handshake-era request)."""
        if generated.ERAS.get(revision) == "stateless":
            session.peer.era = "stateless"
        elif self.legacy is not None:
            session.peer.era = LEGACY
            self.legacy.assume_initialized(session, revision)

    def gate(
        self,
        server: ServerSide,
        session: Session,
        method: str,
        params: dict[str, Any] | None,
    ) -> Route | McpError | None:
        peer = session.peer
        if peer.era == LEGACY:
            assert self.legacy is not None
            return self.legacy.gate(server, session, method, params)
        meta: JsonValue = params.get("_meta") if params else None
        version: JsonValue = meta.get(PROTOCOL_VERSION) if type(meta) is dict else None
        if version is None and self.legacy is not None and handshake_opens(peer, method, version):
            return self.legacy.gate(server, session, method, params)
        if method == INITIALIZE:
            # Not a method of this era (-32601), but the message names the versions served:
            # it may be all a legacy client can show its user (versioning.md).
            supported = self.all_supported
            return McpError(
                METHOD_NOT_FOUND,
                f"Method not found: initialize; this server speaks {', '.join(supported)} "
                "with per-request _meta, no handshake",
                {"method": INITIALIZE, "supported": supported},
            )
        if type(meta) is not dict or version is None:
            return McpError(
                INVALID_PARAMS,
                f"Invalid params: _meta must carry {PROTOCOL_VERSION!r} and {CLIENT_CAPABILITIES!r}",
            )
        capabilities: JsonValue = meta.get(CLIENT_CAPABILITIES)
        if type(capabilities) is not dict:
            return McpError(INVALID_PARAMS, f"Invalid params: _meta lacks {CLIENT_CAPABILITIES!r}")
        if version not in self.supported:
            return self._unsupported(version)
        plans = self._plans.get(version)
        plan = plans.get(method) if plans is not None else None
        if plan is None:
            plan = self._plan(version, method)
        bindings = plan.bindings
        # Per request, not per session: the next request may say otherwise.
        session.bindings = bindings
        peer.era = "stateless"
        peer.revision = version
        peer.phase = "operating"
        peer.capabilities = capabilities
        info = meta.get(CLIENT_INFO)
        peer.info = self._client_info(bindings, info) if info is not None else None
        if method == SERVER_DISCOVER:

            async def discover(params: Any, context: RequestContext) -> Any:
                return self._discover(server, bindings)

            return Route(plan.served, discover)
        route = server.find_route(bindings, method)
        if (
            method == SUBSCRIPTIONS_LISTEN
            and isinstance(route, McpError)
            and plan.served is not None
        ):
            return self._listen_route(server, bindings)
        if isinstance(route, Route):
            # Handlers written for a handshake revision serve here too: their results get the
            # members they cannot know of, and must then be valid under this revision.
            route.stamp = _RESULT_STAMP
            served = plan.served
            if route.spec is not None and route.spec.revision != version and served is not None:
                route.stamp = plan.cross_stamp
                route.check = plan.cross_check
            if plan.rounds:
                assert served is not None
                # Its handler may ask the client (context.peer): in rounds, by InputRequiredResult
                # (``with_input_rounds``, written out: one call fewer per request).
                route.handler = InputRounds(
                    server.request_state, served, bindings, params or NO_PARAMS, route.handler
                ).run
        return route

    def _plan(self, version: str, method: str) -> _Plan:
        """What serving ``method`` at ``version`` takes from the generated tables (kept for
        the methods of that revision: a client may name anything)."""
        # Here, not at the top: the cross-era proofs (five modules) are for stateless-era
        # requests, which a server serving the handshake era over stdio may never meet.
        from .crossera import cross_era_check

        bindings = Bindings.load(version, Direction.SERVER_TO_CLIENT)
        served = bindings.methods.get(method)
        stamp = _cross_era_stamp(served) if served is not None else _RESULT_STAMP
        plan = _Plan(
            bindings,
            served,
            stamp,
            cross_era_check(served, frozenset(stamp)) if served is not None else None,
            served is not None and input_result_type(served) is not None,
        )
        if served is not None:
            self._plans.setdefault(version, {})[method] = plan
        return plan

    def _client_info(self, bindings: Bindings, data: Any) -> Any:
        """``implementation`` of a client's ``clientInfo``, kept for the exact flat values a
        client repeats on every request (anything nested, or new, is validated afresh)."""
        try:
            key = (bindings.revision, *data.items())
            found = self._infos.get(key, _MISSING)
        except (AttributeError, TypeError):  # not a dict, or unhashable values
            return implementation(bindings, data)
        if found is _MISSING:
            found = remember(self._infos, key, implementation(bindings, data), _MAX_INFOS)
        return found

    def _listen_route(self, server: ServerSide, bindings: Bindings) -> Route:
        """The built-in ``subscriptions/listen``: a stream of the server's change notifications."""
        capabilities = server.capabilities_for(bindings)

        async def listen(params: Any, context: RequestContext) -> Any:
            requested = dump(params.notifications)
            return await server.subscriptions.listen(capabilities, requested, context)

        return Route(bindings.methods[SUBSCRIPTIONS_LISTEN], listen)

    def _discover(self, server: ServerSide, bindings: Bindings) -> Any:
        result: dict[str, Any] = {
            "resultType": COMPLETE,
            "supportedVersions": self.all_supported,
            "capabilities": server.capabilities_for(bindings),
            "_meta": {SERVER_INFO: server.info},
            "ttlMs": self.discover_ttl_ms,
            "cacheScope": "public",
        }
        if server.instructions is not None:
            result["instructions"] = server.instructions
        return validator(bindings.methods[SERVER_DISCOVER].result_type)(result)

    def on_notification(
        self,
        server: ServerSide,
        session: Session,
        method: str,
        params: dict[str, Any] | None,
    ) -> None:
        if session.peer.era == LEGACY and self.legacy is not None:
            self.legacy.on_notification(server, session, method, params)

    def prepare_call(self, server: ServerSide, call: OutgoingCall) -> None:
        if call.session.peer.era == LEGACY and self.legacy is not None:
            self.legacy.prepare_call(server, call)
            return
        raise CapabilityError(
            f"{call.spec.method!r} not sent: in the stateless era a server sends no requests; only "
            "a handler whose result may be an InputRequiredResult (tools/call, prompts/get, "
            "resources/read) can ask the client, through its context.peer"
        )
