"""Helpers for the app layer's tests: wire-level peers for each revision, and typed calls."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcpbind import generated
from mcpbind.runtime.app import App
from runtime_helpers import RawPeer, raw_client_of

REVISIONS = generated.REVISIONS
HANDSHAKE = tuple(r for r in REVISIONS if generated.ERAS[r] == "handshake")
STATELESS = "2026-07-28"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


class Wire:
    """A hand-driven client of one revision: ``request`` sends plain dicts and returns the
    reply as it came (adding the stateless era's ``_meta`` fields when needed)."""

    def __init__(self, peer: RawPeer, revision: str) -> None:
        self.peer = peer
        self.revision = revision
        self._ids = itertools.count(1)

    async def request(
        self, method: str, params: dict[str, Any] | None = None, **meta: Any
    ) -> dict[str, Any]:
        body = dict(params or {})
        if self.revision == STATELESS:
            body["_meta"] = {
                PROTOCOL_VERSION: STATELESS,
                CLIENT_CAPABILITIES: {},
                **body.get("_meta", {}),
                **meta,
            }
        elif meta:
            body["_meta"] = {**body.get("_meta", {}), **meta}
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": body}
        reply: dict[str, Any] = await self.peer.request(message)
        return reply

    async def result(self, method: str, params: dict[str, Any] | None = None) -> Any:
        reply = await self.request(method, params)
        assert "result" in reply, reply
        return reply["result"]

    async def call(self, tool: str, **arguments: Any) -> Any:
        return await self.result("tools/call", {"name": tool, "arguments": arguments})


@asynccontextmanager
async def wire(app: App, revision: str) -> AsyncIterator[Wire]:
    """``app`` served to a raw peer speaking ``revision`` (initialised in the handshake era)."""
    initialize = None if revision == STATELESS else revision
    async with raw_client_of(app.server, initialize=initialize) as peer:
        yield Wire(peer, revision)
