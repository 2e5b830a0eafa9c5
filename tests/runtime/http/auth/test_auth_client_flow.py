"""The OAuth client (``OAuthClientAuth``) against a real resource + authorization server.

The server (``auth_client_kit.World``) runs on uvicorn at 127.0.0.1 and records every request,
so each test asserts what the client fetched, in which order, and what it never sent.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
from auth_client_kit import World, serve_world
from mcpbind.runtime.auth import (
    AuthorizationError,
    AuthorizationResponseError,
    ChallengeError,
    ClientIdentity,
    ClientMetadata,
    DiscoveryError,
    FollowRedirectHandler,
    MemoryTokenStore,
    OAuthClientAuth,
    RegistrationError,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_auth(world: World, **options: Any) -> OAuthClientAuth:
    return OAuthClientAuth(
        world.server_url,
        redirect_handler=FollowRedirectHandler(),
        client_metadata=ClientMetadata(client_name="test"),
        **options,
    )


async def fetch(world: World, auth: OAuthClientAuth) -> httpx.Response:
    async with httpx.AsyncClient(auth=auth) as http:
        return await http.post(world.server_url, json={})


def after_resource(world: World) -> list[str]:
    """The requests that are not to the resource itself."""
    return [line for line in world.requests if not line.endswith(" /mcp")]


async def test_authorization_code_flow_sends_resource_state_and_pkce() -> None:
    async with serve_world(World(scopes_supported=["read", "write"])) as world:
        response = await fetch(world, make_auth(world))
    assert response.status_code == 200
    assert after_resource(world) == [
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-authorization-server",
        "POST /register",
        "GET /authorize",
        "POST /token",
    ]
    (asked,) = world.authorize_requests
    assert asked["resource"] == world.server_url
    assert asked["code_challenge_method"] == "S256"
    assert asked["scope"] == "read write"
    assert len(asked["state"]) >= 32
    (token_request,) = world.token_requests
    assert token_request["resource"] == world.server_url
    assert token_request["grant_type"] == "authorization_code"


async def test_issuer_with_path_tries_oauth_then_openid_insertion_then_append() -> None:
    world = World(issuer_path="/tenant1", metadata_at="openid-append", prm_in_header=False)
    async with serve_world(world):
        response = await fetch(world, make_auth(world))
    assert response.status_code == 200
    assert after_resource(world)[:4] == [
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-authorization-server/tenant1",
        "GET /.well-known/openid-configuration/tenant1",
        "GET /tenant1/.well-known/openid-configuration",
    ]


async def test_prm_falls_back_from_the_path_to_the_root_without_a_header() -> None:
    world = World(prm_at="root", prm_in_header=False, metadata_at="openid")
    async with serve_world(world):
        response = await fetch(world, make_auth(world))
    assert response.status_code == 200
    assert after_resource(world)[:4] == [
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-protected-resource",
        "GET /.well-known/oauth-authorization-server",
        "GET /.well-known/openid-configuration",
    ]


async def test_the_challenge_prm_url_comes_first() -> None:
    async with serve_world(World(prm_at="custom")) as world:
        response = await fetch(world, make_auth(world))
    assert response.status_code == 200
    assert after_resource(world)[0] == "GET /meta/resource.json"
    assert not [r for r in world.requests if "oauth-protected-resource" in r]


async def test_scope_from_the_challenge_wins_over_scopes_supported() -> None:
    world = World(scopes_supported=["a", "b"], challenge_scope="files:read")
    async with serve_world(world):
        await fetch(world, make_auth(world))
    assert world.authorize_requests[0]["scope"] == "files:read"


async def test_no_scope_parameter_when_nothing_names_scopes() -> None:
    async with serve_world(World()) as world:
        await fetch(world, make_auth(world))
    assert "scope" not in world.authorize_requests[0]


async def test_metadata_with_a_foreign_issuer_is_refused() -> None:
    world = World(metadata_issuer="https://evil.example")
    async with serve_world(world):
        with pytest.raises(DiscoveryError, match="another issuer"):
            await fetch(world, make_auth(world))
    assert not [r for r in world.requests if r.split()[1] in ("/register", "/authorize", "/token")]


async def test_prm_for_another_resource_is_refused() -> None:
    world = World(prm_resource="https://evil.example/mcp")
    async with serve_world(world):
        with pytest.raises(DiscoveryError, match="another resource"):
            await fetch(world, make_auth(world))
    assert not [r for r in world.requests if "authorization-server" in r or "/authorize" in r]


async def test_a_server_without_s256_is_refused_before_the_user_is_sent() -> None:
    world = World(pkce_methods=["plain"])
    async with serve_world(world):
        with pytest.raises(AuthorizationError, match="S256"):
            await fetch(world, make_auth(world))
    assert world.authorize_requests == [] and world.token_requests == []


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"wrong_state": True}, "state"),
        ({"iss_in_redirect": "wrong"}, "evil.example"),
        ({"iss_in_redirect": "wrong", "iss_supported": True}, "mix-up"),
        ({"iss_in_redirect": "omit", "iss_supported": True}, "iss parameter"),
    ],
)
async def test_a_bad_redirect_is_refused_and_the_code_never_sent(
    settings: dict[str, Any], message: str
) -> None:
    world = World(**settings)
    async with serve_world(world):
        with pytest.raises(AuthorizationResponseError, match=message):
            await fetch(world, make_auth(world))
    assert len(world.authorize_requests) == 1
    assert world.token_requests == []


async def test_the_right_iss_is_accepted() -> None:
    async with serve_world(World(iss_in_redirect="correct", iss_supported=True)) as world:
        assert (await fetch(world, make_auth(world))).status_code == 200


async def test_a_malformed_challenge_is_refused_and_nothing_is_fetched() -> None:
    async with serve_world(World(malformed_challenge=True)) as world:
        with pytest.raises(ChallengeError, match="unterminated"):
            await fetch(world, make_auth(world))
    assert after_resource(world) == []


async def test_an_expired_token_is_refreshed_with_the_resource() -> None:
    store = MemoryTokenStore()
    async with serve_world(World(expires_in=5)) as world:
        auth = make_auth(world, store=store)
        assert (await fetch(world, auth)).status_code == 200
        assert (await fetch(world, auth)).status_code == 200
    grants = [request["grant_type"] for request in world.token_requests]
    assert grants == ["authorization_code", "refresh_token"]
    assert all(request["resource"] == world.server_url for request in world.token_requests)
    assert world.authorize_requests.__len__() == 1
    stored = await store.load(f"tokens {world.server_url}")
    assert stored is not None and stored["access_token"] == world.issued[-1]


async def test_step_up_asks_for_the_union_of_scopes_and_gives_up_after_the_limit() -> None:
    world = World(challenge_scope="read", needed_scopes={"read", "admin"}, withheld={"admin"})
    async with serve_world(world):
        response = await fetch(world, make_auth(world, max_step_up=2))
    assert response.status_code == 403
    scopes = [request.get("scope") for request in world.authorize_requests]
    assert scopes == ["read", "read admin", "read admin"]


async def test_step_up_succeeds_when_the_new_token_has_the_scope() -> None:
    world = World(challenge_scope="read", needed_scopes={"write"})
    async with serve_world(world):
        response = await fetch(world, make_auth(world))
    assert response.status_code == 200
    assert [r.get("scope") for r in world.authorize_requests] == ["read", "read write"]


async def test_tokens_codes_and_secrets_never_reach_the_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Every logger at DEBUG, through a flow, a refresh and a refusal: no token, verifier or
    secret anywhere. httpcore's own DEBUG wire trace prints response headers, so a redirect's
    Location (the one-time code, useless without the PKCE verifier) shows there and only there.
    """
    caplog.set_level(logging.DEBUG)
    world = World(expires_in=5)
    async with serve_world(world):
        auth = make_auth(world)
        await fetch(world, auth)
        await fetch(world, auth)
        world.wrong_state = True
        with pytest.raises(AuthorizationResponseError) as refused:
            await fetch(world, make_auth(world))
    secrets = [*world.issued, world.client_secret]
    secrets += [request[name] for request in world.token_requests for name in
                ("code_verifier", "refresh_token") if name in request]  # fmt: skip
    codes = [request["code"] for request in world.token_requests if "code" in request]
    assert len(secrets) >= 5 and codes
    logged = caplog.text + str(refused.value)
    ours = "\n".join(
        record.getMessage() for record in caplog.records if not record.name.startswith("httpcore")
    )
    assert "authorized with" in ours
    assert not [secret for secret in secrets if secret in logged]
    assert not [code for code in codes if code in ours + str(refused.value)]


async def test_a_new_authorization_server_means_a_new_registration() -> None:
    """The resource moves to another authorization server: register there, never reuse the
    first one's client (nor its refresh token)."""
    world = World(issuer_path="/as1")
    async with serve_world(world):
        auth = make_auth(world)
        assert (await fetch(world, auth)).status_code == 200
        world.issuer_path = "/as2"
        world.tokens.clear()
        assert (await fetch(world, auth)).status_code == 200
    assert world.registered == {"client-1": f"{world.base}/as1", "client-2": f"{world.base}/as2"}
    assert [r["client_id"] for r in world.authorize_requests] == ["client-1", "client-2"]
    assert [r["client_id"] for r in world.token_requests] == ["client-1", "client-2"]
    assert [r["grant_type"] for r in world.token_requests] == ["authorization_code"] * 2


async def test_a_pre_registered_client_is_never_presented_to_another_server() -> None:
    world = World(issuer_path="/as1")
    async with serve_world(world):
        world.registered["pre"] = world.issuer
        auth = make_auth(world, client=ClientIdentity("pre", world.client_secret))
        assert (await fetch(world, auth)).status_code == 200
        world.issuer_path = "/as2"
        world.tokens.clear()
        with pytest.raises(RegistrationError, match="belongs to"):
            await fetch(world, auth)
    assert [r["client_id"] for r in world.authorize_requests] == ["pre"]
    assert len(world.token_requests) == 1
    assert "POST /register" not in world.requests
