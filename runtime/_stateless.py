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
from mcpbind.generated._support import Direction, MethodSpec, RequestOptions
from pydantic import BaseModel, ValidationError

from ._bindings import Bindings, dump, validator
from ._lifecycle import HandshakeClient, HandshakeServer, check_sendable, era_revisions
from ._session import RequestContext, Route, Session
from .errors import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    CapabilityError,
    InvalidResultError,
    McpError,
    ProtocolVersionError,
    RequestTimeoutError,
)

if TYPE_CHECKING:
    from ._client import Client
    from ._server import Server

__all__ = [
    "CLIENT_CAPABILITIES",
    "CLIENT_INFO",
    "PROTOCOL_VERSION",
    "SERVER_INFO",
    "STATELESS_REVISIONS",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "StatelessClient",
    "StatelessServer",
]

STATELESS_REVISIONS: tuple[str, ...] = tuple(
    r for r in generated.REVISIONS if generated.ERAS[r] == "stateless"
)

#: The ``_meta`` keys of the per-request protocol fields (``basic/index.md``).
PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
#: ``UnsupportedProtocolVersionError``; its ``data`` lists what the server supports.
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
#: Error codes only a modern server sends: getting one to the probe means "modern".
_MODERN_ERRORS: Final = frozenset({-32020, -32021, UNSUPPORTED_PROTOCOL_VERSION})

_DISCOVER = "server/discover"
_INITIALIZE = "initialize"
_INPUT_REQUIRED = "input_required"
_COMPLETE = "complete"
_LEGACY = "handshake"
_RESULT_STAMP: Final = {"resultType": _COMPLETE}
#: What a handler written for a handshake revision cannot know it must say, with the value the
#: spec gives an absent one: ``ttlMs`` 0 is "immediately stale" (caching.md), and ``private``
#: the cautious scope. Stamped only where the served result has the member.
_NEUTRAL: Final = {"resultType": _COMPLETE, "ttlMs": 0, "cacheScope": "private"}


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


def _implementation(bindings: Bindings, data: Any) -> Any:
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
        ``legacy``; a stateless-era one needs nothing (its requests say everything), nor does
        any revision without ``legacy`` (requests without ``_meta`` are refused anyway)."""
        if self.legacy is not None and generated.ERAS.get(revision) != "stateless":
            session.peer.era = _LEGACY
            self.legacy.assume_initialized(session, revision)

    def gate(
        self, server: Server, session: Session, method: str, params: dict[str, Any] | None
    ) -> Route | McpError | None:
        if session.peer.era == _LEGACY:
            assert self.legacy is not None
            return self.legacy.gate(server, session, method, params)
        meta = params.get("_meta") if params else None
        version = meta.get(PROTOCOL_VERSION) if type(meta) is dict else None
        if version is None and self.legacy is not None and session.peer.phase == "new":
            if method == _INITIALIZE:
                session.peer.era = _LEGACY
            return self.legacy.gate(server, session, method, params)
        if method == _INITIALIZE:
            # Not a method of this era (-32601), but the message names the versions served:
            # it may be all a legacy client can show its user (versioning.md).
            supported = self.all_supported
            return McpError(
                METHOD_NOT_FOUND,
                f"Method not found: initialize; this server speaks {', '.join(supported)} "
                "with per-request _meta, no handshake",
                {"method": _INITIALIZE, "supported": supported},
            )
        if type(meta) is not dict or version is None:
            return McpError(
                INVALID_PARAMS,
                f"Invalid params: _meta must carry {PROTOCOL_VERSION!r} and {CLIENT_CAPABILITIES!r}",
            )
        if type(meta.get(CLIENT_CAPABILITIES)) is not dict:
            return McpError(INVALID_PARAMS, f"Invalid params: _meta lacks {CLIENT_CAPABILITIES!r}")
        if version not in self.supported:
            return self._unsupported(version)
        bindings = Bindings.load(version, Direction.SERVER_TO_CLIENT)
        # Per request, not per session: the next request may say otherwise.
        session.bindings = bindings
        peer = session.peer
        peer.era = "stateless"
        peer.revision = version
        peer.phase = "operating"
        peer.capabilities = meta[CLIENT_CAPABILITIES]
        peer.info = _implementation(bindings, meta.get(CLIENT_INFO))
        if method == _DISCOVER:
            spec = bindings.methods[_DISCOVER]

            async def discover(params: Any, context: RequestContext) -> Any:
                return self._discover(server, bindings)

            return Route(spec, discover)
        route = server.find_route(bindings, method)
        if isinstance(route, Route):
            # Handlers written for a handshake revision serve here too: their results get the
            # members they cannot know of, and must then be valid under this revision.
            route.stamp = _RESULT_STAMP
            served = bindings.methods.get(method)
            if route.spec is not None and route.spec.revision != version and served is not None:
                route.stamp = _cross_era_stamp(served)
                route.check = served
        return route

    def _discover(self, server: Server, bindings: Bindings) -> Any:
        result: dict[str, Any] = {
            "resultType": _COMPLETE,
            "supportedVersions": self.all_supported,
            "capabilities": server.capabilities_for(bindings),
            "_meta": {SERVER_INFO: server.info},
            "ttlMs": self.discover_ttl_ms,
            "cacheScope": "public",
        }
        if server.instructions is not None:
            result["instructions"] = server.instructions
        return validator(bindings.methods[_DISCOVER].result_type)(result)

    def on_notification(
        self, server: Server, session: Session, method: str, params: dict[str, Any] | None
    ) -> None:
        if session.peer.era == _LEGACY and self.legacy is not None:
            self.legacy.on_notification(server, session, method, params)

    def prepare_request(
        self,
        server: Server,
        session: Session,
        spec: MethodSpec[Any, Any],
        params: dict[str, Any] | None,
    ) -> dict[str, Any] | None:
        if session.peer.era == _LEGACY and self.legacy is not None:
            return self.legacy.prepare_request(server, session, spec, params)
        raise CapabilityError(
            f"{spec.method!r} not sent: in the stateless era a server sends no requests; "
            "return an InputRequiredResult asking the client for it instead"
        )


class StatelessClient:
    """Speaks a stateless-era revision; with ``legacy``, falls back to the handshake.

    ``open`` probes with ``server/discover`` (``transports/stdio.md``, "Backward
    Compatibility"): a ``DiscoverResult`` or a modern error means a modern server (an
    ``UnsupportedProtocolVersionError`` is retried once with a version from its list); any
    other error, or no answer within ``probe_timeout`` seconds, means a legacy server, served
    by ``legacy`` if given, else refused with ``ProtocolVersionError``. Every request then gets
    the per-request ``_meta`` fields, and an ``InputRequiredResult`` is answered with the
    client's own handlers (sampling, elicitation, roots) and retried, at most
    ``max_input_rounds`` times.
    """

    def __init__(
        self,
        protocol_version: str | None = None,
        supported: Sequence[str] | None = None,
        legacy: HandshakeClient | None = None,
        *,
        probe_timeout: float = 10.0,
        max_input_rounds: int = 8,
    ) -> None:
        self.supported = era_revisions("stateless", supported)
        self.protocol_version = protocol_version or self.supported[-1]
        era_revisions("stateless", [self.protocol_version])
        self.legacy = legacy
        self.probe_timeout = probe_timeout
        self.max_input_rounds = max_input_rounds

    def meta(self, client: Client, bindings: Bindings) -> dict[str, Any]:
        """The per-request ``_meta`` fields this client sends under ``bindings``."""
        return {
            PROTOCOL_VERSION: bindings.revision,
            CLIENT_CAPABILITIES: client.capabilities_for(bindings),
            CLIENT_INFO: client.info,
        }

    async def open(self, client: Client, session: Session) -> None:
        version = self.protocol_version
        for attempt in range(2):
            bindings = Bindings.load(version, Direction.CLIENT_TO_SERVER)
            session.bindings = bindings
            spec = bindings.methods[_DISCOVER]
            options: RequestOptions = {"timeout": self.probe_timeout}
            try:
                raw = await session.request_raw(
                    spec, {"_meta": self.meta(client, bindings)}, options
                )
            except McpError as exc:
                if exc.code == UNSUPPORTED_PROTOCOL_VERSION and attempt == 0:
                    data = exc.data if isinstance(exc.data, dict) else {}
                    version = self._choose(data.get("supported"), exc)
                    continue
                if exc.code in _MODERN_ERRORS:
                    raise ProtocolVersionError(
                        f"the server refused server/discover: {exc}"
                    ) from exc
                await self._fall_back(client, session, f"it answered server/discover with {exc}")
                return
            except RequestTimeoutError:
                await self._fall_back(client, session, "it did not answer server/discover")
                return
            result = validator(spec.result_type)(raw)
            if version not in result.supportedVersions:
                version = self._choose(result.supportedVersions, None)
                bindings = Bindings.load(version, Direction.CLIENT_TO_SERVER)
                session.bindings = bindings
            peer = session.peer
            peer.era = "stateless"
            peer.revision = version
            peer.capabilities = dump(result.capabilities)
            server_meta = dump(result.meta) if result.meta is not None else {}
            peer.info = _implementation(bindings, server_meta.get(SERVER_INFO))
            peer.instructions = result.instructions
            peer.phase = "operating"
            return
        raise ProtocolVersionError("the server refused every protocol version offered")

    def _choose(self, offered: Any, error: McpError | None) -> str:
        """The newest stateless revision both sides have."""
        common = sorted(set(self.supported) & set(offered or ()))
        if not common:
            why = f" ({error})" if error is not None else ""
            raise ProtocolVersionError(
                f"the server supports {offered!r}, none of which this client speaks "
                f"statelessly ({', '.join(self.supported)}){why}"
            )
        return common[-1]

    async def _fall_back(self, client: Client, session: Session, why: str) -> None:
        if self.legacy is None:
            session.close(f"the server is not a stateless-era server: {why}")
            raise ProtocolVersionError(
                f"the server is not a stateless-era server ({why}) and this client has no "
                "handshake fallback; disconnected"
            )
        session.peer.era = _LEGACY
        await self.legacy.open(client, session)

    def prepare_request(
        self,
        client: Client,
        session: Session,
        spec: MethodSpec[Any, Any],
        params: dict[str, Any] | None,
    ) -> dict[str, Any] | None:
        if session.peer.era == _LEGACY and self.legacy is not None:
            return self.legacy.prepare_request(client, session, spec, params)
        if session.peer.phase != "operating":
            raise CapabilityError(f"{spec.method!r} sent before server/discover completed")
        check_sendable(session, spec, Direction.CLIENT_TO_SERVER)
        body = dict(params) if params else {}
        meta = dict(body.get("_meta") or {})
        for key, value in self.meta(client, session.bindings).items():
            meta.setdefault(key, value)
        body["_meta"] = meta
        return body

    async def finish_request(
        self,
        client: Client,
        session: Session,
        spec: MethodSpec[Any, Any],
        body: dict[str, Any] | None,
        raw: Any,
        options: RequestOptions | None,
    ) -> Any:
        rounds = 0
        while type(raw) is dict and raw.get("resultType") == _INPUT_REQUIRED:
            rounds += 1
            if rounds > self.max_input_rounds:
                raise InvalidResultError(
                    f"{spec.method} still required input after {self.max_input_rounds} rounds"
                )
            retry = dict(body) if body else {}
            requests = raw.get("inputRequests")
            if requests:
                if type(requests) is not dict:
                    raise InvalidResultError(f"{spec.method}: inputRequests is not an object")
                retry["inputResponses"] = {
                    key: await self._answer(client, session, spec, key, request)
                    for key, request in requests.items()
                }
            else:
                retry.pop("inputResponses", None)
            if "requestState" in raw:
                retry["requestState"] = raw["requestState"]
            else:
                retry.pop("requestState", None)
            raw = await session.request_raw(spec, retry, options)
        return raw

    async def _answer(
        self, client: Client, session: Session, spec: MethodSpec[Any, Any], key: str, request: Any
    ) -> Any:
        """One input request, answered by the client's handler for its method."""
        if type(request) is not dict or type(request.get("method")) is not str:
            raise InvalidResultError(f"{spec.method}: input request {key!r} is malformed")
        method: str = request["method"]
        params = request.get("params")
        route = client.find_route(session.bindings, method)
        if isinstance(route, McpError) or route.handler is None:
            raise CapabilityError(
                f"{spec.method}: the server asked for {method!r} ({key!r}), "
                "which this client has no handler for"
            )
        parsed = route.parse_params(params if type(params) is dict else None)
        meta = params.get("_meta") if type(params) is dict else None
        context = RequestContext(session, key, method, meta if type(meta) is dict else None, None)
        return route.dump_result(await route.handler(parsed, context))
