"""The transports: stdio, in-memory, Streamable HTTP and the legacy HTTP+SSE.

Each turns a wire into a ``Connection`` (``core.transport``): ``stdio`` (a child process, or this
process's own pipes), ``memory`` (two ends in one process), ``http`` (Streamable HTTP, server and
client, both eras, and beside it 2024-11-05's HTTP+SSE, ``http.legacy_sse``).

May import: ``core``. Not eras, endpoints or plug-ins: the HTTP server hands connections to any
``serve`` callable and learns of auth and shared state through the protocols it declares.
"""
