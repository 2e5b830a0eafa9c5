"""DPoP end to end (RFC 9449, SEP-1932): our OAuth client against our resource server, on real
uvicorn servers on 127.0.0.1, with the test authorization server binding tokens to the
client's key; then bad proofs of every kind, each refused with its RFC 9449 error while the
client's session and other requests go on.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
import time
from typing import Any

import httpx
import pytest
from auth_server_kit import Setup, modern_whoami_headers, protected, whoami_2025, whoami_2026
from httpkit import ACCEPT_BOTH
from joserfc import jwt
from mcpbind.generated.v2025_11_25 import types
from mcpbind.generated.v2026_07_28 import types as modern_types
from mcpbind.runtime import Client
from mcpbind.runtime.auth import DPoPKey, FileTokenStore, FollowRedirectHandler, OAuthClientAuth
from mcpbind.runtime.auth._dpop import access_token_hash
from mcpbind.runtime.auth.server import DPoPVerifier
from mcpbind.runtime.http import sse_client, streamable_http_client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

REDIRECT = "http://127.0.0.1:1/callback"
ERAS = ["2025-11-25", "2026-07-28"]


def whoami(revision: str) -> Any:
    params = types if revision == "2025-11-25" else modern_types
    return params.CallToolRequestParams(name="whoami", arguments={})


def challenge(response: httpx.Response) -> tuple[int, str, str | None]:
    """Status, the challenge's scheme and its error."""
    header = response.headers.get("www-authenticate", "")
    error = header.split('error="', 1)[1].split('"', 1)[0] if 'error="' in header else None
    return response.status_code, header.split(" ", 1)[0], error


def forged(key: DPoPKey, token: str, url: str, **claims: Any) -> str:
    """A proof by ``key`` for POST ``url`` with any claim replaced (None: left out)."""
    base: dict[str, Any] = {"jti": secrets.token_urlsafe(8), "htm": "POST", "htu": url,
                            "iat": int(time.time()), "ath": access_token_hash(token)}  # fmt: skip
    base.update(claims)
    body = {name: value for name, value in base.items() if value is not None}
    header = {"typ": "dpop+jwt", "alg": key.algorithm, "jwk": key.public_jwk}
    return jwt.encode(header, body, key._key, algorithms=[key.algorithm])


def claims_of(compact: str) -> dict[str, Any]:
    """A JWT's claims, unverified (the test reads what it was sent)."""
    payload = compact.split(".")[1]
    found: dict[str, Any] = json.loads(
        base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    )
    return found


def bound_token(setup: Setup, key: DPoPKey) -> str:
    return setup.good_token(extra={"cnf": {"jkt": key.thumbprint}})


async def post(
    http: httpx.AsyncClient, setup: Setup, token: str, proof: str | None, scheme: str = "DPoP"
) -> httpx.Response:
    headers = modern_whoami_headers(authorization=f"{scheme} {token}")
    if proof is not None:
        headers["dpop"] = proof
    return await http.post(setup.url, json=whoami_2026(), headers=headers)


@pytest.mark.parametrize("revision", ERAS)
async def test_our_client_gets_a_bound_token_and_presents_it(revision: str) -> None:
    async with protected(as_dpop=DPoPVerifier(), dpop=DPoPVerifier(), dpop_required=True) as setup:
        auth = OAuthClientAuth(setup.url, redirect_handler=FollowRedirectHandler(REDIRECT))
        async with Client(
            streamable_http_client(setup.url, auth=auth), protocol_version=revision
        ) as client:
            for _ in range(3):  # a fresh proof for each request: no jti is replayed
                result = await client.stub.call_tool(whoami(revision))
                assert json.loads(result.content[0].text)["subject"] == "user-1"
        token = await auth.token()
        assert token is not None and token.token_type == "DPoP" and token.dpop_key is not None
        assert (
            DPoPKey.from_jwk(token.dpop_key).thumbprint
            == (claims_of(token.access_token)["cnf"]["jkt"])
        )
        assert setup.authorization.token_proofs[0] is not None
        assert len(setup.authorization.token_requests) == 1


@pytest.mark.parametrize("revision", ERAS)
async def test_nonces_at_both_servers_cost_one_retry_each(revision: str) -> None:
    async with protected(
        as_dpop=DPoPVerifier(require_nonce=True),
        dpop=DPoPVerifier(require_nonce=True),
        dpop_required=True,
    ) as setup:
        auth = OAuthClientAuth(setup.url, redirect_handler=FollowRedirectHandler(REDIRECT))
        async with Client(
            streamable_http_client(setup.url, auth=auth), protocol_version=revision
        ) as client:
            result = await client.stub.call_tool(whoami(revision))
            assert json.loads(result.content[0].text)["subject"] == "user-1"
        nonces = [claims_of(p).get("nonce") for p in setup.authorization.token_proofs if p]
        assert nonces[0] is None and nonces[1] is not None and len(nonces) == 2


async def test_the_key_is_stored_with_the_tokens_and_reused(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    path = tmp_path / "tokens.json"
    async with protected(as_dpop=DPoPVerifier(), dpop=DPoPVerifier(), dpop_required=True) as setup:
        for _ in range(2):  # the second run starts from the file: no new token, same key
            auth = OAuthClientAuth(
                setup.url, redirect_handler=FollowRedirectHandler(REDIRECT),
                store=FileTokenStore(path),
            )  # fmt: skip
            async with Client(streamable_http_client(setup.url, auth=auth)) as client:
                await client.stub.call_tool(whoami("2025-11-25"))
        assert len(setup.authorization.token_requests) == 1
        (entry,) = [v for k, v in json.loads(path.read_text()).items() if k.startswith("tokens")]
        assert entry["token_type"] == "DPoP" and "d" in entry["dpop_key"]
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        assert entry["dpop_key"]["d"] not in caplog.text


async def test_bad_proofs_of_every_kind_get_their_error_and_nothing_else_breaks() -> None:
    async with protected(dpop=DPoPVerifier(), dpop_required=True) as setup:
        key, thief = DPoPKey.generate(), DPoPKey.generate()
        token = bound_token(setup, key)
        url = setup.url
        cases: dict[str, tuple[str | None, str]] = {
            "wrong method": (forged(key, token, url, htm="GET"), "invalid_dpop_proof"),
            "wrong URL": (forged(key, token, f"{setup.base}/other"), "invalid_dpop_proof"),
            "stale iat": (forged(key, token, url, iat=int(time.time()) - 600), "invalid_dpop_proof"),
            "missing ath": (forged(key, token, url, ath=None), "invalid_dpop_proof"),
            "ath of another token": (
                forged(key, token, url, ath=access_token_hash("x")), "invalid_dpop_proof",
            ),
            "no proof": (None, "invalid_dpop_proof"),
            "not a JWT": ("not-a-jwt", "invalid_dpop_proof"),
            # A valid proof by another key: the token is bound to ``key``.
            "wrong key": (thief.proof("POST", url, access_token=token), "invalid_token"),
        }  # fmt: skip
        async with httpx.AsyncClient(timeout=10) as http:
            replayed = key.proof("POST", url, access_token=token)
            assert (await post(http, setup, token, replayed)).status_code == 200
            for name, (proof, error) in [*cases.items(), ("replayed jti", (replayed, ""))]:
                response = await post(http, setup, token, proof)
                expected = error or "invalid_dpop_proof"
                assert challenge(response) == (401, "DPoP", expected), name
                assert response.json()["error"]["data"]["error"] == expected, name
                assert 'algs="' in response.headers["www-authenticate"], name
            two = [("dpop", key.proof("POST", url, access_token=token))] * 2
            headers = [*modern_whoami_headers(authorization=f"DPoP {token}").items(), *two]
            response = await http.post(url, json=whoami_2026(), headers=headers)
            assert challenge(response) == (401, "DPoP", "invalid_dpop_proof")
            # The stolen-token case: a DPoP-bound token presented as a bearer token.
            response = await post(http, setup, token, None, scheme="Bearer")
            assert challenge(response)[::2] == (401, None)  # a DPoP-only server: no bearer
            # After all that, the same token with a good proof still works.
            good = await post(http, setup, token, key.proof("POST", url, access_token=token))
            assert good.status_code == 200, good.text


async def test_a_session_goes_on_while_its_token_is_misused() -> None:
    async with protected(as_dpop=DPoPVerifier(), dpop=DPoPVerifier()) as setup:
        auth = OAuthClientAuth(setup.url, redirect_handler=FollowRedirectHandler(REDIRECT))
        sessions: list[str] = []

        async def note(response: httpx.Response) -> None:
            sessions.extend(response.headers.get_list("mcp-session-id"))

        pool = httpx.AsyncClient(auth=auth, event_hooks={"response": [note]}, timeout=10)
        async with pool, Client(streamable_http_client(setup.url, http_client=pool)) as client:
            await client.stub.call_tool(whoami("2025-11-25"))
            token = await auth.token()
            assert token is not None and token.dpop_bound
            session = {"mcp-session-id": sessions[0], **ACCEPT_BOTH,
                       "mcp-protocol-version": "2025-11-25"}  # fmt: skip
            async with httpx.AsyncClient(timeout=10) as http:
                stolen = {**session, "authorization": f"Bearer {token.access_token}"}
                response = await http.post(setup.url, json=whoami_2025(7), headers=stolen)
                assert challenge(response)[::2] == (401, "invalid_token")
                assert "DPoP" in response.headers["www-authenticate"]
                thief = DPoPKey.generate()
                proof = thief.proof("POST", setup.url, access_token=token.access_token)
                foreign = {**session, "authorization": f"DPoP {token.access_token}", "dpop": proof}
                response = await http.post(setup.url, json=whoami_2025(8), headers=foreign)
                assert challenge(response) == (401, "DPoP", "invalid_token")
            result = await client.stub.call_tool(whoami("2025-11-25"))
            assert json.loads(result.content[0].text)["subject"] == "user-1"


async def test_bearer_and_dpop_side_by_side() -> None:
    """``dpop`` without ``dpop_required``: unbound bearer tokens still work, an unbound token
    is not taken with the DPoP scheme, and challenges offer both schemes."""
    verifier = DPoPVerifier(algorithms=["ES256", "PS256"])
    async with protected(dpop=verifier) as setup, httpx.AsyncClient(timeout=10) as http:
        plain = setup.good_token()
        assert (await post(http, setup, plain, None, scheme="Bearer")).status_code == 200
        key = DPoPKey.generate()
        proof = key.proof("POST", setup.url, access_token=plain)
        assert challenge(await post(http, setup, plain, proof)) == (
            401,
            "DPoP",
            "invalid_token",
        )
        refused = await http.post(setup.url, json=whoami_2026(), headers=modern_whoami_headers())
        header = refused.headers["www-authenticate"]
        assert header.startswith("Bearer ") and ', DPoP scope="mcp:tools"' in header
        assert 'algs="ES256 PS256"' in header
        metadata = (await http.get(setup.resource_server.resource_metadata_url)).json()
        assert metadata["dpop_signing_alg_values_supported"] == ["ES256", "PS256"]
        assert "dpop_bound_access_tokens_required" not in metadata


async def test_a_bound_refresh_token_is_refreshed_with_a_proof_by_the_same_key() -> None:
    async with protected(as_dpop=DPoPVerifier(), dpop=DPoPVerifier(), dpop_required=True) as setup:
        auth = OAuthClientAuth(setup.url, redirect_handler=FollowRedirectHandler(REDIRECT))
        first = await auth.authorize()
        stored = first.to_dict() | {"expires_at": time.time() - 1}  # due for a refresh
        await auth.store.save(f"tokens {setup.url}", stored)
        async with Client(streamable_http_client(setup.url, auth=auth)) as client:
            await client.stub.call_tool(whoami("2025-11-25"))
        kinds = [form["grant_type"] for form in setup.authorization.token_requests]
        assert kinds == ["authorization_code", "refresh_token"]
        proofs = [claims_of(proof) for proof in setup.authorization.token_proofs if proof]
        assert len(proofs) == 2  # the refresh carried a proof too
        fresh = await auth.token()
        assert fresh is not None and fresh.access_token != first.access_token
        assert fresh.dpop_key == first.dpop_key  # still bound to the same key
        assert claims_of(fresh.access_token)["cnf"] == claims_of(first.access_token)["cnf"]


async def test_the_legacy_transport_with_dpop() -> None:
    """HTTP+SSE: the GET that opens the stream and each POST carry their own proofs."""
    async with protected(
        as_dpop=DPoPVerifier(), dpop=DPoPVerifier(), dpop_required=True, legacy=True
    ) as setup:
        auth = OAuthClientAuth(setup.url, redirect_handler=FollowRedirectHandler(REDIRECT))
        async with Client(sse_client(f"{setup.base}/sse", auth=auth)) as client:
            result = await client.stub.call_tool(whoami("2025-11-25"))
            assert json.loads(result.content[0].text)["subject"] == "user-1"


async def test_a_success_brings_a_fresh_nonce_when_nonces_are_required() -> None:
    """RFC 9449 8.2: the next nonce comes with a success, before the one in use lapses, so the
    client never needs the use_dpop_nonce round trip again (its prover learns every response's
    ``DPoP-Nonce``)."""
    clock = [time.time()]
    verifier = DPoPVerifier(
        require_nonce=True, nonce_lifetime=60, max_age=300, clock=lambda: clock[0]
    )
    async with (
        protected(dpop=verifier, dpop_required=True) as setup,
        httpx.AsyncClient(timeout=15) as http,
    ):
        key = DPoPKey.generate()
        token = bound_token(setup, key)

        def proof(nonce: str) -> str:
            return key.proof("POST", setup.url, access_token=token, nonce=nonce)

        first = verifier.new_nonce()
        clock[0] += 30
        answered = await post(http, setup, token, proof(first))
        assert answered.status_code == 200, answered.text
        fresh = answered.headers["dpop-nonce"]
        assert fresh != first and verifier.nonce_valid(fresh)
        clock[0] += 45  # the first nonce has lapsed (75 s > 60), the fresh one has not (45 s)
        assert challenge(await post(http, setup, token, proof(first))) == (
            401, "DPoP", "use_dpop_nonce"
        )  # fmt: skip
        assert (await post(http, setup, token, proof(fresh))).status_code == 200
    # Without required nonces, none is handed out.
    async with (
        protected(dpop=DPoPVerifier(), dpop_required=True) as setup,
        httpx.AsyncClient(timeout=15) as http,
    ):
        key = DPoPKey.generate()
        token = bound_token(setup, key)
        plain = await post(http, setup, token, key.proof("POST", setup.url, access_token=token))
        assert plain.status_code == 200 and "dpop-nonce" not in plain.headers
