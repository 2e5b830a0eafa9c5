"""Both halves of mcpbind's OAuth together: a ``Client`` whose transport carries the OAuth
client (``OAuthClientAuth``, with a programmatic redirect handler) reaches a server protected
by our ``ResourceServer``, getting its token from the test authorization server on the way.

No token at first: the 401's challenge leads the client through discovery, registration
(RFC 7591), the authorization code with PKCE and ``resource``, and the token ends in a tool
call whose handler sees the identity. Then step-up: a tool call needing a scope the token
lacks gets 403 ``insufficient_scope``, the client authorizes again for the union of scopes,
and the retried call goes through. Both eras.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from auth_server_kit import protected, sudo_needs_admin
from mcpbind.generated.v2025_11_25 import types
from mcpbind.generated.v2026_07_28 import types as modern_types
from mcpbind.runtime import Client
from mcpbind.runtime.auth import FollowRedirectHandler, OAuthClientAuth
from mcpbind.runtime.http import sse_client, streamable_http_client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

REDIRECT = "http://127.0.0.1:1/callback"
ERAS = ["2025-11-25", "2026-07-28"]


def whoami(revision: str, **arguments: Any) -> Any:
    params = types if revision == "2025-11-25" else modern_types
    return params.CallToolRequestParams(name="whoami", arguments=arguments)


@pytest.mark.parametrize("revision", ERAS)
async def test_the_oauth_client_authorizes_and_calls_a_protected_tool(revision: str) -> None:
    async with protected() as setup:
        auth = OAuthClientAuth(setup.url, redirect_handler=FollowRedirectHandler(REDIRECT))
        transport = streamable_http_client(setup.url, auth=auth)
        async with Client(transport, protocol_version=revision) as client:
            result = await client.stub.call_tool(whoami(revision))
            seen = json.loads(result.content[0].text)
        registered = list(setup.authorization.clients)
        assert seen == {"subject": "user-1", "client_id": registered[0],
                        "scopes": ["mcp:tools"], "audience": [setup.url]}  # fmt: skip
        token_request = setup.authorization.token_requests[0]
        assert token_request["grant_type"] == "authorization_code"
        assert token_request["resource"] == setup.url
        assert len(setup.authorization.token_requests) == 1  # one token for the whole session


@pytest.mark.parametrize("revision", ERAS)
async def test_step_up_on_insufficient_scope(revision: str) -> None:
    async with protected(operation_scopes=sudo_needs_admin) as setup:
        auth = OAuthClientAuth(setup.url, redirect_handler=FollowRedirectHandler(REDIRECT))
        transport = streamable_http_client(setup.url, auth=auth)
        async with Client(transport, protocol_version=revision) as client:
            plain = json.loads((await client.stub.call_tool(whoami(revision))).content[0].text)
            assert plain["scopes"] == ["mcp:tools"]
            stepped = await client.stub.call_tool(whoami(revision, sudo=True))
            assert json.loads(stepped.content[0].text)["scopes"] == ["mcp:admin", "mcp:tools"]
        asked = [set(a.get("scope", "").split()) for a in setup.authorization.authorizations]
        assert asked == [{"mcp:tools"}, {"mcp:tools", "mcp:admin"}]
        assert all(a["resource"] == setup.url for a in setup.authorization.authorizations)


async def test_the_legacy_transport_too() -> None:
    """HTTP+SSE: the GET that opens the stream gets the 401, the client authorizes, and the
    session (bound to that identity) serves the call."""
    async with protected(legacy=True) as setup:
        auth = OAuthClientAuth(setup.url, redirect_handler=FollowRedirectHandler(REDIRECT))
        async with Client(sse_client(f"{setup.base}/sse", auth=auth)) as client:
            result = await client.stub.call_tool(whoami("2025-11-25"))
            assert json.loads(result.content[0].text)["subject"] == "user-1"
        assert len(setup.authorization.token_requests) == 1
