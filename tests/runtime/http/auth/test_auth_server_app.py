"""The app layer behind a resource server, as the README shows it: ``app.http_app(auth=...)``
refuses a request without a token with the discovery challenge, and a tool reads the caller's
identity from its ``Context`` in both eras."""

from __future__ import annotations

import httpx
import pytest
from auth_server_kit import protected
from httpkit import ACCEPT_BOTH, INITIALIZE
from mcpbind.runtime import Client
from mcpbind.runtime.app import App, Context
from mcpbind.runtime.http import streamable_http_client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def notes_app() -> App:
    app = App("notes")

    @app.tool()
    async def whoami(ctx: Context) -> str:
        """Who the token speaks for."""
        auth = ctx.auth
        return "nobody" if auth is None else f"{auth.subject} {' '.join(auth.scopes)}"

    return app


async def test_an_app_behind_a_resource_server() -> None:
    app = notes_app()
    async with protected(asgi=lambda rs: app.http_app(auth=rs)) as setup:
        async with httpx.AsyncClient() as http:
            refused = await http.post(setup.url, json=INITIALIZE, headers=ACCEPT_BOTH)
        assert refused.status_code == 401
        challenge = refused.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert "/.well-known/oauth-protected-resource/mcp" in challenge

        headers = setup.bearer(setup.good_token("mcp:tools"))
        for revision in ("2025-11-25", "2026-07-28"):
            client = Client(
                streamable_http_client(setup.url, headers=headers), protocol_version=revision
            )
            async with client:
                assert client.revision == revision
                result = await client.call_tool("whoami", {})
                assert not result.isError
                assert result.content[0].text == "user-1 mcp:tools"
