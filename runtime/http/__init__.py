"""HTTP transports: Streamable HTTP (server and client) and the legacy HTTP+SSE of 2024-11-05.

The server side is an ASGI app that runs one runtime session per MCP session; the client
side is a transport (an async context manager yielding a ``Connection``) for ``Client``::

    server = Server("demo")
    app = StreamableHTTPServer(server.serve)           # uvicorn app; or serving(app)
    async with Client(streamable_http_client("http://127.0.0.1:8000/mcp")) as client: ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpbind.runtime._exports import install

if TYPE_CHECKING:
    from mcpbind.runtime.transports.http.client import (
        HttpTransportError as HttpTransportError,
        streamable_http_client as streamable_http_client,
    )
    from mcpbind.runtime.transports.http.event_store import (
        EventStore as EventStore,
        InMemoryEventStore as InMemoryEventStore,
    )
    from mcpbind.runtime.transports.http.legacy_sse import (
        LegacySSEServer as LegacySSEServer,
        combined_app as combined_app,
        sse_client as sse_client,
    )
    from mcpbind.runtime.transports.http.security import (
        LOOPBACK_HOSTS as LOOPBACK_HOSTS,
        HostGuard as HostGuard,
    )
    from mcpbind.runtime.transports.http.server import (
        HttpRequestContext as HttpRequestContext,
        SessionRunner as SessionRunner,
        StreamableHTTPServer as StreamableHTTPServer,
    )
    from mcpbind.runtime.transports.http.uvicorn import (
        serve_forever as serve_forever,
        serving as serving,
    )

install(globals())
