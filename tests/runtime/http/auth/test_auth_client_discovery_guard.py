"""OAuth discovery stays near the MCP server (``runtime/auth/_guard.py``).

Real servers on uvicorn: the MCP server and its authorization server at 127.0.0.1, "another
origin" at 127.0.0.2 (also the loopback interface on Linux) counting what reaches it. A "public"
MCP server is a name the test's resolver maps to a public address, reached through a transport
that sends its requests to the local server: no network is needed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from auth_client_kit import World, build_app, serve_world
from mcpbind.runtime.auth import (
    ClientMetadata,
    DiscoveryError,
    FollowRedirectHandler,
    OAuthClientAuth,
    OriginGuard,
    discover_resource,
    discover_server,
)
from mcpbind.runtime.http import serving
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

pytestmark = pytest.mark.anyio

PUBLIC = "https://mcp.example.com"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def other_origin(body: dict[str, Any] | None = None) -> AsyncIterator[tuple[str, list[str]]]:
    """A server on 127.0.0.2 answering every GET with ``body``; yields its origin and the
    requests it received."""
    seen: list[str] = []

    async def anything(request: Request) -> Response:
        seen.append(f"{request.method} {request.url.path}")
        return JSONResponse(body or {"resource": "x", "authorization_servers": ["x"]})

    app = Starlette(routes=[Route("/{rest:path}", anything, methods=["GET", "POST"])])
    async with serving(app, host="127.0.0.2") as base:
        yield base, seen


def make_auth(
    server_url: str, transport: httpx.AsyncBaseTransport | None = None, **options: Any
) -> OAuthClientAuth:
    return OAuthClientAuth(
        server_url,
        redirect_handler=FollowRedirectHandler(transport=transport),
        transport=transport,
        client_metadata=ClientMetadata(client_name="test"),
        **options,
    )


async def test_metadata_on_another_origin_is_never_fetched() -> None:
    async with other_origin() as (elsewhere, seen):
        prm_url = f"{elsewhere}/.well-known/oauth-protected-resource"
        async with serve_world(World(prm_url=prm_url)) as world:
            auth = make_auth(world.server_url)
            async with httpx.AsyncClient(auth=auth) as http:
                with pytest.raises(DiscoveryError) as caught:
                    await http.post(world.server_url, json={})
    assert seen == []
    assert prm_url in str(caught.value)
    assert "not on the MCP server's origin" in str(caught.value)
    assert world.requests == ["POST /mcp"]


async def test_an_allowed_metadata_origin_is_used() -> None:
    async with serve_world(World()) as world:
        body = {"resource": world.server_url, "authorization_servers": [world.issuer]}
        async with other_origin(body) as (elsewhere, seen):
            world.prm_url = f"{elsewhere}/.well-known/oauth-protected-resource"
            auth = make_auth(world.server_url, allowed_metadata_origins=[elsewhere])
            async with httpx.AsyncClient(auth=auth) as http:
                response = await http.post(world.server_url, json={})
    assert response.status_code == 200
    assert seen == ["GET /.well-known/oauth-protected-resource"]
    assert "POST /token" in world.requests


async def test_a_redirect_to_another_origin_is_refused() -> None:
    async with other_origin() as (elsewhere, seen):

        async def moved(request: Request) -> Response:
            return RedirectResponse(f"{elsewhere}/prm", 302)

        async def unauthorized(request: Request) -> Response:
            return JSONResponse({}, 401, {"WWW-Authenticate": 'Bearer error="invalid_token"'})

        app = Starlette(
            routes=[
                Route("/mcp", unauthorized, methods=["POST"]),
                Route("/.well-known/oauth-protected-resource/mcp", moved),
            ]
        )
        async with serving(app) as base:
            auth = make_auth(f"{base}/mcp")
            async with httpx.AsyncClient(auth=auth) as http:
                with pytest.raises(DiscoveryError) as caught:
                    await http.post(f"{base}/mcp", json={})
    assert seen == []
    message = str(caught.value)
    assert f"{elsewhere}/prm" in message and "stays on one origin" in message


async def test_a_redirect_within_the_origin_is_followed() -> None:
    async def moved(request: Request) -> Response:
        return RedirectResponse("/meta/prm.json", 307)

    async def prm(request: Request) -> Response:
        base = f"{request.url.scheme}://{request.url.netloc}"
        return JSONResponse({"resource": f"{base}/mcp", "authorization_servers": [base]})

    app = Starlette(
        routes=[
            Route("/.well-known/oauth-protected-resource/mcp", moved),
            Route("/meta/prm.json", prm),
        ]
    )
    async with serving(app) as base, httpx.AsyncClient() as http:
        found = await discover_resource(http, f"{base}/mcp", None)
    assert found is not None
    assert found.url == f"{base}/.well-known/oauth-protected-resource/mcp"
    assert found.authorization_servers == [base]


class ToLocal(httpx.AsyncBaseTransport):
    """Sends requests for ``PUBLIC`` to the local server at ``base`` (plain HTTP)."""

    def __init__(self, base: str) -> None:
        self.target = httpx.URL(base)
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == "mcp.example.com":
            request.url = request.url.copy_with(
                scheme="http", host=self.target.host, port=self.target.port
            )
        return await self.inner.handle_async_request(request)


async def public_resolver(host: str) -> list[str]:
    return {"mcp.example.com": ["93.184.215.14"], "intranet.example.com": ["10.1.2.3"]}.get(
        host, []
    )


@pytest.mark.parametrize(
    ("endpoint", "kind"),
    [
        ("token_endpoint", "cloud-metadata"),
        ("registration_endpoint", "cloud-metadata"),
        ("authorization_endpoint", "cloud-metadata"),
        ("jwks_uri", "cloud-metadata"),
    ],
)
async def test_a_public_server_naming_cloud_metadata_endpoints_is_refused(
    endpoint: str, kind: str
) -> None:
    target = "https://169.254.169.254/latest/meta-data/iam"
    world = World(metadata_extra={endpoint: target})
    async with serving(build_app(world)) as local:
        world.base = PUBLIC
        auth = make_auth(
            world.server_url, transport=ToLocal(local), resolver=public_resolver, timeout=5.0
        )
        async with httpx.AsyncClient(auth=auth, transport=ToLocal(local)) as http:
            with pytest.raises(DiscoveryError) as caught:
                await http.post(world.server_url, json={})
    message = str(caught.value)
    assert target in message and kind in message and endpoint in message
    assert "POST /register" not in world.requests and "POST /token" not in world.requests


async def test_the_same_public_server_is_authorized_when_its_endpoints_are_public() -> None:
    world = World()
    async with serving(build_app(world)) as local:
        world.base = PUBLIC
        auth = make_auth(
            world.server_url, transport=ToLocal(local), resolver=public_resolver, timeout=5.0
        )
        async with httpx.AsyncClient(auth=auth, transport=ToLocal(local)) as http:
            response = await http.post(world.server_url, json={})
    assert response.status_code == 200
    assert "POST /token" in world.requests


@pytest.mark.parametrize(
    ("issuer", "kind"),
    [
        ("https://169.254.169.254", "cloud-metadata"),
        ("http://metadata.google.internal", "cloud-metadata"),
        ("https://[fd00:ec2::254]", "cloud-metadata"),
        ("https://169.254.10.1", "link-local"),
        ("https://[fe80::1]", "link-local"),
        ("https://127.0.0.1:9", "loopback"),
        ("https://[::ffff:127.0.0.1]", "loopback"),
        ("https://localhost", "loopback"),
        ("https://10.0.0.5", "private"),
        ("https://192.168.1.1", "private"),
        ("https://intranet.example.com", "private"),
    ],
)
async def test_an_authorization_server_on_an_inner_network_is_refused_unrequested(
    issuer: str, kind: str
) -> None:
    guard = OriginGuard(f"{PUBLIC}/mcp", resolver=public_resolver)
    # A transport that fails the test if any request is made: the refusal comes first.
    untouchable = httpx.MockTransport(lambda request: pytest.fail(f"requested {request.url}"))
    async with httpx.AsyncClient(transport=untouchable) as http:
        with pytest.raises(DiscoveryError) as caught:
            await discover_server(http, issuer, guard)
    assert f"refused authorization server at {issuer}" in str(caught.value)
    assert f"a {kind} address" in str(caught.value)


@pytest.mark.parametrize(
    ("server", "issuer"),
    [
        ("http://127.0.0.1:8000/mcp", "http://127.0.0.1:9000"),
        ("http://localhost:8000/mcp", "http://127.0.0.1:9000"),
        ("https://10.0.0.4/mcp", "https://10.9.9.9"),
        ("https://intranet.example.com/mcp", "https://192.168.0.2"),
        (f"{PUBLIC}/mcp", "https://mcp.example.com"),
    ],
)
async def test_an_authorization_server_of_the_servers_own_class_is_allowed(
    server: str, issuer: str
) -> None:
    await OriginGuard(server, resolver=public_resolver).check_address(issuer, "x")


async def test_the_application_may_allow_an_inner_origin_by_name() -> None:
    strict = OriginGuard(f"{PUBLIC}/mcp", resolver=public_resolver)
    with pytest.raises(DiscoveryError):
        await strict.check_address("https://10.0.0.5:8443/token", "token_endpoint")
    allowed = OriginGuard(
        f"{PUBLIC}/mcp", resolver=public_resolver, allowed_origins=["https://10.0.0.5:8443"]
    )
    await allowed.check_address("https://10.0.0.5:8443/token", "token_endpoint")
    with pytest.raises(DiscoveryError):
        await allowed.check_address("https://10.0.0.5:8444/token", "token_endpoint")
