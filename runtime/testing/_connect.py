"""``connect(app)``: a client connected to an ``App`` or ``Server`` in memory, for tests.

With ``raise_exceptions`` (the default) the app hands a tool's unexpected exception to this
client instead of answering ``isError``: the call that ran the tool raises that very exception
(its traceback starts in the test and goes down into the tool), so a bug fails the test where
it is. A ``Server``'s handlers have no such answer to hide behind: an exception in one already
fails the call, as ``McpError`` -32603 (its traceback is in the log pytest shows).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, TypeGuard, TypeVar

from mcpbind.generated.support import MethodSpec, RequestOptions, Revision
from mcpbind.runtime.app import App
from mcpbind.runtime.core.errors import McpError
from mcpbind.runtime.core.outgoing import REQUEST_SENT, RequestId
from mcpbind.runtime.core.session import RequestContext
from mcpbind.runtime.endpoints.client import Client
from typing_extensions import TypeVar as DefaultTypeVar

__all__ = ["connect"]

P = TypeVar("P")
ResultT = TypeVar("ResultT")
StubT = DefaultTypeVar("StubT", default=Any)
InfoT = DefaultTypeVar("InfoT", default=Any)
CapsT = DefaultTypeVar("CapsT", default=Any)


class _Failures:
    """The exceptions the app's tools raised, by the id of the request that ran each, until the
    call that sent that request raises it."""

    def __init__(self) -> None:
        self.pending: dict[RequestId, Exception] = {}

    def __call__(self, exc: Exception, request_id: RequestId) -> None:
        self.pending[request_id] = exc

    def raise_for(self, sent: list[RequestId]) -> None:
        for request_id in sent:
            exc = self.pending.pop(request_id, None)
            if exc is not None:
                raise exc from None

    def raise_any(self) -> None:
        if self.pending:
            raise self.pending.pop(next(iter(self.pending))) from None


class _RaisingClient(Client[StubT, InfoT, CapsT]):
    """A client whose calls raise the exception a tool raised for them (by request id: with
    calls in flight at once, each raises its own)."""

    failures: _Failures

    async def send_request(
        self,
        spec: MethodSpec[P, ResultT],
        params: P | dict[str, Any] | None,
        options: RequestOptions | None = None,
    ) -> ResultT:
        sent: list[RequestId] = []
        outer = REQUEST_SENT.get()

        def note(method: str, request_id: RequestId) -> None:
            sent.append(request_id)
            if outer is not None:
                outer(method, request_id)

        token = REQUEST_SENT.set(note)
        try:
            result = await super().send_request(spec, params, options)
        except McpError:
            self.failures.raise_for(sent)
            raise
        finally:
            REQUEST_SENT.reset(token)
        self.failures.raise_for(sent)
        return result


def _is_app(target: object) -> TypeGuard[App[Any]]:
    """An ``App`` (whose tools' exceptions ``connect`` can catch), of whatever lifespan."""
    return isinstance(target, App)


@asynccontextmanager
async def connect(
    target: Any,
    *,
    protocol_version: str | None = None,
    bindings: Revision[StubT, Any, InfoT, CapsT] | None = None,
    raise_exceptions: bool = True,
    cache: bool = True,
    name: str = "mcpbind-test-client",
    handlers: Mapping[MethodSpec[Any, Any], Callable[[Any, RequestContext], Awaitable[Any]]]
    | None = None,
) -> AsyncGenerator[Client[StubT, InfoT, CapsT], None]:
    """A ``Client`` connected to ``target`` (an ``App``, a ``Server``: anything with
    ``memory_transport()``) in this process; the server runs in the caller's event loop.

    ``protocol_version`` and ``bindings`` are the client's (``"2026-07-28"`` tests the
    stateless era). ``raise_exceptions``: a tool's unexpected exception is raised by the call
    that ran it, not answered as an ``isError`` result (a ``ToolError`` still is one); one that
    no call raised is raised on leaving the block. ``handlers`` answer what the server asks
    (``{methods.ROOTS_LIST: roots, methods.SAMPLING_CREATEMESSAGE: sample}``), registered before
    connecting so the client advertises the capabilities they imply.
    """
    if isinstance(target, str) or not callable(getattr(target, "memory_transport", None)):
        raise TypeError(
            f"connect() takes an App or a Server (anything with memory_transport()), "
            f"got {type(target).__name__}; for a URL or a command use Client(...)"
        )
    failures = _Failures()
    app = target if _is_app(target) else None
    previous = app.on_tool_exception if app is not None else None
    client: _RaisingClient[StubT, InfoT, CapsT] = _RaisingClient(
        target.memory_transport(),
        name=name,
        protocol_version=protocol_version,
        bindings=bindings,
        cache=cache,
    )
    client.failures = failures
    for spec, handler in (handlers or {}).items():
        client.add_handler(spec, handler)
    if app is not None and raise_exceptions:
        app.on_tool_exception = failures
    try:
        async with client:
            yield client
        failures.raise_any()
    finally:
        if app is not None and raise_exceptions:
            app.on_tool_exception = previous
