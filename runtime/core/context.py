"""What a request handler gets besides its params: the ``RequestContext``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, Protocol

from mcpbind.generated.names import NOTIFICATIONS_PROGRESS
from mcpbind.generated.support import (
    MCPModel,
    MethodSpec,
    NotificationSpec,
    RequestOptions,
    RequestSender,
)
from typing_extensions import TypeVar

from . import jsonrpc as rpc
from .access_token import AccessToken
from .bindings import Bindings

if TYPE_CHECKING:
    from .session import Session

__all__ = ["RelatedSender", "RequestContext", "Rounds"]

ResultT = TypeVar("ResultT")
StubT = TypeVar("StubT")
PeerT = TypeVar("PeerT", covariant=True, default=Any)
LifespanT = TypeVar("LifespanT", covariant=True, default=Any)
RequestId = int | str


class Rounds(Protocol):
    """A stateless-era request's input rounds, as the context uses them (``eras.input_required``
    has the implementation): the revision's bindings, the sender ``peer`` calls go through, and
    ``ask``, which the tasks extension's sender calls directly."""

    bindings: Bindings

    def sender(self, context: RequestContext[Any], key: str | None = None) -> RequestSender: ...

    def ask(
        self,
        spec: MethodSpec[Any, Any],
        params: MCPModel | dict[str, Any] | None,
        key: str | None = None,
    ) -> Any: ...


class RequestContext(Generic[PeerT, LifespanT]):
    """What a handler gets besides its params: who asked, and how to talk back.

    ``peer`` is the generated stub for calling the other side (``ServerStub`` in a server, so a
    tool can ``await context.peer.create_message(...)``); messages sent through it are tagged as
    belonging to this request. The type parameter says which stub that is, for the type checker:
    a handler annotated ``context: RequestContext[v2025_11_25.client.ServerStub]`` has every call
    through ``context.peer`` checked (plain ``RequestContext`` is ``RequestContext[Any]``, as
    before). The annotation is the handler's promise about the revisions it serves; ``peer_as``
    checks the same at run time. In the stateless era a server's requests travel as input requests
    of a multi round-trip request instead (``rounds``, see ``_input.py``); ``peer`` is then the
    revision's ``InputRequestStub`` (its ``ServerStub`` has no requests), whose calls become input
    requests: the same call works in both eras. ``transport_context`` is the transport's
    per-message slot. The second type parameter is the type of ``lifespan_context``, what the
    server's lifespan yielded (``RequestContext[Any, AppState]``).
    """

    __slots__ = (
        "_peer",
        "meta",
        "method",
        "request_id",
        "rounds",
        "session",
        "transport_context",
    )

    def __init__(
        self,
        session: Session,
        request_id: RequestId,
        method: str,
        meta: dict[str, Any] | None,
        transport_context: Any,
    ) -> None:
        self.session = session
        self.request_id = request_id
        self.method = method
        self.meta = meta
        self.transport_context = transport_context
        self.rounds: Rounds | None = None
        self._peer: Any = None

    @property
    def auth(self) -> AccessToken | None:
        """Who the request's OAuth access token speaks for (subject, client, scopes), on an
        HTTP server protected by a ``ResourceServer``; ``None`` elsewhere. Checked on every
        HTTP request, so in both eras it is the token of the POST that carried this request."""
        token: AccessToken | None = getattr(self.transport_context, "auth", None)
        return token

    @property
    def lifespan_context(self) -> LifespanT:
        """What the server's lifespan yielded (``Server(..., lifespan=...)``); None for a
        server without one. Read from the session's router, the ``Server``."""
        value: Any = getattr(self.session.router, "lifespan_context", None)
        typed: LifespanT = value
        return typed

    @property
    def progress_token(self) -> int | str | None:
        """The token the caller asked progress for, if it did."""
        token = self.meta.get("progressToken") if self.meta else None
        return token if rpc.is_request_id(token) else None

    @property
    def peer(self) -> PeerT:
        """The negotiated revision's stub for the other side, bound to this request."""
        if self._peer is None:
            rounds = self.rounds
            if rounds is not None:
                self._peer = rounds.bindings.stub(rounds.sender(self))
            else:
                self._peer = self.session.bindings.stub(
                    RelatedSender(self.session, self.request_id)
                )
        peer: PeerT = self._peer
        return peer

    def asking(self, key: str) -> PeerT:
        """``peer``, for calls whose input request should be called ``key`` in the stateless era
        (``await context.asking("user_name").elicit(...)``); by default a request is named
        after its method and rank (``elicitation/create#1``). The same stub in the handshake era.
        """
        rounds = self.rounds
        if rounds is None:
            return self.peer
        peer: PeerT = rounds.bindings.stub(rounds.sender(self, key))
        return peer

    def peer_as(self, cls: type[StubT]) -> StubT:
        """``peer``, typed: ``cls`` must be the negotiated revision's stub for the other side;
        in the stateless era it may also be another revision's (a handler written for 2025-11-25
        serving a 2026-07-28 client), whose calls then become input requests all the same.

        ``context.peer_as(v2025_11_25.client.ServerStub).create_message(...)`` is checked by mypy.
        """
        peer = self.peer
        if isinstance(peer, cls):
            return peer
        sender = getattr(peer, "_sender", None)
        if (
            self.rounds is not None
            and sender is not None
            and cls.__qualname__ in (type(peer).__qualname__, "ServerStub")
            and cls.__module__.startswith("mcpbind.generated.")
            and cls.__module__.endswith(".client")
        ):
            return cls(sender)  # type: ignore[call-arg]
        bindings = self.rounds.bindings if self.rounds is not None else self.session.bindings
        raise TypeError(
            f"{cls.__module__}.{cls.__qualname__} is not the peer stub of revision "
            f"{bindings.revision}"
        )

    @property
    def progress_related_id(self) -> RequestId | None:
        """The request progress travels with (the transport routes it to that request's
        stream); a task's context has none, its request being answered long ago."""
        return self.request_id

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` if the caller asked for it; a no-op otherwise."""
        token = self.progress_token
        if token is None:
            return
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.session.send_raw(
            {"jsonrpc": "2.0", "method": NOTIFICATIONS_PROGRESS, "params": params},
            self.progress_related_id,
        )

    async def send_notification(self, spec: NotificationSpec[Any], params: MCPModel | None) -> None:
        """Send a notification tagged as belonging to this request (e.g. a log message)."""
        await self.session.send_notification(spec, params, related_id=self.request_id)


class RelatedSender:
    """A ``RequestSender`` that tags what it sends with the request being handled."""

    __slots__ = ("_request_id", "_session")

    def __init__(self, session: Session, request_id: RequestId) -> None:
        self._session = session
        self._request_id = request_id

    async def send_request(
        self,
        spec: MethodSpec[Any, ResultT],
        params: MCPModel | None,
        options: RequestOptions | None = None,
    ) -> ResultT:
        return await self._session.send_request(spec, params, options, related_id=self._request_id)

    async def send_notification(self, spec: NotificationSpec[Any], params: MCPModel | None) -> None:
        await self._session.send_notification(spec, params, related_id=self._request_id)
