"""The public ``Client``: connect over a transport, negotiate, then call the typed stub."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, overload

import anyio
import anyio.abc
from mcpbind import generated
from mcpbind.generated.names import (
    META_SUBSCRIPTION_ID,
    NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
    PING,
    SUBSCRIPTIONS_LISTEN,
)
from mcpbind.generated.support import (
    Direction,
    MCPModel,
    MethodSpec,
    NotificationSpec,
    ProgressCallback,
    RequestOptions,
    Revision,
)
from mcpbind.runtime.core.bindings import Bindings, validator
from mcpbind.runtime.core.errors import (
    CapabilityError,
    ConnectionClosedError,
    McpError,
    ProtocolVersionError,
)
from mcpbind.runtime.core.outgoing import REQUEST_SENT
from mcpbind.runtime.core.routing import OutgoingCall
from mcpbind.runtime.core.session import Route, Session, SessionOptions
from mcpbind.runtime.core.transport import Connection, Envelope
from mcpbind.runtime.eras.lifecycle import ClientLifecycle, HandshakeClient
from mcpbind.runtime.eras.stateless_client import StatelessClient
from mcpbind.runtime.eras.subscriptions_client import ListenNotification, Subscription
from mcpbind.runtime.transports.stdio_client import StdioParameters
from pydantic import ValidationError
from typing_extensions import TypeVar as DefaultTypeVar

from ._client_calls import ClientCalls
from ._connect import InMemoryTarget, Target, transport_for
from .cache import ResponseCache
from .endpoint import Endpoint

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue
    from mcpbind.runtime.tasks import ExtensionTaskHandle, TaskHandle

__all__ = ["Client"]

P = TypeVar("P")
ResultT = TypeVar("ResultT")
StubT = TypeVar("StubT")
# The bound revision's classes; ``Any`` for a client bound to none (any revision, untyped).
ClientStubT = DefaultTypeVar("ClientStubT", covariant=True, default=Any)
ServerInfoT = DefaultTypeVar("ServerInfoT", covariant=True, default=Any)
ServerCapabilitiesT = DefaultTypeVar("ServerCapabilitiesT", covariant=True, default=Any)


class Client(
    Endpoint,
    ClientCalls[ClientStubT],
    Generic[ClientStubT, ServerInfoT, ServerCapabilitiesT],
):
    """An MCP client on one connection; use as ``async with Client(transport) as client``.

    ``transport`` is any transport (``stdio_client(...)``, ``server.memory_transport()``, an
    HTTP transport), or short for one: ``StdioParameters`` (``stdio_client(...)`` of them), an
    ``http(s)://`` URL (``streamable_http_client(url)``, with ``headers=`` and ``auth=``), or an
    ``App`` or ``Server`` (anything with ``memory_transport()``: in memory, in this process).
    Anything else is a ``TypeError``, a URL of another scheme a ``ValueError``.

    Entering opens the transport and runs the lifecycle (by default ``initialize`` offering
    ``protocol_version``, the newest handshake revision unless chosen). A stateless-era
    ``protocol_version`` such as ``"2026-07-28"`` probes with ``server/discover`` instead; a
    server that does not serve it raises ``ProtocolVersionError``, unless ``fallback=True``
    allows the handshake era (the handshake revisions of ``revisions``, default all) with a
    legacy server. ``client.revision`` tells which revision is in use. Then ``client.stub`` is
    the negotiated revision's generated ``ClientStub``.

    ``bindings=v2025_11_25.BINDINGS`` binds the client to one revision, for the type checker:
    the client is then a ``Client[ClientStub, Implementation, ServerCapabilities]`` of that
    revision, so ``client.stub``, ``list_all``, ``call_tool``, ``server_info`` and
    ``server_capabilities_model`` are all typed with its classes. It offers only that revision
    (``protocol_version`` and ``revisions`` default to it), and a session that ends up on
    another one is a ``ProtocolVersionError``. Unbound, the client speaks any revision and those
    are ``Any``; ``stub_as(v2025_11_25.client.ClientStub)`` still gives a typed stub after
    checking the revision. The client itself is a ``RequestSender``, so ``ClientStub(client)``
    of any revision works too. Handlers for what the
    server asks (sampling, roots, elicitation) are registered before entering, like a server's.
    In the stateless era ``client.listen(...)`` opens a ``subscriptions/listen`` subscription
    and yields its notifications.

    ``client.cache`` keeps the list pages and resource reads a 2026-07-28 server marks fresh
    (``ttlMs``) until they expire or a notification says they changed (``cache.py``);
    ``cache=False`` turns it off.
    """

    @overload
    def __init__(
        self,
        transport: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: Any = None,
        name: str = "mcpbind-client",
        version: str = "0.1.0",
        protocol_version: str | None = None,
        revisions: Sequence[str] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        options: SessionOptions | None = None,
        lifecycle: ClientLifecycle | None = None,
        fallback: bool = False,
        bindings: Revision[ClientStubT, Any, ServerInfoT, ServerCapabilitiesT] | None = None,
        cache: bool = True,
    ) -> None: ...

    @overload
    def __init__(
        self,
        transport: AbstractAsyncContextManager[Connection] | StdioParameters | InMemoryTarget,
        *,
        name: str = "mcpbind-client",
        version: str = "0.1.0",
        protocol_version: str | None = None,
        revisions: Sequence[str] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        options: SessionOptions | None = None,
        lifecycle: ClientLifecycle | None = None,
        fallback: bool = False,
        bindings: Revision[ClientStubT, Any, ServerInfoT, ServerCapabilitiesT] | None = None,
        cache: bool = True,
    ) -> None: ...

    def __init__(
        self,
        transport: Target,
        *,
        headers: Mapping[str, str] | None = None,
        auth: Any = None,
        name: str = "mcpbind-client",
        version: str = "0.1.0",
        protocol_version: str | None = None,
        revisions: Sequence[str] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        options: SessionOptions | None = None,
        lifecycle: ClientLifecycle | None = None,
        fallback: bool = False,
        bindings: Revision[ClientStubT, Any, ServerInfoT, ServerCapabilitiesT] | None = None,
        cache: bool = True,
    ) -> None:
        super().__init__(Direction.CLIENT_TO_SERVER, capabilities)
        self.info: dict[str, Any] = {"name": name, "version": version}
        self.bound = bindings
        if bindings is not None:
            protocol_version, revisions = _bound_offer(bindings, protocol_version, revisions)
            if fallback:
                raise ValueError(
                    f"a client bound to {bindings.name} cannot fall back to another revision; "
                    "leave out bindings= to allow fallback"
                )
        if lifecycle is None:
            if protocol_version is not None and generated.ERAS.get(protocol_version) == "stateless":
                modern = [r for r in revisions or () if generated.ERAS.get(r) == "stateless"]
                legacy = [r for r in revisions or () if generated.ERAS.get(r) == "handshake"]
                lifecycle = StatelessClient(
                    protocol_version,
                    sorted({protocol_version, *modern}),
                    legacy=HandshakeClient(None, legacy or None) if fallback else None,
                )
            else:
                lifecycle = HandshakeClient(protocol_version, revisions)
        self.lifecycle: ClientLifecycle = lifecycle
        self.options = options or SessionOptions()
        self._transport = transport_for(transport, headers, auth)
        #: The results the server marked fresh (2026-07-28 ``ttlMs``); ``cache=False``: none.
        self.cache = ResponseCache(cache)
        self._stack: AsyncExitStack | None = None
        self._session: Session | None = None
        self._stub: Any = None
        self._stub_revision: str | None = None
        self._subscriptions: dict[int | str, Subscription] = {}
        self._tg: anyio.abc.TaskGroup | None = None

    # -- connection -----------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            connection = await stack.enter_async_context(self._transport)
            tg = await stack.enter_async_context(anyio.create_task_group())
            self._tg = tg
            bindings = Bindings.load(self.lifecycle.protocol_version, Direction.CLIENT_TO_SERVER)
            session = self._new_session(Session(connection, bindings, self, self.options))
            self._session = session
            tg.start_soon(session.run)
            await session.wait_started()
            # Client is a ClientSide; pyright cannot bind list_tools's self type to Self.
            await self.lifecycle.open(self, session)  # pyright: ignore[reportArgumentType]
            self._check_bound(session)
        except BaseException:
            if self._session is not None:
                self._session.close("the client failed to connect")
            await stack.aclose()
            raise
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Disconnect: end the session, then let the transport shut down (stdio: stop the process)."""
        if self._session is not None:
            self._session.close("the client was closed")
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    @property
    def session(self) -> Session:
        """The running session; ``ConnectionClosedError`` before connecting."""
        if self._session is None:
            raise ConnectionClosedError("the client is not connected")
        return self._session

    # -- what was negotiated --------------------------------------------------------------

    @property
    def revision(self) -> str:
        """The negotiated protocol revision."""
        return self.session.bindings.revision

    @property
    def server_info(self) -> ServerInfoT:
        """The server's ``Implementation`` (name, version...), of the bound revision's class."""
        info: ServerInfoT = self.session.peer.info
        return info

    @property
    def server_capabilities(self) -> dict[str, Any]:
        """The server's capabilities, as JSON data."""
        return self.session.peer.capabilities

    @property
    def server_capabilities_model(self) -> ServerCapabilitiesT:
        """The server's capabilities as the negotiated revision's ``ServerCapabilities``."""
        bindings = self.session.bindings
        caps: ServerCapabilitiesT = validator(bindings.module.types.ServerCapabilities)(
            self.session.peer.capabilities
        )
        return caps

    @property
    def instructions(self) -> str | None:
        """The server's instructions, if it gave any."""
        return self.session.peer.instructions

    @property
    def stub(self) -> ClientStubT:
        """The negotiated revision's generated ``ClientStub``, bound to this client."""
        session = self.session
        if self._stub is None or self._stub_revision != session.bindings.revision:
            self._check_bound(session)
            bound = self.bound
            self._stub = session.bindings.stub(self) if bound is None else bound.client_stub(self)
            self._stub_revision = session.bindings.revision
        stub: ClientStubT = self._stub
        return stub

    def _check_bound(self, session: Session) -> None:
        """``ProtocolVersionError`` if the session is not on the revision this client is bound to."""
        bound = self.bound
        if bound is not None and session.bindings.revision != bound.name:
            raise ProtocolVersionError(
                f"this client is bound to revision {bound.name} (bindings=), but the session "
                f"speaks {session.bindings.revision}; bind the client to that revision's "
                "BINDINGS, or leave bindings= out to accept any revision"
            )

    def stub_as(self, cls: type[StubT]) -> StubT:
        """``cls(self)`` if ``cls`` is the negotiated revision's stub class; else ``TypeError``.

        ``client.stub_as(v2025_11_25.client.ClientStub).call_tool(...)`` is checked by mypy.
        """
        expected = self.session.bindings.module.client.ClientStub
        if cls is not expected:
            raise TypeError(
                f"{cls.__module__}.{cls.__qualname__} is not the stub of revision {self.revision}"
            )
        return cls(self)  # type: ignore[call-arg]

    def _running_sessions(self) -> list[Session]:
        return [self._session] if self._session is not None else []

    # -- RequestSender --------------------------------------------------------------------

    async def send_request(
        self,
        spec: MethodSpec[P, ResultT],
        params: P | dict[str, Any] | None,
        options: RequestOptions | None = None,
    ) -> ResultT:
        """Send a request (usually through a stub); see ``Session.send_request``.

        Typed by the spec: ``send_request(methods.TOOLS_CALL, params)`` takes that revision's
        ``CallToolRequestParams`` (or plain JSON data) and returns its ``CallToolResult``.

        In the stateless era a request refused for its headers (-32020) or its version
        (-32022) is sent once more after the lifecycle mended the cause (``recover``).
        """
        session = self.session
        body: MCPModel | dict[str, Any] | None = params  # type: ignore[assignment]
        key = self.cache.key(session.bindings.revision, spec.method, body)
        if key is None:
            return await self._send(session, spec, body, options)
        return await self.cache.fetch(key, lambda: self._send(session, spec, body, options))

    async def _send(
        self,
        session: Session,
        spec: MethodSpec[P, ResultT],
        body: MCPModel | dict[str, Any] | None,
        options: RequestOptions | None,
    ) -> ResultT:
        try:
            return await session.send_request(spec, body, options)
        except McpError as exc:
            self.cache.failed(spec.method, body, exc)
            lifecycle = self.lifecycle
            if not isinstance(lifecycle, StatelessClient) or not await lifecycle.recover(
                self,  # pyright: ignore[reportArgumentType]
                session,
                spec,
                exc,
            ):
                raise
        return await session.send_request(spec, body, options)

    async def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ttl: int | None = None,
        progress: ProgressCallback | None = None,
    ) -> TaskHandle[Any] | ExtensionTaskHandle:
        """Call tool ``name`` as a task (2025-11-25): the server answers at once with a task;
        ``await handle.result()`` is the ``CallToolResult`` once it is done (see ``tasks``).
        In the stateless era, through the 2026-07-28 tasks extension (``ExtensionTaskHandle``).
        """
        from mcpbind.runtime.tasks import call_tool_as_task  # the tasks machinery only when used

        return await call_tool_as_task(self, name, arguments, ttl=ttl, progress=progress)

    async def send_notification(self, spec: NotificationSpec[Any], params: MCPModel | None) -> None:
        """Send a notification (usually through a stub)."""
        await self.session.send_notification(spec, params)

    async def ping(self, timeout: float | None = None) -> None:
        """Send ``ping`` and wait for the answer."""
        options: RequestOptions = {"timeout": timeout} if timeout is not None else {}
        spec = self.session.bindings.methods.get(PING)
        if spec is None:
            raise CapabilityError(f"revision {self.revision} has no ping")
        await self.session.send_request(spec, None, options)

    # -- subscriptions/listen -------------------------------------------------------------

    @asynccontextmanager
    async def listen(
        self,
        *,
        tools_list_changed: bool = False,
        prompts_list_changed: bool = False,
        resources_list_changed: bool = False,
        resource_subscriptions: Sequence[str] = (),
        task_ids: Sequence[str] = (),
        meta: Mapping[str, Any] | None = None,
        ack_timeout: float = 30.0,
    ) -> AsyncGenerator[Subscription, None]:
        """Open a ``subscriptions/listen`` subscription; iterate it for its notifications.

        ``async with client.listen(tools_list_changed=True) as notifications: async for n in
        notifications: ...``. Entering returns once the server acknowledged (its agreed filter
        in ``acknowledged``, what it left out in ``refused``), or raises the error it answered
        instead; leaving cancels the subscription (HTTP: its stream is closed; stdio:
        ``notifications/cancelled``). Several may be open at once. ``task_ids`` asks for the
        tasks extension's ``notifications/tasks`` (``handle.watch()`` opens it for you, with
        the request's ``meta`` naming the extension).
        """
        session = self.session
        spec = session.bindings.methods.get(SUBSCRIPTIONS_LISTEN)
        tg = self._tg
        if spec is None or tg is None:
            raise CapabilityError(f"revision {self.revision} has no subscriptions/listen")
        wanted: dict[str, Any] = {
            "toolsListChanged": tools_list_changed,
            "promptsListChanged": prompts_list_changed,
            "resourcesListChanged": resources_list_changed,
            "resourceSubscriptions": list(resource_subscriptions),
            "taskIds": list(task_ids),
        }
        requested = {key: value for key, value in wanted.items() if value}
        subscription = Subscription(requested)
        scope = anyio.CancelScope()

        def sent(method: str, request_id: int | str) -> None:
            if method != SUBSCRIPTIONS_LISTEN:
                return
            if subscription.request_id is not None:
                # Sent again (a retry after -32022): the new id replaces the old one.
                self._subscriptions.pop(subscription.request_id, None)
            subscription.request_id = request_id
            self._subscriptions[request_id] = subscription

        async def run() -> None:
            REQUEST_SENT.set(sent)  # this task's own context: only its requests are noted
            with scope:
                try:
                    params: dict[str, Any] = {"notifications": requested}
                    if meta:
                        params["_meta"] = dict(meta)
                    await self.send_request(spec, params, {"timeout": None})
                except Exception as exc:
                    subscription.end(exc)
                    return
                subscription.end(None)

        try:
            tg.start_soon(run)
            with anyio.fail_after(ack_timeout):
                await subscription.ready.wait()
            if not subscription.acknowledged_at_all and subscription.error is not None:
                raise subscription.error
            yield subscription
        finally:
            scope.cancel()
            if subscription.request_id is not None:
                self._subscriptions.pop(subscription.request_id, None)
            subscription.close()

    # -- Router ---------------------------------------------------------------------------

    def route_request(
        self, session: Session, method: str, params: dict[str, Any] | None
    ) -> Route | McpError:
        if method == PING and PING in session.bindings.methods:
            return Route(None, immediate={})
        route = self.find_route(session.bindings, method)
        if isinstance(route, Route):
            if self.tasks is not None:
                return self.tasks.route(session, method, params, route)
            return self.untasked(session.bindings, method, params, route)
        return route

    def route_notification(
        self, session: Session, method: str, params: dict[str, Any] | None, envelope: Envelope
    ) -> Callable[[], Awaitable[None]] | None:
        self.cache.notified(method, params)
        if self._subscriptions and params is not None:
            meta: JsonValue = params.get("_meta")
            key = meta.get(META_SUBSCRIPTION_ID) if type(meta) is dict else None
            subscription = self._subscriptions.get(key) if key is not None else None
            if subscription is not None:
                if method == NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED:
                    subscription.acknowledge(params)
                    return None
                subscription.deliver(ListenNotification(method, self._typed(method, params)))
        return self.find_notification(session, method, params, envelope)

    def _typed(self, method: str, params: dict[str, Any]) -> Any:
        spec = self.session.bindings.notifications.get(method)
        if spec is None or spec.params_type is None:
            return params
        try:
            return validator(spec.params_type)(params)
        except ValidationError:
            return params

    def prepare_call(self, call: OutgoingCall) -> None:
        self.lifecycle.prepare_call(self, call)  # pyright: ignore[reportArgumentType]

    async def finish_call(self, call: OutgoingCall) -> Any:
        return await self.lifecycle.finish_call(self, call)  # pyright: ignore[reportArgumentType]


def _bound_offer(
    bindings: Revision[Any, Any, Any, Any],
    protocol_version: str | None,
    revisions: Sequence[str] | None,
) -> tuple[str, list[str]]:
    """What a client bound to ``bindings`` offers: that revision only, unless told otherwise in a
    way that still includes it (then a session on another one fails at connect)."""
    if protocol_version is not None and protocol_version != bindings.name:
        raise ValueError(
            f"protocol_version={protocol_version!r} contradicts bindings= of revision {bindings.name}"
        )
    if revisions is not None and bindings.name not in revisions:
        raise ValueError(
            f"revisions={list(revisions)!r} leave out the bound revision {bindings.name}"
        )
    return bindings.name, list(revisions) if revisions is not None else [bindings.name]
