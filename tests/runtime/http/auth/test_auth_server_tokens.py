"""Which tokens a protected server takes, in both eras, with both verifiers.

Tokens come from the test authorization server (``mint`` makes the bad ones on purpose);
the JWT verifier fetches its keys from that server's JWKS, the introspection verifier asks
its RFC 7662 endpoint. A valid token reaches the tool, whose handler sees the identity.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from auth_server_as import RS_CLIENT
from auth_server_kit import (
    modern_whoami_headers,
    protected,
    sudo_needs_admin,
    whoami_2025,
    whoami_2026,
)
from httpkit import ACCEPT_BOTH, INITIALIZE, answers, session_headers
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from mcpbind.generated.v2025_11_25 import types
from mcpbind.generated.v2026_07_28 import types as modern_types
from mcpbind.runtime import Client
from mcpbind.runtime.auth.server import (
    IntrospectionVerifier,
    JWTVerifier,
    TokenError,
    VerifierUnavailable,
)
from mcpbind.runtime.http import streamable_http_client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def challenge_error(response: httpx.Response) -> tuple[int, str | None, str]:
    header = response.headers.get("www-authenticate", "")
    error = header.split('error="', 1)[1].split('"', 1)[0] if 'error="' in header else None
    return response.status_code, error, header


async def modern_whoami(http: httpx.AsyncClient, url: str, token: str) -> httpx.Response:
    headers = modern_whoami_headers(authorization=f"Bearer {token}")
    return await http.post(url, json=whoami_2026(), headers=headers)


def seen(result: Any) -> dict[str, Any]:
    content = result["result"]["content"] if isinstance(result, dict) else result.content
    text = content[0]["text"] if isinstance(content[0], dict) else content[0].text
    found: dict[str, Any] = json.loads(text)
    return found


@pytest.mark.parametrize("verifier", ["jwt", "introspection"])
async def test_a_valid_token_reaches_the_tool_in_both_eras(verifier: str) -> None:
    async with protected(verifier) as setup:
        token = setup.good_token("mcp:tools extra")
        expected = {"subject": "user-1", "client_id": "test-client",
                    "scopes": ["extra", "mcp:tools"], "audience": [setup.url]}  # fmt: skip
        headers = setup.bearer(token)
        async with Client(streamable_http_client(setup.url, headers=headers)) as client:
            assert client.revision == "2025-11-25"
            result = await client.stub.call_tool(types.CallToolRequestParams(name="whoami"))
            assert seen(result) == expected
        modern = Client(
            streamable_http_client(setup.url, headers=headers), protocol_version="2026-07-28"
        )
        async with modern:
            assert modern.revision == "2026-07-28"
            params = modern_types.CallToolRequestParams(name="whoami")
            assert seen(await modern.stub.call_tool(params)) == expected
        async with httpx.AsyncClient() as http:
            raw = await modern_whoami(http, setup.url, token)
            assert raw.status_code == 200
            assert seen(answers(raw)[0]) == expected


BAD_TOKENS = {
    "wrong audience": (
        lambda s: s.authorization.mint("http://127.0.0.1:1/mcp"),
        401,
        "invalid_token",
    ),
    "no audience": (lambda s: s.authorization.mint(None), 401, "invalid_token"),
    "expired": (lambda s: s.good_token(lifetime=-120), 401, "invalid_token"),
    "not yet valid": (lambda s: s.good_token(not_before=time.time() + 600), 401, "invalid_token"),
    "wrong issuer": (lambda s: s.good_token(issuer="https://evil.example"), 401, "invalid_token"),
    "bad signature": (
        lambda s: s.good_token(key=RSAKey.generate_key(2048, {"kid": "k1"})),
        401,
        "invalid_token",
    ),
    "unknown kid": (
        lambda s: s.good_token(key=RSAKey.generate_key(2048, {"kid": "nobody"})),
        401,
        "invalid_token",
    ),
    "not a JWT": (lambda s: "abc.def", 401, "invalid_token"),
    "missing scope": (lambda s: s.good_token("mcp:other"), 403, "insufficient_scope"),
}


@pytest.mark.parametrize("case", list(BAD_TOKENS))
async def test_bad_tokens_are_refused_in_both_eras(case: str) -> None:
    make, status, error = BAD_TOKENS[case]
    async with protected() as setup, httpx.AsyncClient() as http:
        token = make(setup)
        handshake = await http.post(
            setup.url, json=INITIALIZE, headers=setup.bearer(token, **ACCEPT_BOTH)
        )
        stateless = await modern_whoami(http, setup.url, token)
        for response in (handshake, stateless):
            got_status, got_error, header = challenge_error(response)
            assert (got_status, got_error) == (status, error), response.text
            assert 'scope="mcp:tools"' in header
            assert f'resource_metadata="{setup.resource_server.resource_metadata_url}"' in header
            assert token not in response.text  # the token is never echoed


async def test_a_rotated_key_is_fetched_when_a_token_names_it() -> None:
    async with protected() as setup, httpx.AsyncClient() as http:
        assert (await modern_whoami(http, setup.url, setup.good_token())).status_code == 200
        setup.authorization.rotate()
        fresh = await modern_whoami(http, setup.url, setup.good_token())
        assert fresh.status_code == 200, fresh.text


async def test_scope_hierarchy_and_extra_audiences() -> None:
    async with (
        protected(
            required_scopes=["mcp:read"],
            implied_scopes={"mcp:admin": ["mcp:write"], "mcp:write": ["mcp:read"]},
            audiences=["https://mcp.example/mcp"],
        ) as setup,
        httpx.AsyncClient() as http,
    ):
        admin = setup.good_token("mcp:admin")
        assert (await modern_whoami(http, setup.url, admin)).status_code == 200
        other = setup.authorization.mint("HTTPS://MCP.EXAMPLE/mcp/", "mcp:read")
        assert (await modern_whoami(http, setup.url, other)).status_code == 200
        refused = await modern_whoami(http, setup.url, setup.good_token("mcp:tools"))
        assert challenge_error(refused)[:2] == (403, "insufficient_scope")
        assert 'scope="mcp:read"' in refused.headers["www-authenticate"]


async def test_introspection_active_inactive_and_unreachable() -> None:
    async with protected("introspection") as setup, httpx.AsyncClient() as http:
        opaque = setup.authorization.mint_opaque(setup.url)
        assert (await modern_whoami(http, setup.url, opaque)).status_code == 200
        setup.authorization.revoked.add(opaque)
        inactive = await modern_whoami(http, setup.url, opaque)
        assert challenge_error(inactive)[:2] == (401, "invalid_token")
        unknown = await modern_whoami(http, setup.url, "never-issued")
        assert challenge_error(unknown)[:2] == (401, "invalid_token")
        foreign = setup.authorization.mint_opaque("https://elsewhere.example/mcp")
        assert challenge_error(await modern_whoami(http, setup.url, foreign))[:2] == (
            401,
            "invalid_token",
        )
        assert setup.authorization.introspections == 4
        # The endpoint gone (a closed port): 503, not a 401 that would send the user to log in again.
        setup.resource_server.verifier.endpoint = "http://127.0.0.1:9/introspect"  # type: ignore[attr-defined]
        down = await modern_whoami(http, setup.url, setup.authorization.mint_opaque(setup.url))
        assert down.status_code == 503
        assert "could not be checked" in down.json()["error"]["message"]


async def test_a_jwks_endpoint_that_fails_gives_503() -> None:
    async with protected() as setup, httpx.AsyncClient() as http:
        setup.resource_server.verifier.jwks_url = "http://127.0.0.1:9/jwks"  # type: ignore[attr-defined]
        down = await modern_whoami(http, setup.url, setup.good_token())
        assert down.status_code == 503


async def test_an_operation_needing_more_scopes_gets_a_step_up_challenge() -> None:
    """403 ``insufficient_scope`` naming every scope the operation needs (2026-07-28: all in
    one challenge), in both eras; with the scope granted, the same call goes through."""
    async with protected(operation_scopes=sudo_needs_admin) as setup, httpx.AsyncClient() as http:
        sudo_2026 = whoami_2026()
        sudo_2026["params"]["arguments"] = {"sudo": True}
        for scopes, status in [("mcp:tools", 403), ("mcp:tools mcp:admin", 200)]:
            token = setup.good_token(scopes)
            headers = modern_whoami_headers(authorization=f"Bearer {token}")
            response = await http.post(setup.url, json=sudo_2026, headers=headers)
            assert response.status_code == status, response.text
            if status == 403:
                header = response.headers["www-authenticate"]
                assert 'error="insufficient_scope"' in header
                assert 'scope="mcp:tools mcp:admin"' in header
        plain = setup.good_token("mcp:tools")
        assert (await modern_whoami(http, setup.url, plain)).status_code == 200

        opened = await http.post(
            setup.url, json=INITIALIZE, headers=setup.bearer(plain, **ACCEPT_BOTH)
        )
        sid = opened.headers["mcp-session-id"]
        sudo_2025 = whoami_2025()
        sudo_2025["params"]["arguments"] = {"sudo": True}
        in_session = setup.bearer(plain, **session_headers(sid))
        refused = await http.post(setup.url, json=sudo_2025, headers=in_session)
        assert challenge_error(refused)[:2] == (403, "insufficient_scope")
        stepped_up = setup.bearer(setup.good_token("mcp:tools mcp:admin"), **session_headers(sid))
        allowed = await http.post(setup.url, json=sudo_2025, headers=stepped_up)
        assert allowed.status_code == 200
        assert json.loads(answers(allowed)[0]["result"]["content"][0]["text"])["scopes"] == [
            "mcp:admin",
            "mcp:tools",
        ]


async def test_verifiers_directly_given_keys_type_exp_and_client_credentials() -> None:
    """The JWT verifier with keys given up front (no fetching: an unknown kid stays unknown),
    the RFC 9068 ``typ`` check and the required ``exp``; the introspection verifier with the
    wrong credentials of its own (the AS says 401: that is our misconfiguration, so 503)."""
    async with protected() as setup:
        issuer = setup.authorization.issuer
        published = KeySet(list(setup.authorization.keys)).as_dict(private=False)
        verifier = JWTVerifier(issuer, keys=published, token_type="at+jwt")
        token = await verifier.verify(setup.good_token())
        assert token is not None and token.subject == "user-1" and token.issuer == issuer
        assert "claims=" not in repr(token)  # what a log line of it shows: no claims, no token
        setup.authorization.rotate()
        with pytest.raises(TokenError, match="unknown key"):
            await verifier.verify(setup.good_token())
        key = setup.authorization.keys[0]
        now = int(time.time())
        plain = jwt.encode({"alg": "RS256", "kid": key.kid},
                           {"iss": issuer, "aud": setup.url, "exp": now + 60}, key)  # fmt: skip
        with pytest.raises(TokenError, match="type is not 'at\\+jwt'"):
            await verifier.verify(plain)
        no_exp = jwt.encode({"alg": "RS256", "kid": key.kid}, {"iss": issuer}, key)
        with pytest.raises(TokenError, match="lacks the claim 'exp'"):
            await JWTVerifier(issuer, keys=published).verify(no_exp)
        assert await JWTVerifier(issuer, keys=published, require_exp=False).verify(no_exp)

        wrong = IntrospectionVerifier(
            f"{issuer}/introspect", client_id=RS_CLIENT[0], client_secret="wrong"
        )
        with pytest.raises(VerifierUnavailable, match="HTTP 401"):
            await wrong.verify(setup.good_token())
        with pytest.raises(ValueError, match="needs a client_secret"):
            IntrospectionVerifier(f"{issuer}/introspect", client_id="x")


async def test_remembered_tokens_still_expire_and_go_with_their_key() -> None:
    """A verified token is remembered, but not past its expiry, nor past a fetch of the key
    set that no longer has its key."""
    async with protected() as setup:
        issuer = setup.authorization.issuer
        verifier = JWTVerifier(issuer, jwks_url=f"{issuer}/jwks", leeway=120, refetch_interval=0)
        late = setup.good_token(lifetime=-60)  # expired, but within the leeway
        assert await verifier.verify(late) is not None
        verifier.leeway = 0
        with pytest.raises(TokenError, match="expired"):
            await verifier.verify(late)

        token = setup.good_token()
        assert await verifier.verify(token) is not None
        setup.authorization.keys = [RSAKey.generate_key(2048, {"kid": "k9"})]  # k1 withdrawn
        with pytest.raises(TokenError, match="unknown key"):
            await verifier.verify(setup.good_token(key=RSAKey.generate_key(2048, {"kid": "k7"})))
        with pytest.raises(TokenError, match="unknown key"):  # the refetch forgot it
            await verifier.verify(token)


async def test_introspection_answers_are_reused_only_when_asked() -> None:
    async with protected() as setup:
        issuer = setup.authorization.issuer
        endpoint = f"{issuer}/introspect"
        eager = IntrospectionVerifier(endpoint, client_id=RS_CLIENT[0], client_secret=RS_CLIENT[1])
        cached = IntrospectionVerifier(
            endpoint, client_id=RS_CLIENT[0], client_secret=RS_CLIENT[1], cache_ttl=60
        )
        token = setup.authorization.mint_opaque(setup.url)
        for verifier in (eager, cached, eager, cached):
            assert await verifier.verify(token) is not None
        assert setup.authorization.introspections == 3  # the cached verifier asked once
        setup.authorization.revoked.add(token)
        assert await eager.verify(token) is None  # revocation counts at once without a cache
        assert await cached.verify(token) is not None  # ... and after cache_ttl with one
        assert await cached.verify(setup.authorization.mint_opaque(setup.url, lifetime=-5)) is None
