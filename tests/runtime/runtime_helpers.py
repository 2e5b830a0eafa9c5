"""Helpers for the runtime tests: raw peers, transports, the example server command, a client
that answers the example server's questions."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcpbind.generated import v2025_11_25, v2026_07_28
from mcpbind.runtime import (
    Client,
    Connection,
    Envelope,
    RequestContext,
    Server,
    StdioParameters,
    memory_pair,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_SERVER = [sys.executable, "-m", "examples.server"]


@asynccontextmanager
async def given(connection: Connection) -> AsyncIterator[Connection]:
    """A transport that is an already-open connection."""
    yield connection


class RawPeer:
    """The far end of an in-memory connection, driven by hand with plain dicts."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    async def send(self, message: Any) -> None:
        await self.connection.outgoing.send(Envelope(message))

    async def receive(self, timeout: float = 5.0) -> Any:
        with anyio.fail_after(timeout):
            return (await self.connection.incoming.receive()).message

    async def request(self, message: dict[str, Any], timeout: float = 5.0) -> Any:
        """Send a request and return the next message that answers its id."""
        await self.send(message)
        while True:
            reply = await self.receive(timeout)
            if reply.get("id") == message["id"] and "method" not in reply:
                return reply

    async def nothing_within(self, seconds: float) -> bool:
        """True if no message arrives within ``seconds``."""
        with anyio.move_on_after(seconds):
            await self.connection.incoming.receive()
            return False
        return True


@asynccontextmanager
async def raw_client_of(
    server: Server, initialize: str | None = "2025-11-25"
) -> AsyncIterator[RawPeer]:
    """A server under test and a hand-driven client, optionally past ``initialize``."""
    async with memory_pair() as (near, far), anyio.create_task_group() as tg:
        tg.start_soon(server.serve, far)
        peer = RawPeer(near)
        if initialize is not None:
            reply = await peer.request(
                {
                    "jsonrpc": "2.0",
                    "id": "init",
                    "method": "initialize",
                    "params": {
                        "protocolVersion": initialize,
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "0"},
                    },
                }
            )
            assert "result" in reply, reply
            await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield peer
        tg.cancel_scope.cancel()


def answering_client(
    transport: AbstractAsyncContextManager[Connection] | StdioParameters, version: str
) -> tuple[Client, list[str]]:
    """Our client at ``version`` with sampling, elicitation and roots handlers (answering as the
    example server's ``ask_llm``, ``ask_user`` and ``roots`` tools expect), and the list of
    what it was asked, in order."""
    client = Client(transport, protocol_version=version)
    module = v2026_07_28 if version == "2026-07-28" else v2025_11_25
    types = module.types
    asked: list[str] = []

    @client.handler(module.methods.SAMPLING_CREATEMESSAGE)
    async def sample(params: Any, context: RequestContext) -> Any:
        asked.append("sampling")
        return types.CreateMessageResult(
            role="assistant", model="m", content=types.TextContent(text="Paris")
        )

    @client.handler(module.methods.ELICITATION_CREATE)
    async def elicit(params: Any, context: RequestContext) -> Any:
        asked.append("elicitation")
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    @client.handler(module.methods.ROOTS_LIST)
    async def roots(params: Any, context: RequestContext) -> Any:
        asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///project")])

    return client, asked


async def ask_example_tools(client: Client, version: str) -> list[str]:
    """Call the example server's ``ask_llm``, ``ask_user`` and ``roots`` (each asks the client
    something) through ``client``'s stub; the texts they answer."""
    types = (v2026_07_28 if version == "2026-07-28" else v2025_11_25).types
    texts = []
    for tool in ("ask_llm", "ask_user", "roots"):
        result = await client.stub.call_tool(
            types.CallToolRequestParams(name=tool, arguments={"question": "capital?"})
        )
        assert not result.isError
        texts.append(result.content[0].text)
    return texts
