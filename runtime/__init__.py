"""The mcpbind runtime: sessions, lifecycle and transports that speak the generated bindings.

Typical use::

    from mcpbind.generated.v2025_11_25 import methods, types
    from mcpbind.runtime import Client, Server, StdioParameters, stdio_client

    server = Server("demo")

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(params: types.CallToolRequestParams, context: RequestContext) -> types.CallToolResult:
        ...

    async with Client(stdio_client(StdioParameters("python", ["server.py"]))) as client:
        result = await client.stub.call_tool(types.CallToolRequestParams(name="echo"))

Serving: ``server.run_stdio()``, ``await server.serve(connection)`` for any transport, or
``Client(server.memory_transport())`` in-process. Handlers get a ``RequestContext``
(``report_progress``, ``peer``/``peer_as`` for requests back to the client, which in the
stateless era become multi round-trip requests sealed by a ``RequestStateKeeper``); an
``McpError`` answers a chosen error. ``server.broadcast``/``notify_*`` reach both eras
(``subscriptions/listen`` streams in the stateless one) without letting a stuck peer stall them.
``SessionOptions`` sets timeouts, keep-alive and concurrency bounds.
Transports yield a ``Connection`` (a source and a sink of ``Envelope``), see
``mcpbind.runtime.transport``; lifecycles are pluggable (``ClientLifecycle``,
``ServerLifecycle``): ``HandshakeClient``/``HandshakeServer`` for 2024-11-05 .. 2025-11-25,
``StatelessClient``/``StatelessServer`` for 2026-07-28 (a ``Server`` serves both by default).
Everything method-specific comes from ``mcpbind.generated``; this package only moves messages.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._admission import SERVER_UNAVAILABLE
    from ._client import Client
    from ._fanout import Delivery
    from ._input import RequestStateKeeper, shared_state_key
    from ._lifecycle import (
        ASSUME_INITIALIZED,
        HANDSHAKE_REVISIONS,
        ClientLifecycle,
        HandshakeClient,
        HandshakeServer,
        ServerLifecycle,
    )
    from ._listen_client import ListenNotification, Subscription
    from ._run import run
    from ._server import Server
    from ._session import PeerState, RequestContext, Route, Router, Session, SessionOptions
    from ._stateless import (
        STATELESS_REVISIONS,
        UNSUPPORTED_PROTOCOL_VERSION,
        StatelessServer,
    )
    from ._stateless_client import StatelessClient
    from ._stdio import StdioParameters, stdio_client, stdio_server
    from .app import App
    from .errors import (
        HTTP_STATUS,
        INTERNAL_ERROR,
        INVALID_PARAMS,
        INVALID_REQUEST,
        METHOD_NOT_FOUND,
        PARSE_ERROR,
        CapabilityError,
        ConnectionClosedError,
        InvalidResultError,
        McpError,
        ProtocolVersionError,
        RequestTimeoutError,
        RuntimeFailure,
    )
    from .transport import Connection, Envelope, Malformed, memory_pair

# Where each public name lives. The submodules are imported on first use (PEP 562): importing
# the package costs nothing, and a program imports only what it touches (a server never needs
# the client, code that only names an error class needs no event loop library).
_SOURCES: dict[str, str] = {
    "SERVER_UNAVAILABLE": "._admission",
    "Client": "._client",
    "Delivery": "._fanout",
    "RequestStateKeeper": "._input",
    "shared_state_key": "._input",
    "ASSUME_INITIALIZED": "._lifecycle",
    "HANDSHAKE_REVISIONS": "._lifecycle",
    "ClientLifecycle": "._lifecycle",
    "HandshakeClient": "._lifecycle",
    "HandshakeServer": "._lifecycle",
    "ServerLifecycle": "._lifecycle",
    "ListenNotification": "._listen_client",
    "Subscription": "._listen_client",
    "run": "._run",
    "Server": "._server",
    "App": ".app",
    "PeerState": "._session",
    "RequestContext": "._session",
    "Route": "._session",
    "Router": "._session",
    "Session": "._session",
    "SessionOptions": "._session",
    "STATELESS_REVISIONS": "._stateless",
    "UNSUPPORTED_PROTOCOL_VERSION": "._stateless",
    "StatelessClient": "._stateless_client",
    "StatelessServer": "._stateless",
    "StdioParameters": "._stdio",
    "stdio_client": "._stdio",
    "stdio_server": "._stdio",
    "HTTP_STATUS": ".errors",
    "INTERNAL_ERROR": ".errors",
    "INVALID_PARAMS": ".errors",
    "INVALID_REQUEST": ".errors",
    "METHOD_NOT_FOUND": ".errors",
    "PARSE_ERROR": ".errors",
    "CapabilityError": ".errors",
    "ConnectionClosedError": ".errors",
    "InvalidResultError": ".errors",
    "McpError": ".errors",
    "ProtocolVersionError": ".errors",
    "RequestTimeoutError": ".errors",
    "RuntimeFailure": ".errors",
    "Connection": ".transport",
    "Envelope": ".transport",
    "Malformed": ".transport",
    "memory_pair": ".transport",
}

__all__ = [
    "ASSUME_INITIALIZED",
    "HANDSHAKE_REVISIONS",
    "HTTP_STATUS",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "SERVER_UNAVAILABLE",
    "STATELESS_REVISIONS",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "App",
    "CapabilityError",
    "Client",
    "ClientLifecycle",
    "Connection",
    "ConnectionClosedError",
    "Delivery",
    "Envelope",
    "HandshakeClient",
    "HandshakeServer",
    "InvalidResultError",
    "ListenNotification",
    "Malformed",
    "McpError",
    "PeerState",
    "ProtocolVersionError",
    "RequestContext",
    "RequestStateKeeper",
    "RequestTimeoutError",
    "Route",
    "Router",
    "RuntimeFailure",
    "Server",
    "ServerLifecycle",
    "Session",
    "SessionOptions",
    "StatelessClient",
    "StatelessServer",
    "StdioParameters",
    "Subscription",
    "memory_pair",
    "run",
    "shared_state_key",
    "stdio_client",
    "stdio_server",
]


def __getattr__(name: str) -> Any:
    """Import the submodule that defines ``name`` and keep the value here for next time."""
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(source, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
