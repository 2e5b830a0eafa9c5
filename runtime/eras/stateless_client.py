"""The client side of the stateless era (2026-07-28 and later): probe, per-request ``_meta``,
and multi round-trip requests answered with the client's own handlers.

See ``_stateless.py`` for the era's rules and the server side.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from mcpbind.generated.names import SERVER_DISCOVER, TOOLS_CALL, TOOLS_LIST
from mcpbind.generated.support import Direction, MethodSpec, RequestOptions
from mcpbind.runtime.core.bindings import Bindings, dump, validator
from mcpbind.runtime.core.errors import (
    HEADER_MISMATCH,
    HTTP_STATUS,
    CapabilityError,
    InvalidResultError,
    McpError,
    ProtocolVersionError,
    RequestTimeoutError,
)
from mcpbind.runtime.core.request_headers import REQUEST_HEADERS, HeaderHook, ToolHeaders
from mcpbind.runtime.core.revisions import MODERN_ERRORS
from mcpbind.runtime.core.routing import OutgoingCall
from mcpbind.runtime.core.session import RequestContext, Session

from .input_required import INPUT_REQUIRED
from .lifecycle import ClientSide, HandshakeClient, check_sendable, era_revisions
from .stateless import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    COMPLETE,
    LEGACY,
    PROTOCOL_VERSION,
    SERVER_INFO,
    UNSUPPORTED_PROTOCOL_VERSION,
    implementation,
)

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = ["StatelessClient"]

logger = logging.getLogger("mcpbind.runtime")


def _legacy_sign(error: McpError) -> bool:
    """Whether a non-modern error to the probe shows a legacy server, rather than a failure.

    Any error the server sent does (``stdio.md``). One an HTTP transport made up (its data
    has ``HTTP_STATUS``) does only if the server refused the POST with 400, 404 or 405
    (``streamable-http.md``, "Backward Compatibility"): not another status (401 asks for
    credentials), nor an exchange that failed without one (the server may be down).
    """
    data: JsonValue = error.data
    if not isinstance(data, dict) or HTTP_STATUS not in data:
        return True
    return data[HTTP_STATUS] in (400, 404, 405)


class StatelessClient:
    """Speaks a stateless-era revision; with ``legacy``, falls back to the handshake.

    ``open`` probes with ``server/discover`` (``transports/stdio.md``, "Backward
    Compatibility"): a ``DiscoverResult`` or a modern error means a modern server (an
    ``UnsupportedProtocolVersionError`` is retried once with a version from its list); any
    other error the server sent, an HTTP refusal with 400, 404 or 405 (``_legacy_sign``), or
    no answer within ``probe_timeout`` seconds means a legacy server, served by ``legacy`` if
    given, else refused with ``ProtocolVersionError``. Every request then gets
    the per-request ``_meta`` fields, and an ``InputRequiredResult`` is answered with the
    client's own handlers (sampling, elicitation, roots) and retried, at most
    ``max_input_rounds`` times. A result without ``resultType`` is complete.

    Over Streamable HTTP (the transport offers a ``HeaderHook``) the client also keeps the
    ``x-mcp-header`` annotations of the tools ``tools/list`` returned (``ToolHeaders``), leaves
    out the tools whose annotations are invalid, and gives the transport each ``tools/call``'s
    ``Mcp-Param-*`` headers; ``recover`` retries a call the server refused for its headers
    (after refreshing ``tools/list``) or for its version (with one from the server's list).
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
        self.tool_headers = ToolHeaders()
        self.on_http = False
        self._meta: dict[str, Any] = {}
        self._meta_key: tuple[Any, ...] | None = None

    def meta(self, client: ClientSide, bindings: Bindings) -> dict[str, Any]:
        """The per-request ``_meta`` fields this client sends under ``bindings``.

        Kept between requests while what they derive from is unchanged (the revision, the
        client's ``capabilities_version``, which moves when a handler is registered or its
        capabilities are written, and its info): a few lookups instead of working them out.
        """
        key = (bindings.revision, client.capabilities_version, id(client.info))
        if self._meta_key != key:
            self._meta = {
                PROTOCOL_VERSION: bindings.revision,
                CLIENT_CAPABILITIES: client.capabilities_for(bindings),
                CLIENT_INFO: client.info,
            }
            self._meta_key = key
        return self._meta

    async def open(self, client: ClientSide, session: Session) -> None:
        hook = session.connection.extra.get(REQUEST_HEADERS)
        self.tool_headers = ToolHeaders()
        self.on_http = isinstance(hook, HeaderHook)
        if isinstance(hook, HeaderHook):
            hook.provider = self.tool_headers.headers_for
        version = self.protocol_version
        for attempt in range(2):
            bindings = Bindings.load(version, Direction.CLIENT_TO_SERVER)
            session.bindings = bindings
            spec = bindings.methods[SERVER_DISCOVER]
            options: RequestOptions = {"timeout": self.probe_timeout}
            try:
                raw = await session.send_request_raw(
                    spec, {"_meta": self.meta(client, bindings)}, options
                )
            except McpError as exc:
                if exc.code == UNSUPPORTED_PROTOCOL_VERSION and attempt == 0:
                    given: JsonValue = exc.data
                    data: dict[str, Any] = given if isinstance(given, dict) else {}
                    offered = data.get("supported")
                    if self._handshake_only(offered):
                        await self._fall_back(
                            client, session, f"it serves only handshake revisions ({offered})"
                        )
                        return
                    version = self._choose(offered, exc)
                    continue
                if exc.code in MODERN_ERRORS:
                    raise ProtocolVersionError(
                        f"the server refused server/discover: {exc}"
                    ) from exc
                if not _legacy_sign(exc):
                    raise
                await self._fall_back(client, session, f"it answered server/discover with {exc}")
                return
            except RequestTimeoutError:
                await self._fall_back(client, session, "it did not answer server/discover")
                return
            result = validator(spec.result_type)(self._complete(spec, raw))
            if version not in result.supportedVersions:
                if self._handshake_only(list(result.supportedVersions)):
                    await self._fall_back(
                        client, session, f"it serves {result.supportedVersions} statelessly"
                    )
                    return
                version = self._choose(result.supportedVersions, None)
                bindings = Bindings.load(version, Direction.CLIENT_TO_SERVER)
                session.bindings = bindings
            peer = session.peer
            peer.era = "stateless"
            peer.revision = version
            peer.capabilities = dump(result.capabilities)
            server_meta: dict[str, Any] = dump(result.meta) if result.meta is not None else {}
            peer.info = implementation(bindings, server_meta.get(SERVER_INFO))
            peer.instructions = result.instructions
            peer.phase = "operating"
            return
        raise ProtocolVersionError("the server refused every protocol version offered")

    def _handshake_only(self, offered: JsonValue) -> bool:
        """True if ``offered`` shares no stateless revision with us but a handshake one with
        ``legacy``: a dual-era server that lacks our era, served by falling back."""
        if self.legacy is None or type(offered) is not list:
            return False
        return not set(self.supported) & set(offered) and bool(
            set(self.legacy.supported) & set(offered)
        )

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

    async def _fall_back(self, client: ClientSide, session: Session, why: str) -> None:
        if self.legacy is None:
            session.close(f"the server is not a stateless-era server: {why}")
            raise ProtocolVersionError(
                f"the server is not a stateless-era server ({why}) and this client has no "
                "handshake fallback; disconnected"
            )
        session.peer.era = LEGACY
        await self.legacy.open(client, session)
        logger.info(
            "the server is not a stateless-era server (%s): fell back to the handshake, "
            "revision %s",
            why,
            session.bindings.revision,
        )

    async def recover(
        self, client: ClientSide, session: Session, spec: MethodSpec[Any, Any], error: McpError
    ) -> bool:
        """Whether to send a refused request once more, after mending what made it fail.

        -32020 on ``tools/call``: the tool's ``x-mcp-header`` annotations may have changed, so
        ``tools/list`` is fetched again (``streamable-http.md``, "Client Behavior"). -32022: the
        server lacks this version; switch to the newest one both sides have (versioning.md).
        """
        if session.peer.era == LEGACY:
            return False
        if error.code == HEADER_MISMATCH and spec.method == TOOLS_CALL and self.on_http:
            await client.list_tools()
            return True
        if error.code == UNSUPPORTED_PROTOCOL_VERSION:
            given: JsonValue = error.data
            data: dict[str, Any] = given if isinstance(given, dict) else {}
            version = self._choose(data.get("supported"), error)
            if version != session.bindings.revision:
                session.bindings = Bindings.load(version, Direction.CLIENT_TO_SERVER)
                session.peer.revision = version
            return True
        return False

    def prepare_call(self, client: ClientSide, call: OutgoingCall) -> None:
        session = call.session
        if session.peer.era == LEGACY and self.legacy is not None:
            self.legacy.prepare_call(client, call)
            return
        if session.peer.phase != "operating":
            raise CapabilityError(f"{call.spec.method!r} sent before server/discover completed")
        check_sendable(session, call.spec, Direction.CLIENT_TO_SERVER)
        body = dict(call.body) if call.body else {}
        given = body.get("_meta")
        meta = dict(self.meta(client, session.bindings))
        if given:
            meta.update(given)  # the caller's own values win
        body["_meta"] = meta
        call.body = body

    async def send(self, client: ClientSide, call: OutgoingCall) -> Any:
        """Send ``call`` as ``Session.send_request`` does (prepared, sent, its input rounds
        answered), short of validating the final raw result it returns: for a caller whose
        answer may take another form (the tasks extension's ``tools/call``: a task). One
        request to the outgoing middleware (``send_request_raw``), its rounds included."""

        async def whole(body: dict[str, Any] | None) -> Any:
            call.body = body
            self.prepare_call(client, call)
            call.raw = await call.session.request_raw(call.spec, call.body, call.options)
            return await self.finish_call(client, call)

        return await call.session.send_request_raw(call.spec, call.body, call.options, whole)

    async def finish_call(self, client: ClientSide, call: OutgoingCall) -> Any:
        spec, body = call.spec, call.body
        rounds = 0
        raw: JsonValue = self._complete(spec, call.raw)
        while type(raw) is dict and raw.get("resultType") == INPUT_REQUIRED:
            rounds += 1
            if rounds > self.max_input_rounds:
                raise InvalidResultError(
                    f"{spec.method} still required input after {self.max_input_rounds} rounds"
                )
            retry: dict[str, Any] = dict(body) if body else {}
            requests = raw.get("inputRequests")
            if requests:
                retry["inputResponses"] = await self.answer_input(
                    client, call.session, spec.method, requests
                )
            else:
                retry.pop("inputResponses", None)
            if "requestState" in raw:
                retry["requestState"] = raw["requestState"]
            else:
                retry.pop("requestState", None)
            raw = self._complete(spec, await call.session.request_raw(spec, retry, call.options))
        return raw

    def _complete(self, spec: MethodSpec[Any, Any], raw: JsonValue) -> Any:
        """``raw`` with the absent ``resultType`` that means complete (``mrtr.md``), and, over
        HTTP, a ``tools/list`` page without the tools whose ``x-mcp-header`` is invalid."""
        if type(raw) is not dict:
            return raw
        if "resultType" not in raw:
            raw = {**raw, "resultType": COMPLETE}
        if self.on_http and spec.method == TOOLS_LIST:
            raw = self.tool_headers.learn(raw)
        return raw

    async def answer_input(
        self,
        client: ClientSide,
        session: Session,
        method: str,
        requests: object,
    ) -> dict[str, Any]:
        """The ``inputResponses`` to a result's (or a task's) ``inputRequests`` of a request
        for ``method``: each answered by the client's own handler for the method it names."""
        if type(requests) is not dict:
            raise InvalidResultError(f"{method}: inputRequests is not an object")
        asked = cast("dict[str, Any]", requests)  # a JSON object: its keys are strings
        return {
            key: await self._answer(client, session, method, key, request)
            for key, request in asked.items()
        }

    async def _answer(
        self, client: ClientSide, session: Session, asking: str, key: str, request: JsonValue
    ) -> Any:
        """One input request, answered by the client's handler for its method."""
        if type(request) is not dict or type(request.get("method")) is not str:
            raise InvalidResultError(f"{asking}: input request {key!r} is malformed")
        method: str = request["method"]
        params: JsonValue = request.get("params")
        route = client.find_route(session.bindings, method)
        if isinstance(route, McpError) or route.handler is None:
            raise CapabilityError(
                f"{asking}: the server asked for {method!r} ({key!r}), "
                "which this client has no handler for"
            )
        parsed = route.parse_params(params if type(params) is dict else None)
        meta: JsonValue = params.get("_meta") if type(params) is dict else None
        context = RequestContext(session, key, method, meta if type(meta) is dict else None, None)
        return route.dump_result(await route.handler(parsed, context))
