"""Spans and trace context for one endpoint, through ``opentelemetry-api`` only.

An instrumented endpoint gets three things:

* a ``SpanKind.SERVER`` span around each incoming request, as its outermost middleware, whose
  parent is the trace context the request carried in ``params._meta`` (SEP-414: the W3C
  ``traceparent``, ``tracestate`` and ``baggage`` keys), or none: a request without it starts
  a trace of its own rather than joining whatever span the serving task last had current;
* a ``SpanKind.CLIENT`` span around each request it sends, as its outermost outgoing
  middleware (``add_outgoing_middleware``): the lifecycle's ``initialize`` or
  ``server/discover``, a client's calls and ``ping``, the extensions' requests, a server's
  sampling, elicitation and roots requests during a tool call, either side's keep-alive pings
  (one span a request: the chain sees a request once, however many rounds it takes);
* that span's context written into the ``_meta`` of the request, so both sides' spans form one
  trace (a server's request to the client is a child of the tool call's SERVER span, and the
  client's handling of it a child of that request's CLIENT span).

Attribute names follow OpenTelemetry's semantic conventions for MCP (``mcp.method.name``,
``mcp.protocol.version``, ``mcp.session.id``, ``mcp.resource.uri``, ``gen_ai.tool.name``...).
The propagator is W3C's, fixed: whatever the application's global propagator writes, only the
keys the specification reserves go into ``_meta``.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any, Final, cast

from mcpbind.generated.names import (
    PROMPTS_GET,
    RESOURCES_READ,
    RESOURCES_SUBSCRIBE,
    RESOURCES_UNSUBSCRIBE,
    TOOLS_CALL,
)
from mcpbind.runtime.core.errors import McpError
from mcpbind.runtime.endpoints.endpoint import Endpoint
from mcpbind.runtime.endpoints.middleware import CallNext, IncomingCall, OutgoingRequest

try:
    from opentelemetry import trace
    from opentelemetry.baggage.propagation import W3CBaggagePropagator
    from opentelemetry.context import Context
    from opentelemetry.propagators.composite import CompositePropagator
    from opentelemetry.trace import Span, SpanKind, StatusCode, TracerProvider
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
except ImportError as exc:  # the extra is optional: say which one brings it
    raise ImportError(
        f"tracing needs the 'otel' extra: pip install 'mcpbind[otel]' ({exc})"
    ) from exc

__all__ = ["instrument"]

#: The instrumentation scope's name (what a backend shows as the library).
SCOPE: Final = "mcpbind"

_PROPAGATOR: Final = CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()])
#: The params member that names a request's target, and the attribute it becomes, per method.
_TARGETS: Final = {
    TOOLS_CALL: ("name", "gen_ai.tool.name"),
    PROMPTS_GET: ("name", "gen_ai.prompt.name"),
    RESOURCES_READ: ("uri", "mcp.resource.uri"),
    RESOURCES_SUBSCRIBE: ("uri", "mcp.resource.uri"),
    RESOURCES_UNSUBSCRIBE: ("uri", "mcp.resource.uri"),
}

_instrumented: weakref.WeakSet[Endpoint] = weakref.WeakSet()


def instrument(endpoint: Endpoint, *, tracer_provider: TracerProvider | None = None) -> None:
    """Trace ``endpoint`` (a ``Server``, ``app.server`` or a ``Client``): spans through
    ``tracer_provider`` (default: the global one), trace context in every request's ``_meta``.

    Instrument before serving or connecting; a second call for the same endpoint does nothing.
    """
    if endpoint in _instrumented:
        return
    _instrumented.add(endpoint)
    tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)

    async def serve_span(call: IncomingCall, call_next: CallNext) -> Any:
        if call.kind != "request":
            return await call_next()
        attributes = _attributes(call.method, call.params, call.revision)
        if call.request_id is not None:
            attributes["jsonrpc.request.id"] = str(call.request_id)
        session_id = getattr(call.transport_context, "session_id", None)
        if type(session_id) is str:
            attributes["mcp.session.id"] = session_id
        with tracer.start_as_current_span(
            _span_name(call.method, attributes),
            context=_carried(call.params),
            kind=SpanKind.SERVER,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            return _outcome(span, call.method, await _traced(span, call_next))

    async def client_span(call: OutgoingRequest, call_next: CallNext) -> Any:
        method = call.method
        attributes = _attributes(method, call.params, call.revision)
        with tracer.start_as_current_span(
            _span_name(method, attributes),
            kind=SpanKind.CLIENT,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            # The CLIENT span is current here: its context is the one the peer gets.
            carrier: dict[str, str] = {}
            _PROPAGATOR.inject(carrier)
            if carrier:
                params = dict(call.params or {})
                meta = params.get("_meta")
                params["_meta"] = {**meta, **carrier} if type(meta) is dict else carrier
                call.params = params
            return _outcome(span, method, await _traced(span, call_next))

    endpoint.add_middleware(serve_span, outermost=True)
    endpoint.add_outgoing_middleware(client_span, outermost=True)


async def _traced(span: Span, call_next: CallNext) -> Any:
    """``call_next()``, its failure recorded on ``span`` (an ``McpError`` by its code)."""
    try:
        return await call_next()
    except McpError as exc:
        code = str(exc.code)
        span.set_attributes({"error.type": code, "rpc.response.status_code": code})
        span.set_status(StatusCode.ERROR, exc.message)
        raise
    except Exception as exc:
        span.set_attribute("error.type", type(exc).__qualname__)
        span.record_exception(exc)
        span.set_status(StatusCode.ERROR, type(exc).__qualname__)
        raise


def _outcome(span: Span, method: str, result: Any) -> Any:
    """``result``, and a tool's own error (``isError``) recorded on ``span``."""
    if method == TOOLS_CALL and _member(result, "isError") is True:
        span.set_attribute("error.type", "tool_error")
        span.set_status(StatusCode.ERROR, "the tool reported an error")
    return result


def _carried(params: Mapping[str, Any] | None) -> Context:
    """The trace context a request carried in ``_meta``; a new trace's (empty) when it carried
    none, or one that does not parse (a bad ``traceparent`` is ignored, never an error)."""
    meta = params.get("_meta") if params else None
    if type(meta) is not dict:
        return Context()
    try:
        return _PROPAGATOR.extract(cast("dict[str, Any]", meta), context=Context())
    except (TypeError, ValueError, AttributeError):
        return Context()


def _attributes(method: str, params: Any, revision: str | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {"mcp.method.name": method}
    if revision is not None:
        attributes["mcp.protocol.version"] = revision
    target = _TARGETS.get(method)
    if target is not None:
        value = _member(params, target[0])
        if type(value) is str:
            attributes[target[1]] = value
        if method == TOOLS_CALL:
            attributes["gen_ai.operation.name"] = "execute_tool"
    return attributes


def _span_name(method: str, attributes: Mapping[str, Any]) -> str:
    """``{mcp.method.name} {target}``, as the conventions name an MCP span."""
    target = _TARGETS.get(method)
    value = attributes.get(target[1]) if target is not None else None
    return f"{method} {value}" if value is not None else method


def _member(value: Any, name: str) -> Any:
    """A member of params or a result, a model's or a dict's."""
    if type(value) is dict:
        return cast("dict[str, Any]", value).get(name)
    return getattr(value, name, None)
