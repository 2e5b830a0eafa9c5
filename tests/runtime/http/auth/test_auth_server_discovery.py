"""A protected server tells a client without a usable token where to get one, and refuses
malformed credentials with a clear 400 or 401 (never a 500), over a real uvicorn.

The challenge's ``resource_metadata`` URL, and both well-known forms (RFC 9728), must really
serve the Protected Resource Metadata naming the test authorization server, whose own
metadata (RFC 8414) must then be reachable: the whole discovery path a client walks.
"""

from __future__ import annotations

import re
import sys

import httpx
import pytest
from auth_server_kit import protected, whoami_2025
from httpkit import ACCEPT_BOTH, INITIALIZE, raw_request
from mcpbind.runtime.auth.server import AccessToken, JWTVerifier, ResourceServer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def params(header: str) -> dict[str, str]:
    """The auth-params of a ``Bearer`` challenge (quoted values only, as we send them)."""
    assert header.startswith("Bearer "), header
    return dict(re.findall(r'(\w+)="([^"]*)"', header))


async def test_no_token_gets_a_challenge_whose_urls_serve_the_metadata() -> None:
    async with protected() as setup, httpx.AsyncClient() as http:
        refused = await http.post(setup.url, json=INITIALIZE, headers=ACCEPT_BOTH)
        assert refused.status_code == 401
        challenge = params(refused.headers["www-authenticate"])
        assert "error" not in challenge  # RFC 6750 3.1: no error code without credentials
        assert challenge["scope"] == "mcp:tools"
        metadata_url = challenge["resource_metadata"]
        assert metadata_url == f"{setup.base}/.well-known/oauth-protected-resource/mcp"
        assert refused.json()["error"]["message"].startswith("Unauthorized:")

        for url in (metadata_url, f"{setup.base}/.well-known/oauth-protected-resource"):
            document = await http.get(url)
            assert document.status_code == 200, url
            assert document.headers["content-type"] == "application/json"
            assert document.headers["access-control-allow-origin"] == "*"
            assert document.json() == {
                "resource": setup.url,
                "authorization_servers": [setup.authorization.issuer],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["mcp:tools"],
            }
        issuer = document.json()["authorization_servers"][0]
        as_metadata = await http.get(f"{issuer}/.well-known/oauth-authorization-server")
        assert as_metadata.json()["issuer"] == issuer

        wrong_method = await http.post(metadata_url)
        assert wrong_method.status_code == 405
        # The well-known path of another resource is not ours to answer.
        other = await http.get(f"{setup.base}/.well-known/oauth-protected-resource/other")
        assert other.status_code == 404


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_every_method_needs_the_token(method: str) -> None:
    async with protected() as setup, httpx.AsyncClient() as http:
        headers = {"accept": "text/event-stream", "mcp-session-id": "x"}
        refused = await http.request(method, setup.url, headers=headers)
        assert refused.status_code == 401
        assert "resource_metadata=" in refused.headers["www-authenticate"]


MALFORMED = [
    (b"Bearer", 400, "the Bearer scheme without a token"),
    (b"Bearer    ", 400, "the Bearer scheme without a token"),
    (b"Bearer two tokens", 400, "characters RFC 6750 does not allow"),
    ("Bearer tok\u00e9n".encode("latin-1"), 400, "characters RFC 6750 does not allow"),
    (b"Bearer ab\x85cd", 400, "(control characters)"),
    (b"Bearer\tabcd", 400, "(control characters)"),
    (b"Basic dXNlcjpwYXNz", 401, "not Basic"),
    (b"Digest x=1", 401, "not Digest"),
    (b"Bearer " + b"a" * 20_000, 400, "longer than"),
]


async def test_malformed_authorization_headers_on_the_wire() -> None:
    """Written byte for byte, since clients refuse to send most of these: each gets a clear
    400 (``invalid_request``) or, for another scheme, the plain 401 challenge; never a 500.
    (C0 control characters and DEL never reach the app: uvicorn answers 400 itself.)"""
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    json_headers = [(b"content-type", b"application/json"),
                    (b"accept", b"application/json, text/event-stream")]  # fmt: skip
    async with protected() as setup:
        for value, status, needle in MALFORMED:
            got, payload = await raw_request(
                setup.base, "POST", [*json_headers, (b"authorization", value)], body
            )
            assert (got, needle) == (status, needle) and needle.encode() in payload, payload
        token = setup.good_token().encode()
        twice = [(b"authorization", b"Bearer " + token)] * 2
        got, payload = await raw_request(setup.base, "POST", [*json_headers, *twice], body)
        assert (got, b"more than one Authorization header" in payload) == (400, True)


async def test_refusals_carry_the_challenge_and_the_oauth_error() -> None:
    async with protected() as setup, httpx.AsyncClient() as http:
        for value, status, oauth in [("Bearer a b", 400, "invalid_request"),
                                     ("Basic dXNlcjpwYXNz", 401, None)]:  # fmt: skip
            headers = {**ACCEPT_BOTH, "authorization": value}
            refused = await http.post(setup.url, json=whoami_2025(), headers=headers)
            assert refused.status_code == status
            challenge = params(refused.headers["www-authenticate"])
            assert challenge["resource_metadata"] == setup.resource_server.resource_metadata_url
            assert challenge.get("error") == oauth
            data = refused.json()["error"].get("data")
            assert (data or {}).get("error") == oauth


class Nobody:
    async def verify(self, token: str) -> AccessToken | None:
        return None


async def test_resource_server_configuration_is_checked() -> None:
    verifier = Nobody()
    with pytest.raises(ValueError, match="at least one authorization server"):
        ResourceServer(verifier, resource="https://mcp.example/mcp", authorization_servers=[])
    with pytest.raises(ValueError, match="absolute http"):
        ResourceServer(verifier, resource="mcp.example/mcp", authorization_servers=["x"])
    with pytest.raises(ValueError, match="fragment"):
        ResourceServer(verifier, resource="https://mcp.example/mcp#a", authorization_servers=["x"])
    with pytest.raises(ValueError, match="not a valid OAuth scope"):
        ResourceServer(
            verifier,
            resource="https://mcp.example/mcp",
            authorization_servers=["https://as.example"],
            required_scopes=['bad"scope'],
        )
    with pytest.raises(ValueError, match="exactly one of jwks_url and keys"):
        JWTVerifier("https://as.example")
    with pytest.raises(ValueError, match="'none' algorithm"):
        JWTVerifier("https://as.example", jwks_url="https://as.example/jwks", algorithms=["none"])
    canonical = ResourceServer(
        verifier,
        resource="HTTPS://MCP.Example/mcp/",
        authorization_servers=["https://as.example"],
    )
    assert canonical.resource == "https://mcp.example/mcp"
    assert canonical.resource_metadata_url == (
        "https://mcp.example/.well-known/oauth-protected-resource/mcp"
    )


def test_the_jwt_verifier_names_the_extra_when_joserfc_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("joserfc", "joserfc.jwt", "joserfc.jwk", "joserfc.errors"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r"pip install 'mcpbind\[auth\]'"):
        JWTVerifier("https://as.example", jwks_url="https://as.example/jwks")
