"""Lifecycle strategies: how a session gets from connected to operating, per protocol era.

The session knows nothing of ``initialize``; a ``Client`` or ``Server`` delegates the opening
exchange, the gating of early requests and the per-request additions to one of these. The
handshake era (2024-11-05 .. 2025-11-25) is implemented here; the stateless era (2026-07-28: no
``initialize``, ``server/discover``, version, capabilities and client info in every request's
``_meta``) fits the same two protocols, in ``_stateless.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from mcpbind import generated
from mcpbind.generated.names import INITIALIZE, NOTIFICATIONS_INITIALIZED, PING
from mcpbind.generated.support import Direction, MethodSpec
from mcpbind.runtime.core.bindings import Bindings, dump, validator
from mcpbind.runtime.core.capabilities import has_capability
from mcpbind.runtime.core.errors import (
    INVALID_REQUEST,
    CapabilityError,
    McpError,
    ProtocolVersionError,
    invalid_params,
)
from mcpbind.runtime.core.revisions import ASSUME_INITIALIZED, HANDSHAKE_REVISIONS
from mcpbind.runtime.core.routing import OutgoingCall, PeerState
from mcpbind.runtime.core.session import RequestContext, Route, Session
from pydantic import ValidationError

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

    from .input_required import RequestStateKeeper
    from .subscriptions import Subscriptions

__all__ = [
    "ASSUME_INITIALIZED",
    "HANDSHAKE_REVISIONS",
    "LEGACY",
    "ClientLifecycle",
    "HandshakeClient",
    "HandshakeServer",
    "ServerLifecycle",
    "handshake_opens",
]

#: ``peer.era`` of a session a server (or client) of both eras runs with its handshake lifecycle.
LEGACY: Final = "handshake"


_OPEN = frozenset({INITIALIZE, PING})


class ClientSide(Protocol):
    """What a client lifecycle reads of the ``Client`` it opens sessions for."""

    @property
    def info(self) -> dict[str, Any]: ...

    @property
    def capabilities_version(self) -> int: ...

    def capabilities_for(self, bindings: Bindings) -> dict[str, Any]: ...

    def find_route(self, bindings: Bindings, method: str) -> Route | McpError: ...

    async def list_tools(self) -> object: ...


class ServerSide(Protocol):
    """What a server lifecycle reads of the ``Server`` whose sessions it opens (the stateless
    era's too: the keeper of sealed request state, and the ``subscriptions/listen`` streams)."""

    @property
    def info(self) -> dict[str, Any]: ...

    @property
    def instructions(self) -> str | None: ...

    @property
    def request_state(self) -> RequestStateKeeper: ...

    @property
    def subscriptions(self) -> Subscriptions: ...

    def capabilities_for(self, bindings: Bindings) -> dict[str, Any]: ...

    def find_route(self, bindings: Bindings, method: str) -> Route | McpError: ...


class ClientLifecycle(Protocol):
    """A client's half of a lifecycle; ``protocol_version`` is the revision it prefers."""

    protocol_version: str

    async def open(self, client: ClientSide, session: Session) -> None:
        """Bring the session to operating: negotiate, then set ``session.bindings`` and ``session.peer``."""
        ...

    def prepare_call(self, client: ClientSide, call: OutgoingCall) -> None:
        """Refuse a request the server cannot take, or give ``call`` the body with what the era
        puts in every request."""
        ...

    async def finish_call(self, client: ClientSide, call: OutgoingCall) -> Any:
        """The final raw result, given the first, ``call.raw`` (the stateless era may ask for
        input first)."""
        ...


class ServerLifecycle(Protocol):
    """A server's half of a lifecycle."""

    def gate(
        self, server: ServerSide, session: Session, method: str, params: dict[str, Any] | None
    ) -> Route | McpError | None:
        """Answer a request itself (a Route), refuse it (an error), or let the handlers have it (None)."""
        ...

    def assume_initialized(self, session: Session, revision: str) -> None:
        """Start ``session`` operating as if initialised at ``revision`` with empty client
        capabilities (``ASSUME_INITIALIZED``: a transport whose sessions never see ``initialize``)."""
        ...

    def on_notification(
        self, server: ServerSide, session: Session, method: str, params: dict[str, Any] | None
    ) -> None:
        """See every incoming notification first (e.g. ``notifications/initialized``)."""
        ...

    def prepare_call(self, server: ServerSide, call: OutgoingCall) -> None:
        """Refuse a request the client cannot take, or adjust its body."""
        ...


def era_revisions(era: str, revisions: Sequence[str] | None) -> tuple[str, ...]:
    """The revisions a lifecycle of ``era`` speaks, oldest first (default: every generated one
    of that era); refuses a revision without bindings or of another era."""
    chosen = (
        tuple(sorted(revisions))
        if revisions
        else tuple(r for r in generated.REVISIONS if generated.ERAS[r] == era)
    )
    if not chosen:
        raise ProtocolVersionError(f"no {era}-era revision to speak")
    for revision in chosen:
        if revision not in generated.ERAS:
            raise ProtocolVersionError(f"no bindings for revision {revision!r}")
        if generated.ERAS[revision] != era:
            raise ProtocolVersionError(
                f"revision {revision!r} is not a {era}-era revision ({generated.ERAS[revision]} "
                "era); it needs that era's lifecycle"
            )
    return chosen


def check_sendable(session: Session, spec: MethodSpec[Any, Any], direction: Direction) -> None:
    """Refuse, before sending, a request outside the revision or the peer's capabilities."""
    if spec.method not in session.bindings.methods or direction not in spec.directions:
        raise CapabilityError(
            f"{spec.method!r} cannot be sent this way under revision {session.bindings.revision}"
        )
    needed = spec.capabilities.get(direction)
    if needed is not None and not has_capability(session.peer.capabilities, needed):
        side = "server" if direction is Direction.CLIENT_TO_SERVER else "client"
        raise CapabilityError(
            f"the {side} did not advertise the {needed!r} capability, which {spec.method!r} needs; not sent"
        )


class HandshakeClient:
    """``initialize`` / ``notifications/initialized``, offering one revision (default: newest)."""

    def __init__(
        self, protocol_version: str | None = None, supported: Sequence[str] | None = None
    ) -> None:
        self.supported = era_revisions("handshake", supported)
        self.protocol_version = protocol_version or self.supported[-1]
        era_revisions("handshake", [self.protocol_version])

    async def open(self, client: ClientSide, session: Session) -> None:
        offered = Bindings.load(self.protocol_version, Direction.CLIENT_TO_SERVER)
        session.bindings = offered
        spec = offered.methods[INITIALIZE]
        params = validator(spec.params_type)(
            {
                "protocolVersion": self.protocol_version,
                "capabilities": client.capabilities_for(offered),
                "clientInfo": client.info,
            }
        )
        session.peer.phase = "initializing"
        raw: JsonValue = await session.send_request_raw(spec, dump(params))
        version: JsonValue = raw.get("protocolVersion") if isinstance(raw, dict) else None
        if version not in self.supported:
            session.close(f"the server answered protocol version {version!r}")
            raise ProtocolVersionError(
                f"the server answered protocol version {version!r}, which this client does not support "
                f"(it supports {', '.join(self.supported)}); disconnected"
            )
        bindings = Bindings.load(version, Direction.CLIENT_TO_SERVER)
        result = validator(bindings.methods[INITIALIZE].result_type)(raw)
        session.bindings = bindings
        session.peer.revision = version
        session.peer.info = result.serverInfo
        session.peer.capabilities = dump(result.capabilities)
        session.peer.instructions = result.instructions
        session.peer.phase = "operating"
        await session.send_notification(bindings.notifications[NOTIFICATIONS_INITIALIZED], None)

    def prepare_call(self, client: ClientSide, call: OutgoingCall) -> None:
        session, spec = call.session, call.spec
        if session.peer.phase != "operating" and spec.method not in _OPEN:
            raise CapabilityError(f"{spec.method!r} sent before initialization completed")
        check_sendable(session, spec, Direction.CLIENT_TO_SERVER)

    async def finish_call(self, client: ClientSide, call: OutgoingCall) -> Any:
        return call.raw


def handshake_opens(peer: PeerState, method: str, version: object) -> bool:
    """Whether a server of both eras serves this message of a new session with its handshake
    lifecycle: one without a ``_meta`` version (``initialize``, which makes the session the
    handshake's, or a request refused as before it)."""
    if version is None and peer.phase == "new" and peer.era is None:
        if method == INITIALIZE:
            peer.era = LEGACY
        return True
    return False


def _read_params(spec: MethodSpec[Any, Any], raw: dict[str, Any] | None) -> Any:
    """``initialize``'s params validated by ``spec``, or the error the session answers a
    request's bad params with (``invalid_params``)."""
    try:
        return Route(spec).parse_params(raw)
    except ValidationError as exc:
        return invalid_params(INITIALIZE, exc)
    except McpError as exc:
        return exc


class HandshakeServer:
    """Answers ``initialize`` (the requested revision if supported, else the newest), refuses
    everything but ``ping`` before it, and answers ``ping`` from the reading task."""

    def __init__(self, supported: Sequence[str] | None = None) -> None:
        self.supported = era_revisions("handshake", supported)

    def gate(
        self, server: ServerSide, session: Session, method: str, params: dict[str, Any] | None
    ) -> Route | McpError | None:
        if method == PING:
            return Route(None, immediate={})
        phase = session.peer.phase
        if method == INITIALIZE:
            if phase != "new":
                return McpError(INVALID_REQUEST, "initialize was already received in this session")
            requested = params.get("protocolVersion") if params else None
            version = requested if requested in self.supported else self.supported[-1]
            bindings = Bindings.load(version, Direction.SERVER_TO_CLIENT)
            parsed = _read_params(bindings.methods[INITIALIZE], params)
            if isinstance(parsed, McpError):
                return parsed

            async def initialize(raw: Any, context: RequestContext) -> Any:
                return self._initialize(server, session, bindings, parsed)

            # No spec on the route: its params are read above (before any middleware, as the
            # session reads a request's), and its answer is the JSON ``_initialize`` builds,
            # not validated into ``InitializeResult`` (a validator an idle server keeps for
            # nothing).
            return Route(None, initialize, inline=True)
        if phase in ("new", "initializing"):
            return McpError(
                INVALID_REQUEST, f"{method!r} received before initialize; send initialize first"
            )
        return None

    def _initialize(
        self, server: ServerSide, session: Session, bindings: Bindings, params: Any
    ) -> Any:
        session.bindings = bindings
        session.peer.revision = bindings.revision
        session.peer.info = params.clientInfo
        # Through the params' own serializer, built with its validator: dumping the nested
        # model alone would build ClientCapabilities' (5 M instructions of a first answer).
        session.peer.capabilities = dump(params)["capabilities"]
        session.peer.phase = "initialized"
        result: dict[str, Any] = {
            "protocolVersion": bindings.revision,
            "capabilities": server.capabilities_for(bindings),
            "serverInfo": server.info,
        }
        if server.instructions is not None:
            result["instructions"] = server.instructions
        return result

    def assume_initialized(self, session: Session, revision: str) -> None:
        """Start ``session`` operating as if ``initialize`` at ``revision`` had been answered
        and acknowledged, with empty client capabilities and no client info; a revision not
        served becomes the newest one, as ``initialize`` would negotiate."""
        version = revision if revision in self.supported else self.supported[-1]
        session.bindings = Bindings.load(version, Direction.SERVER_TO_CLIENT)
        peer = session.peer
        peer.revision = version
        peer.info = None
        peer.capabilities = {}
        peer.phase = "operating"

    def on_notification(
        self, server: ServerSide, session: Session, method: str, params: dict[str, Any] | None
    ) -> None:
        if method == NOTIFICATIONS_INITIALIZED and session.peer.phase == "initialized":
            session.peer.phase = "operating"

    def prepare_call(self, server: ServerSide, call: OutgoingCall) -> None:
        session, spec = call.session, call.spec
        if session.peer.phase not in ("initialized", "operating") and spec.method != PING:
            raise CapabilityError(f"{spec.method!r} sent before the client initialized the session")
        check_sendable(session, spec, Direction.SERVER_TO_CLIENT)
