"""Redirect handlers: the loopback callback server a CLI uses, and the missing-extra error."""

from __future__ import annotations

import socket
import subprocess
import sys

import httpx
import pytest
from auth_client_kit import World, serve_world
from mcpbind.runtime.auth import (
    AuthorizationError,
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


# Another process trying the port as a careless server would (SO_REUSEADDR, then listen).
BIND_ELSEWHERE = """
import socket, sys
sock = socket.socket()
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    sock.bind(("127.0.0.1", int(sys.argv[1])))
    sock.listen()
except OSError as exc:
    print("refused", exc.errno)
else:
    print("bound")
"""


def bind_elsewhere(port: int) -> str:
    run = subprocess.run(
        [sys.executable, "-c", BIND_ELSEWHERE, str(port)],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return run.stdout.strip()


async def test_no_other_process_can_take_the_port_before_the_redirect_is_served() -> None:
    # RFC 8252 section 8.3: whoever holds the port receives the user's authorization code.
    checked: list[str] = []

    def show(url: str) -> None:
        checked.append(bind_elsewhere(handler.port))
        browser(url)

    handler = LoopbackRedirectHandler(show=show, timeout=20.0)
    redirect_uri = handler.redirect_uri
    assert bind_elsewhere(handler.port).startswith("refused")
    async with serve_world(World()) as world:
        auth = OAuthClientAuth(world.server_url, redirect_handler=handler)
        async with httpx.AsyncClient(auth=auth) as http:
            response = await http.post(world.server_url, json={})
    assert response.status_code == 200
    assert checked == [checked[0]] and checked[0].startswith("refused")
    assert world.token_requests[0]["redirect_uri"] == redirect_uri == handler.redirect_uri
    handler.close()
    # The flow over and the handler closed, the port is let go.
    assert bind_elsewhere(int(redirect_uri.rsplit(":", 1)[1].split("/")[0])) == "bound"


async def test_a_later_flow_serves_the_same_port_again() -> None:
    def show(url: str) -> None:
        httpx.get(f"{handler.redirect_uri}?code=c&state=s", timeout=10)

    with LoopbackRedirectHandler(show=show, timeout=10.0) as handler:
        first = handler.redirect_uri
        assert await handler("https://as.example/authorize") == {"code": "c", "state": "s"}
        assert await handler("https://as.example/authorize") == {"code": "c", "state": "s"}
        assert handler.redirect_uri == first


def test_a_port_in_use_is_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        handler = LoopbackRedirectHandler(port=port, show=lambda url: None)
        with pytest.raises(AuthorizationError, match=f"127.0.0.1:{port}: in use"):
            handler.redirect_uri  # noqa: B018


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
