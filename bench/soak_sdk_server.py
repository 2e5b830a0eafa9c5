"""The official Python SDK's side of the soak benchmark (see ``soak_servers.py``).

A module of its own, without ``from __future__ import annotations``: the SDK reads the tools'
annotations at run time, so ``Context`` must be a real name where they are defined.
"""

from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from mcp.types import jsonrpc_message_adapter
from mcpbind.runtime.http import InMemoryEventStore


def sdk() -> Any:
    class SharedStore(EventStore):
        """mcpbind's bounded store behind the SDK's interface (messages kept as dicts)."""

        def __init__(self) -> None:
            self.store = InMemoryEventStore()

        async def store_event(self, stream_id: str, message: Any) -> str:
            raw = None if message is None else message.model_dump(by_alias=True, exclude_none=True)
            return await self.store.store_event(stream_id, raw)

        async def replay_events_after(
            self, last_event_id: str, send_callback: EventCallback
        ) -> str | None:
            found = await self.store.replay_events_after(last_event_id)
            if found is None:
                return None
            stream_id, events = found
            for event_id, raw in events:
                await send_callback(
                    EventMessage(jsonrpc_message_adapter.validate_python(raw), event_id)
                )
            return stream_id

    server = MCPServer("soak-sdk")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool()
    async def count(steps: int, delay: float, ctx: Context) -> str:  # type: ignore[type-arg]
        """Report ``steps`` progress notifications, then answer."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps)
            await anyio.sleep(delay)
        return f"counted {steps}"

    return server.streamable_http_app(event_store=SharedStore())
