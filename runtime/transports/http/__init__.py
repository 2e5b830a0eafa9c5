"""Streamable HTTP: an ASGI server (``server``) and a client transport (``client``).

The server runs one session per handshake-era MCP session and serves stateless-era requests on
pooled sessions; ``shared_state`` declares what many workers share (its in-process default is
here, its Redis implementation in ``mcpbind.runtime.cluster``). The public face is
``mcpbind.runtime.http``.

May import: ``core``.
"""
