"""What a session asks of its owner and what it is tuned by: the per-request ``Route``, the
``OutgoingCall`` of each request it sends, the ``Router`` protocol the ``Client`` and ``Server``
implement, ``PeerState`` and ``SessionOptions``.

Kept apart from the session so lifecycles and transports can name these without the session's
machinery.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast

from mcpbind.generated.support import MethodSpec, RequestOptions

from .bindings import dump, dumper, is_model, validator
from .budget import MemoryBudget
from .errors import INVALID_PARAMS, McpError
from .transport import Envelope

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .context import RequestContext
    from .jsonvalue import JsonValue
    from .session import Session

__all__ = [
    "BuiltResult",
    "Handler",
    "OutgoingCall",
    "PeerState",
    "ResultCheck",
    "Route",
    "Router",
    "SessionOptions",
]

#: The results a stamp completes: those that say nothing of their kind, or that they are
#: complete (an ``input_required`` one has other members, and none of the cache fields).
_STAMPED = frozenset({None, "complete"})


@dataclass
class SessionOptions:
    """Tunables of a session; the defaults suit an interactive client or a local server.

    ``request_timeout`` is the default per-request timeout (``None``: wait forever), restarted
    by each progress notification; ``max_request_timeout`` caps a request's total time however
    much progress it reports.

    Incoming requests (see ``_admission.py``): ``max_concurrent_handlers`` run at once, plus up
    to ``spare_handlers`` more, each for a request whose method has none running (so a flood of
    slow ``tools/call`` never holds up ``tools/list``). Others wait in a queue and start first
    in, first out as handlers finish. Requests running or waiting are bounded by count
    (``max_pending_requests``) and by their size in JSON bytes (``max_pending_bytes``); past
    either bound a request is answered at once with a busy error (-31503), as it is beyond the
    process's ``memory_budget`` (``budget.py``; ``None``: ``process_budget()``, shared by every
    session and transport of the process, 256 MiB unless changed). The session never
    stops reading for requests, so ``ping``, cancellations and responses are always served;
    nor for notifications: at most ``max_pending_requests`` of their handlers run at once, and
    one arriving past that bound is dropped with a (rate-limited) warning.
    ``keepalive_interval`` enables pings; one unanswered within ``keepalive_timeout`` ends the
    session. ``drain_timeout`` is how long running handlers may finish after the input ends;
    queued requests, and those still running then, are answered with an error (-31503).
    """

    request_timeout: float | None = 60.0
    max_request_timeout: float | None = 600.0
    max_concurrent_handlers: int = 64
    spare_handlers: int = 16
    max_pending_requests: int = 4096
    max_pending_bytes: int = 32 * 1024 * 1024
    keepalive_interval: float | None = None
    keepalive_timeout: float = 10.0
    drain_timeout: float = 0.1
    memory_budget: MemoryBudget | None = None


@dataclass
class PeerState:
    """What the lifecycle learned about the other side, and how far the lifecycle got.

    ``capabilities`` is the peer's capability object as plain JSON data, which is what the
    dotted capability paths of the generated specs are checked against.
    """

    revision: str | None = None
    era: str | None = None
    info: Any = None
    capabilities: dict[str, Any] = field(default_factory=lambda: {})
    instructions: str | None = None
    phase: str = "new"


Handler = Callable[[Any, "RequestContext"], Awaitable[Any]]


class BuiltResult(dict[str, Any]):
    """A result its handler built, as JSON data, from values it had validated itself: a
    complete result of class ``kind()`` (asked only by a cross-era check: a plain result need
    not create its class), its members (and each content block's) in the order the class's
    serializer writes them. The session serves it as it is, where a plain dict is validated
    into its class and dumped again, which would check nothing new (the app layer's
    ``tools/call`` answers to a ``str`` or typed return). Anything else, or one a middleware
    saw (``endpoints.middleware`` hands on a plain copy), is validated as before.
    """

    __slots__ = ("kind",)

    def __init__(self, kind: Callable[[], type[Any]], data: dict[str, Any]) -> None:
        super().__init__(data)
        self.kind = kind


class ResultCheck(Protocol):
    """What a route's ``check`` is (``eras.crossera.cross_era_check``)."""

    def __call__(self, kind: Any, data: Any, params: dict[str, Any] | None) -> None:
        """Raise the ``ValidationError`` of ``data`` (a result dumped from an instance of class
        ``kind``, then stamped) if it is invalid where it is served."""
        ...


@dataclass(slots=True)
class Route:
    """How to answer one incoming request: the handler and the spec that types it.

    ``immediate`` short-cuts the handler: the session answers with it from the reading task,
    which keeps ``ping`` answerable however busy the handlers are. ``inline`` runs the handler
    in the reading task, so nothing read after the request is handled before it (for
    ``initialize``, which must take effect before the requests that follow it). ``stamp`` holds
    members a complete result gets when its handler left them out (the stateless era's
    ``resultType``);
    ``check`` is set when the handler was written for another revision than the one served:
    its results must be valid under both, and ``check`` (``ResultCheck``) raises the
    ``ValidationError`` of one that is not.
    """

    spec: MethodSpec[Any, Any] | None
    handler: Handler | None = None
    immediate: dict[str, Any] | None = None
    inline: bool = False
    stamp: dict[str, Any] | None = None
    check: ResultCheck | None = None

    def parse_params(self, raw: dict[str, Any] | None) -> Any:
        """Validate params with the generated class; a missing optional params object becomes
        the class's empty instance, so handlers never see None."""
        spec = self.spec
        if spec is None or spec.params_type is None:
            return raw
        if raw is None:
            if spec.params_required:
                raise McpError(INVALID_PARAMS, f"{spec.method} requires params")
            raw = {}
        return validator(spec.params_type)(raw)

    def dump_result(
        self, result: JsonValue | BaseModel, params: dict[str, Any] | None = None
    ) -> Any:
        """A handler's return value as JSON data, validated if it was not already a model or
        a ``BuiltResult`` of the class it must be.

        ``params`` are the request's raw params: when they carry ``task`` and the method may be
        task-augmented, the handler answers with the task it created (``task_result_type``).
        """
        kind: Any = type(result)
        data: JsonValue | BaseModel
        if kind is BuiltResult and (
            self.spec is None
            or params is None
            or "task" not in params
            or self.spec.task_result_type is None  # else its result is the task (below)
        ):
            built = cast("BuiltResult", result)
            data = dict(built)
            kind = built.kind() if self.check is not None else None
        elif is_model(kind):
            data = dumper(kind)(result)
        elif self.spec is not None:
            if result is None:
                result = {}
            elif kind is BuiltResult:  # a task-augmented request's: its result is the task
                result = dict(cast("BuiltResult", result))
            if self.stamp is not None and type(result) is dict and "resultType" not in result:
                # A plain dict may leave out what the served revision requires and the runtime
                # knows (a complete result's ``resultType``): stamped before it is validated.
                result = {**self.stamp, **result}
            model: Any = validator(_result_type(self.spec, params))(result)
            kind = model.__class__
            data = dump(model)
        else:
            data = result
        if self.stamp is not None and type(data) is dict and data.get("resultType") in _STAMPED:
            for key, value in self.stamp.items():
                data.setdefault(key, value)
        if self.check is not None:
            self.check(kind, data, params)
        return data


def _result_type(spec: MethodSpec[Any, Any], params: dict[str, Any] | None) -> Any:
    """What a request's result must be: its task form's when its params carry ``task``.

    ``task`` is looked for first: reading ``task_result_type`` defines its class (and ``Task``),
    which a server that is never asked for a task need not hold."""
    if params is not None and "task" in params and spec.task_result_type is not None:
        return spec.task_result_type
    return spec.result_type


@dataclass(slots=True)
class OutgoingCall:
    """One request this side sends, made once by ``Session.send_request`` and handed whole to
    its owner and lifecycle: checked and completed before it goes (``body`` may be replaced),
    then finished once ``raw``, the peer's first answer, is in (the stateless era may answer
    with a request for input, and need more rounds)."""

    # Slotted, and no more than these: one of these is made for every request sent.
    session: Session
    spec: MethodSpec[Any, Any]
    body: dict[str, Any] | None
    options: RequestOptions | None
    raw: Any = None


class Router(Protocol):
    """What a session asks its owner (client or server, with its lifecycle)."""

    def route_request(
        self, session: Session, method: str, params: dict[str, Any] | None
    ) -> Route | McpError:
        """The route of an incoming request, or the error to answer it with."""
        ...

    def route_notification(
        self, session: Session, method: str, params: dict[str, Any] | None, envelope: Envelope
    ) -> Callable[[], Awaitable[None]] | None:
        """Act on an incoming notification; return work to run in its own task, if any."""
        ...

    def prepare_call(self, call: OutgoingCall) -> None:
        """Refuse (raise) a request the peer cannot take, or replace ``call.body`` before sending."""
        ...

    async def finish_call(self, call: OutgoingCall) -> Any:
        """The final raw result of a request we sent, given its first one (``call.raw``, which
        may, in the stateless era, ask for input and need a retry)."""
        ...
