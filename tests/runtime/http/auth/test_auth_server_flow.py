"""The whole walk a client makes to a protected server, with a standard OAuth client (authlib)
doing the OAuth part against the test authorization server: 401, the challenge's metadata
URL, the authorization server's metadata, registration (RFC 7591), the authorization code
with PKCE S256, ``state``, ``iss`` and ``resource``, the token request, then MCP calls with
the token in both eras; then a refreshed (rotated) token is taken too.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from auth_server_kit import Setup, protected
from authlib.common.security import generate_token
from authlib.integrations.httpx_client import AsyncOAuth2Client
from httpkit import ACCEPT_BOTH
from mcpbind.generated.v2025_11_25 import types
from mcpbind.generated.v2026_07_28 import types as modern_types
from mcpbind.runtime import Client
from mcpbind.runtime.http import streamable_http_client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

REDIRECT = "http://127.0.0.1:1/callback"


async def discover(http: httpx.AsyncClient, url: str) -> tuple[dict[str, Any], dict[str, Any], str]:
    """PRM and AS metadata, found the way the spec says from a 401; and the scope asked for."""
    refused = await http.post(
        url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=ACCEPT_BOTH
    )
    assert refused.status_code == 401
    challenge = dict(re.findall(r'(\w+)="([^"]*)"', refused.headers["www-authenticate"]))
    resource = (await http.get(challenge["resource_metadata"])).json()
    assert resource["resource"] == url
    issuer = resource["authorization_servers"][0]
    server = (await http.get(f"{issuer}/.well-known/oauth-authorization-server")).json()
    assert server["issuer"] == issuer
    assert "S256" in server["code_challenge_methods_supported"]
    return resource, server, challenge["scope"]


async def authorize(
    setup: Setup, http: httpx.AsyncClient
) -> tuple[AsyncOAuth2Client, dict[str, Any]]:
    resource, server, scope = await discover(http, setup.url)
    registration = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none",
                    "grant_types": ["authorization_code", "refresh_token"], "client_name": "t"}  # fmt: skip
    registered = (await http.post(server["registration_endpoint"], json=registration)).json()
    oauth = AsyncOAuth2Client(
        registered["client_id"], redirect_uri=REDIRECT, scope=scope,
        code_challenge_method="S256", token_endpoint_auth_method="none",
    )  # fmt: skip
    verifier = generate_token(48)
    url, state = oauth.create_authorization_url(
        server["authorization_endpoint"], code_verifier=verifier, resource=resource["resource"]
    )
    # The user agent: the test server approves at once and redirects to the callback.
    redirect = await http.get(url)
    assert redirect.status_code == 302
    callback = redirect.headers["location"]
    answer = parse_qs(urlsplit(callback).query)
    assert answer["state"] == [state] and answer["iss"] == [server["issuer"]]
    token = await oauth.fetch_token(
        server["token_endpoint"], authorization_response=callback, code_verifier=verifier,
        resource=resource["resource"],
    )  # fmt: skip
    sent = setup.authorization.token_requests[-1]
    assert sent["resource"] == setup.url and sent["code_verifier"] == verifier
    return oauth, dict(token)


async def test_authorization_code_flow_ends_in_tool_calls_in_both_eras() -> None:
    async with protected() as setup, httpx.AsyncClient() as http:
        oauth, token = await authorize(setup, http)
        headers = {"authorization": f"Bearer {token['access_token']}"}
        async with Client(streamable_http_client(setup.url, headers=headers)) as client:
            result = await client.stub.call_tool(types.CallToolRequestParams(name="whoami"))
            seen = json.loads(result.content[0].text)
            assert seen["subject"] == "user-1"
            assert seen["client_id"] == oauth.client_id
            assert seen["scopes"] == ["mcp:tools"]
        modern = Client(
            streamable_http_client(setup.url, headers=headers), protocol_version="2026-07-28"
        )
        async with modern:
            result = await modern.stub.call_tool(modern_types.CallToolRequestParams(name="whoami"))
            assert json.loads(result.content[0].text)["client_id"] == oauth.client_id

        refreshed = await oauth.refresh_token(
            setup.authorization.metadata()["token_endpoint"], refresh_token=token["refresh_token"]
        )
        assert refreshed["access_token"] != token["access_token"]
        again = {"authorization": f"Bearer {refreshed['access_token']}"}
        async with Client(streamable_http_client(setup.url, headers=again)) as client:
            await client.stub.call_tool(types.CallToolRequestParams(name="whoami"))
        await oauth.aclose()
