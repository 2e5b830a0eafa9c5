"""HTTP transports: Streamable HTTP (server and client) and the legacy HTTP+SSE of 2024-11-05.

The server side is an ASGI app that runs one runtime session per MCP session; the client
side is a transport (an async context manager yielding a ``Connection``) for ``Client``::

    server = Server("demo")
    app = StreamableHTTPServer(server.serve)           # uvicorn app; or serving(app)
    async with Client(streamable_http_client("http://127.0.0.1:8000/mcp")) as client: ...
"""

from .client import HttpTransportError, streamable_http_client
from .event_store import EventStore, InMemoryEventStore
from .legacy import LegacySSEServer, combined_app, sse_client
from .security import LOOPBACK_HOSTS, HostGuard
from .server import HttpRequestContext, SessionRunner, StreamableHTTPServer
from .uvicorn import serve_forever, serving

__all__ = [
    "LOOPBACK_HOSTS",
    "EventStore",
    "HostGuard",
    "HttpRequestContext",
    "HttpTransportError",
    "InMemoryEventStore",
    "LegacySSEServer",
    "SessionRunner",
    "StreamableHTTPServer",
    "combined_app",
    "serve_forever",
    "serving",
    "sse_client",
    "streamable_http_client",
]
