"""Signing in does not count against the request that needed it.

The 2026-07-28 era opens with a ``server/discover`` probe allowed ``probe_timeout`` seconds; on
its 401 the OAuth flow sends the user to sign in, which takes as long as the user does. The
HTTP transport hands the session's deadline hold to the flow (``core.outgoing.DEADLINE_HOLD``,
an httpx request extension), so the probe's clock stops while the user signs in: a sign-in
slower than the probe's timeout still ends in a stateless-era connection, not in a timeout or
a fall-back to the handshake.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import anyio
import pytest
from auth_client_kit import World, serve_world
from httpkit import build_server
from mcpbind.runtime import Client, StatelessClient
from mcpbind.runtime.auth import ClientMetadata, FollowRedirectHandler, OAuthClientAuth
from mcpbind.runtime.http import StreamableHTTPServer, streamable_http_client as http_client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

PROBE_TIMEOUT = 1.0
SIGN_IN = 2.5


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class SlowUser(FollowRedirectHandler):
    """A user who takes ``SIGN_IN`` seconds to sign in (longer than the probe's timeout)."""

    async def __call__(self, authorization_url: str) -> Mapping[str, str]:
        await anyio.sleep(SIGN_IN)
        return await super().__call__(authorization_url)


async def test_a_slow_sign_in_does_not_time_out_the_discover_probe() -> None:
    world = World(mcp=StreamableHTTPServer(build_server().serve))
    async with serve_world(world):
        auth = OAuthClientAuth(
            world.server_url,
            redirect_handler=SlowUser(),
            client_metadata=ClientMetadata(client_name="slow user"),
        )
        lifecycle = StatelessClient("2026-07-28", probe_timeout=PROBE_TIMEOUT)
        began = time.monotonic()
        async with Client(http_client(world.server_url, auth=auth), lifecycle=lifecycle) as client:
            took = time.monotonic() - began
            assert client.revision == "2026-07-28"
            assert client.session.peer.era == "stateless"
    assert took >= SIGN_IN  # the probe waited through the sign-in instead of giving up
    assert len(world.authorize_requests) == 1
