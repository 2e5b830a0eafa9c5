"""Our ``Client`` through ``OAuthClientAuth`` to a real MCP server behind a token check.

The first request gets a 401; the flow discovers, registers, authorizes and retries; the tool
call goes through. Over Streamable HTTP in both eras, and over the legacy HTTP+SSE transport.
"""

from __future__ import annotations

import pytest
from auth_client_kit import World, serve_world
from httpkit import build_server
from mcpbind.generated.v2025_11_25 import types
from mcpbind.runtime import Client
from mcpbind.runtime.auth import ClientMetadata, FollowRedirectHandler, OAuthClientAuth
from mcpbind.runtime.http import (
    LegacySSEServer,
    StreamableHTTPServer,
    sse_client,
    streamable_http_client as http_client,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def oauth(world: World) -> OAuthClientAuth:
    return OAuthClientAuth(
        world.server_url,
        redirect_handler=FollowRedirectHandler(),
        client_metadata=ClientMetadata(client_name="mcp test"),
    )


async def echo(client: Client) -> str:
    result = await client.stub.call_tool(
        types.CallToolRequestParams(name="echo", arguments={"text": "authorized"})
    )
    text: str = result.content[0].text
    return text


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_streamable_http_client_authorizes_then_calls_a_tool(revision: str) -> None:
    world = World(mcp=StreamableHTTPServer(build_server().serve))
    async with serve_world(world):
        transport = http_client(world.server_url, auth=oauth(world))
        async with Client(transport, protocol_version=revision) as client:
            assert client.revision == revision
            assert await echo(client) == "authorized"
    assert len(world.authorize_requests) == 1
    assert world.token_requests[0]["resource"] == world.server_url


async def test_without_auth_the_client_gets_a_clear_error() -> None:
    world = World(mcp=StreamableHTTPServer(build_server().serve))
    async with serve_world(world):
        with pytest.raises(Exception, match="401"):
            async with Client(http_client(world.server_url, fallback_to_sse=False)) as client:
                await echo(client)


async def test_legacy_sse_client_authorizes_too() -> None:
    world = World(mcp=LegacySSEServer(build_server().serve))
    async with serve_world(world):
        transport = sse_client(f"{world.base}/sse", auth=oauth(world))
        async with Client(transport, protocol_version="2024-11-05") as client:
            assert await echo(client) == "authorized"
    assert len(world.token_requests) == 1


async def test_authorize_first_then_connect_without_a_401() -> None:
    """An interactive app signs in before connecting, so no request waits on the browser."""
    world = World(mcp=StreamableHTTPServer(build_server().serve), challenge_scope="tools")
    async with serve_world(world):
        auth = oauth(world)
        token = await auth.authorize()
        assert token.access_token in world.tokens and token.scope == "tools"
        assert world.requests[0] == "GET /mcp"
        probes = len(world.requests)
        async with Client(
            http_client(world.server_url, auth=auth), protocol_version="2026-07-28"
        ) as client:
            assert await echo(client) == "authorized"
        assert (await auth.authorize()).access_token == token.access_token
    assert len(world.authorize_requests) == 1
    # Only refused requests reach ``world.requests`` (the guard passes the others on unrecorded).
    assert world.requests[probes:] == []
