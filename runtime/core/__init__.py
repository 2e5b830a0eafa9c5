"""The core: JSON-RPC messages, sessions, routing and the request context.

Everything here speaks JSON-RPC 2.0 over a ``Connection`` (``transport.py``, the seam every
transport implements) and knows no protocol era, transport, or plug-in: a ``Session`` reads
envelopes, admits and routes requests to handlers (``routing``, ``admission``), sends requests and
matches their answers (``outgoing``), and gives handlers a ``RequestContext``. The generated
bindings (``mcpbind.generated``) supply the method tables and models. ``loop_path`` is the one
fast path seam: asyncio's own primitives or anyio's, picked once per session or connection.

May import: ``mcpbind.generated`` and the libraries; nothing else of the runtime.
"""
