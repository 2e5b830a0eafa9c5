"""Redirect handlers: the loopback callback server a CLI uses, and the missing-extra error."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest
from auth_client_kit import World, serve_world
from mcpbind.runtime.auth import (
    AuthorizationResponseError,
    LoopbackRedirectHandler,
    OAuthClientAuth,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def browser(url: str) -> None:
    """What the user's browser does: follow the authorization server back to the callback."""
    httpx.get(url, follow_redirects=True, timeout=10.0)


async def test_the_loopback_handler_receives_the_redirect_and_the_flow_completes() -> None:
    shown: list[str] = []

    def show(url: str) -> None:
        shown.append(url)
        browser(url)

    handler = LoopbackRedirectHandler(show=show, timeout=20.0)
    assert handler.redirect_uri == f"http://127.0.0.1:{handler.port}/callback"
    async with serve_world(World()) as world:
        auth = OAuthClientAuth(world.server_url, redirect_handler=handler)
        async with httpx.AsyncClient(auth=auth) as http:
            response = await http.post(world.server_url, json={})
    assert response.status_code == 200
    assert len(shown) == 1 and shown[0].startswith(f"{world.base}/authorize?")
    assert world.token_requests[0]["redirect_uri"] == handler.redirect_uri


async def test_the_loopback_handler_gives_up_after_its_timeout() -> None:
    handler = LoopbackRedirectHandler(show=lambda url: None, timeout=0.5)
    with pytest.raises(AuthorizationResponseError, match="no authorization response"):
        await handler("https://as.example/authorize")


async def test_a_repeated_callback_parameter_is_refused() -> None:
    def show(url: str) -> None:
        httpx.get(f"http://127.0.0.1:{handler.port}/callback?code=a&code=b&state=s", timeout=10)

    handler = LoopbackRedirectHandler(show=show, timeout=10.0)
    with pytest.raises(AuthorizationResponseError, match="repeats parameter"):
        await handler("https://as.example/authorize")


def test_without_the_auth_extra_the_error_names_it() -> None:
    code = (
        "import sys; sys.modules['authlib'] = None\n"
        "from mcpbind.runtime.auth import _deps, MissingDependencyError\n"
        "try:\n"
        "    _deps.load('authlib.oauth2.auth')\n"
        "except MissingDependencyError as exc:\n"
        "    print(exc)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'mcpbind[auth]'" in run.stdout
