"""Which ``Mcp-Param-*`` headers a ``tools/call`` must carry: learnt from the server itself.

The transport only has the ``serve`` callable, so it asks it the way any client would: a
private in-memory session sends ``tools/list`` (every page) with the stateless-era ``_meta`` of
the revision in use, and the ``x-mcp-header`` annotations of each tool's ``inputSchema`` are
kept per revision. The answer is reused for ``ttl`` seconds, and fetched again at once (at
most once a second) when a call names a tool the cached list lacks, so a tool added since is
checked too. Handlers that list tools per caller (by the HTTP request's identity) see no
request here: such servers should annotate the same for everyone.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

import anyio
from mcpbind.generated.names import META_CLIENT_CAPABILITIES as CLIENT_CAPABILITIES, TOOLS_LIST
from mcpbind.runtime.core.transport import RUNTIME_OWN, Connection, Envelope, take
from mcpbind.runtime.transports.memory import memory_pair

from .binding import META_VERSION, ToolHeader, header_annotations

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = ["ToolHeaderCache"]

logger = logging.getLogger("mcpbind.runtime.http")

#: Pages of ``tools/list`` read at most (a paginator that never ends cannot hang a call).
MAX_PAGES: Final = 100
#: How long one ``tools/list`` may take before the cache gives up (and checks no params).
LIST_TIMEOUT: Final = 10.0
#: The least time between two refreshes prompted by an unknown tool name.
REFRESH_GAP: Final = 1.0


class ToolHeaderCache:
    """Per revision: tool name -> its ``x-mcp-header`` annotations."""

    def __init__(self, serve: Callable[[Connection], Awaitable[None]], ttl: float) -> None:
        self.serve = serve
        self.ttl = ttl
        #: revision -> (stale after, no refresh for an unknown name before, tool -> headers):
        #: the two moments worked out once per fetch, not per call.
        self._tools: dict[str, tuple[float, float, dict[str, list[ToolHeader]]]] = {}
        self._locks: dict[str, anyio.Lock] = {}

    def forget(self) -> None:
        """Drop what is cached (the tools changed)."""
        self._tools.clear()

    def cached(self, revision: str, tool: str) -> list[ToolHeader] | None:
        """``headers_for`` when the cache can answer (no coroutine to make), else None."""
        cached = self._tools.get(revision)
        if cached is not None:
            now = time.monotonic()  # anyio.current_time looks up the backend: 4 us a call
            if now < cached[0]:
                found = cached[2].get(tool)
                if found is not None:
                    return found
                if now < cached[1]:
                    return []
        return None

    async def headers_for(self, revision: str, tool: str) -> list[ToolHeader]:
        """The annotations of ``tool`` at ``revision`` (none for a tool the server lacks)."""
        found = self.cached(revision, tool)
        if found is not None:
            return found
        cached = self._tools.get(revision)
        lock = self._locks.setdefault(revision, anyio.Lock())
        async with lock:
            again = self._tools.get(revision)
            if again is None or again is cached:
                fetched = time.monotonic()
                tools = await self._fetch(revision)
                self._tools[revision] = (fetched + self.ttl, fetched + REFRESH_GAP, tools)
        return self._tools[revision][2].get(tool) or []

    async def _fetch(self, revision: str) -> dict[str, list[ToolHeader]]:
        tools: dict[str, list[ToolHeader]] = {}
        with anyio.move_on_after(LIST_TIMEOUT) as timer:
            async with memory_pair() as (near, far), anyio.create_task_group() as tg:
                far.extra[RUNTIME_OWN] = True  # no client asked: middleware skips it

                async def serve() -> None:
                    await self.serve(far)

                tg.start_soon(serve)
                cursor: Any = None
                for page in range(MAX_PAGES):
                    result = await _request(near, page, revision, cursor)
                    listed: JsonValue = result.get("tools") if result is not None else None
                    tool: JsonValue
                    for tool in listed if type(listed) is list else ():
                        if type(tool) is dict and type(tool.get("name")) is str:
                            tools[tool["name"]] = header_annotations(tool.get("inputSchema"))
                    cursor = result.get("nextCursor") if result is not None else None
                    if not cursor:
                        break
                tg.cancel_scope.cancel()
        if timer.cancelled_caught:
            logger.warning(
                "tools/list took over %s s; Mcp-Param headers go unchecked", LIST_TIMEOUT
            )
        return tools


async def _request(
    connection: Connection, request_id: int, revision: str, cursor: Any
) -> dict[str, Any] | None:
    """One ``tools/list`` page; None if the server answered an error."""
    params: dict[str, Any] = {"_meta": {META_VERSION: revision, CLIENT_CAPABILITIES: {}}}
    if cursor:
        params["cursor"] = cursor
    message = {"jsonrpc": "2.0", "id": request_id, "method": TOOLS_LIST, "params": params}
    await connection.outgoing.send(Envelope(message))
    while True:
        reply: JsonValue = (await take(connection.incoming)).message
        if type(reply) is dict and reply.get("id") == request_id and "method" not in reply:
            result: JsonValue = reply.get("result")
            return result if type(result) is dict else None
