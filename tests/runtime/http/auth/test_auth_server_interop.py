"""The official Python SDK's OAuth client (``OAuthClientProvider``) against our resource
server: another implementation reads our challenge and metadata, registers with the test
authorization server, walks the code flow with PKCE and ``resource`` (checking the PRM's
``resource`` against the URL it was given, RFC 8707), and ends in a tool call whose handler
sees the identity it authorized as. Both eras (the SDK's ``legacy`` mode is the handshake).
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
from auth_server_kit import protected
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.client import Client as SdkClient
from mcp.client.streamable_http import streamable_http_client as sdk_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60), pytest.mark.interop]

REDIRECT = "http://127.0.0.1:1/callback"


class Memory:
    """The SDK's ``TokenStorage``, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """The SDK's redirect and callback handlers: fetch the authorization URL (the test AS
    approves at once) and hand back what its redirect carries."""

    def __init__(self) -> None:
        self.location = ""

    async def redirect(self, url: str) -> None:
        async with httpx.AsyncClient() as http:
            self.location = (await http.get(url)).headers["location"]

    async def callback(self) -> AuthorizationCodeResult:
        query = {k: v[0] for k, v in parse_qs(urlsplit(self.location).query).items()}
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_official_sdk_oauth_client_reaches_our_protected_server(mode: str) -> None:
    async with protected() as setup:
        storage, browser = Memory(), Browser()
        provider = OAuthClientProvider(
            setup.url,
            OAuthClientMetadata(
                redirect_uris=[REDIRECT],
                client_name="sdk",
                grant_types=["authorization_code", "refresh_token"],
            ),
            storage,
            redirect_handler=browser.redirect,
            callback_handler=browser.callback,
        )
        http = httpx2.AsyncClient(auth=provider, timeout=30)
        async with (
            http,
            SdkClient(sdk_http_client(setup.url, http_client=http), mode=mode) as client,
        ):
            assert client.protocol_version == ("2025-11-25" if mode == "legacy" else mode)
            result = await client.call_tool("whoami", {})
        seen = json.loads(result.content[0].text)
        assert storage.client is not None
        assert seen["client_id"] == storage.client.client_id
        assert seen["audience"] == [setup.url]
        assert setup.authorization.authorizations[0]["resource"] == setup.url
        assert setup.authorization.token_requests[0]["resource"] == setup.url
