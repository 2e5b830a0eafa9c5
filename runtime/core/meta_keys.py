"""The ``_meta`` keys of the stateless era's per-request protocol fields (``basic/index.md``).

A module of their own, importing nothing, because the lifecycles, the input rounds and both
HTTP sides all read them.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CLIENT_CAPABILITIES", "CLIENT_INFO", "PROTOCOL_VERSION", "SERVER_INFO"]

PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
