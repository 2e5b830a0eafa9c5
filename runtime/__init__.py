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
``SessionOptions`` sets timeouts, keep-alive and concurrency bounds; ``process_budget()`` is the
``MemoryBudget`` all sessions and transports of the process share (256 MiB by default).
Transports yield a ``Connection`` (a source and a sink of ``Envelope``; the seam is described
in ARCHITECTURE.md); lifecycles are pluggable (``ClientLifecycle``,
``ServerLifecycle``): ``HandshakeClient``/``HandshakeServer`` for 2024-11-05 .. 2025-11-25,
``StatelessClient``/``StatelessServer`` for 2026-07-28 (a ``Server`` serves both by default).
Everything method-specific comes from ``mcpbind.generated``; this package only moves messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._exports import install

if TYPE_CHECKING:
    from .app import App as App
    from .core.admission import SERVER_UNAVAILABLE as SERVER_UNAVAILABLE
    from .core.budget import (
        DEFAULT_MEMORY_BUDGET as DEFAULT_MEMORY_BUDGET,
        MemoryBudget as MemoryBudget,
        process_budget as process_budget,
    )
    from .core.errors import (
        HTTP_STATUS as HTTP_STATUS,
        INTERNAL_ERROR as INTERNAL_ERROR,
        INVALID_PARAMS as INVALID_PARAMS,
        INVALID_REQUEST as INVALID_REQUEST,
        METHOD_NOT_FOUND as METHOD_NOT_FOUND,
        PARSE_ERROR as PARSE_ERROR,
        CapabilityError as CapabilityError,
        ConnectionClosedError as ConnectionClosedError,
        InvalidResultError as InvalidResultError,
        McpError as McpError,
        ProtocolVersionError as ProtocolVersionError,
        RequestTimeoutError as RequestTimeoutError,
        RuntimeFailure as RuntimeFailure,
    )
    from .core.lifespan import (
        LifespanNotRunning as LifespanNotRunning,
        LifespanStartupError as LifespanStartupError,
    )
    from .core.revisions import (
        ASSUME_INITIALIZED as ASSUME_INITIALIZED,
        HANDSHAKE_REVISIONS as HANDSHAKE_REVISIONS,
        STATELESS_REVISIONS as STATELESS_REVISIONS,
    )
    from .core.routing import OutgoingCall as OutgoingCall
    from .core.run import run as run
    from .core.session import (
        PeerState as PeerState,
        RequestContext as RequestContext,
        Route as Route,
        Router as Router,
        Session as Session,
        SessionOptions as SessionOptions,
    )
    from .core.transport import (
        Connection as Connection,
        Envelope as Envelope,
        Malformed as Malformed,
    )
    from .endpoints.broadcast import Delivery as Delivery
    from .endpoints.cache import ResponseCache as ResponseCache
    from .endpoints.client import Client as Client
    from .endpoints.middleware import (
        CallNext as CallNext,
        IncomingCall as IncomingCall,
        Middleware as Middleware,
        OutgoingMiddleware as OutgoingMiddleware,
        OutgoingRequest as OutgoingRequest,
    )
    from .endpoints.server import Server as Server
    from .endpoints.tool_output import ToolOutputError as ToolOutputError
    from .eras.input_required import (
        RequestStateKeeper as RequestStateKeeper,
        shared_state_key as shared_state_key,
    )
    from .eras.lifecycle import (
        ClientLifecycle as ClientLifecycle,
        HandshakeClient as HandshakeClient,
        HandshakeServer as HandshakeServer,
        ServerLifecycle as ServerLifecycle,
    )
    from .eras.stateless import (
        UNSUPPORTED_PROTOCOL_VERSION as UNSUPPORTED_PROTOCOL_VERSION,
        StatelessServer as StatelessServer,
    )
    from .eras.stateless_client import StatelessClient as StatelessClient
    from .eras.subscriptions_client import (
        ListenNotification as ListenNotification,
        Subscription as Subscription,
    )
    from .transports.memory import memory_pair as memory_pair
    from .transports.stdio import stdio_server as stdio_server
    from .transports.stdio_client import (
        StdioParameters as StdioParameters,
        stdio_client as stdio_client,
    )

install(globals())
