"""DPoP (RFC 9449, SEP-1932) with the grants no user takes part in, end to end: our
``ClientCredentialsAuth`` (a secret sent Basic or in the form, or a ``private_key_jwt``
assertion) and ``JwtBearerAuth`` against the test authorization server's machine grants
(``auth_server_machines``) and our resource server, each on real uvicorn on 127.0.0.1, in both
protocol eras. Each test fails if that grant's token request lost its proof: the token would
come back unbound, and the resource server here takes DPoP-bound tokens only.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from auth_server_kit import Setup, modern_whoami_headers, protected, whoami_2026
from auth_server_machines import MachineAuthorizationServer
from joserfc.jwk import ECKey, RSAKey
from mcpbind.generated.v2025_11_25 import types
from mcpbind.generated.v2026_07_28 import types as modern_types
from mcpbind.runtime import Client
from mcpbind.runtime.auth import (
    ClientCredentialsAuth,
    DPoPKey,
    FileTokenStore,
    JwtBearerAuth,
    OAuthFlow,
    TokenRequestError,
    TokenStore,
)
from mcpbind.runtime.auth._dpop import access_token_hash
from mcpbind.runtime.auth.server import DPoPVerifier
from mcpbind.runtime.http import streamable_http_client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

ERAS = ["2025-11-25", "2026-07-28"]
#: Each grant, with the client authentication it uses at the token endpoint.
GRANTS = ["client_secret_basic", "client_secret_post", "private_key_jwt", "jwt_bearer"]
SECRET = "machine-secret:with/odd chars"
WORKLOAD = "spiffe://example.org/ns/prod/sa/agent"


def whoami(revision: str) -> Any:
    params = types if revision == "2025-11-25" else modern_types
    return params.CallToolRequestParams(name="whoami", arguments={})


def jwt_parts(compact: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A JWT's header and claims, unverified (the test reads what it was sent)."""

    def part(text: str) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        return found

    head, body, _ = compact.split(".")
    return part(head), part(body)


def machine_server(nonce: bool = False) -> MachineAuthorizationServer:
    return MachineAuthorizationServer(dpop=DPoPVerifier(require_nonce=nonce))


def machine_auth(
    grant: str,
    setup: Setup,
    store: TokenStore | None = None,
    dpop: bool | None = None,
) -> tuple[OAuthFlow, str]:
    """The client flow for ``grant``, registered at the setup's AS; the subject it gets."""
    server = setup.authorization
    assert isinstance(server, MachineAuthorizationServer)
    options: dict[str, Any] = {"store": store, "dpop": dpop}
    if grant == "jwt_bearer":
        server.add_client("agent")  # a public client: the assertion is the credential

        async def assertion(issuer: str, resource: str) -> str:
            assert resource == setup.url
            return server.sign_assertion(WORKLOAD, audience=issuer)

        return JwtBearerAuth(setup.url, assertion=assertion, client_id="agent", **options), (
            WORKLOAD
        )
    if grant == "private_key_jwt":
        key = RSAKey.generate_key(2048)
        server.add_client("robot", public_key=key)
        pem = key.as_pem(private=True).decode()
        return ClientCredentialsAuth(setup.url, client_id="robot", private_key=pem, **options), (
            "robot"
        )
    server.add_client("robot", secret=SECRET)
    method = grant  # client_secret_basic or client_secret_post
    auth = ClientCredentialsAuth(
        setup.url, client_id="robot", client_secret=SECRET, token_endpoint_auth_method=method,
        **options,
    )  # fmt: skip
    return auth, "robot"


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside ``exc``'s groups, or ``exc`` itself."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


def grant_type_of(grant: str) -> str:
    return "urn:ietf:params:oauth:grant-type:jwt-bearer" if grant == "jwt_bearer" else (
        "client_credentials"
    )  # fmt: skip


class Recorder:
    """The headers of every request the client's pool sends (after the auth flow set them)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, dict[str, str]]] = []

    async def __call__(self, request: httpx.Request) -> None:
        self.sent.append((request.method, str(request.url), dict(request.headers)))


async def call_whoami(
    setup: Setup, auth: OAuthFlow, revision: str, record: Callable[..., Any] | None = None
) -> str:
    hooks = {"request": [record]} if record is not None else {}
    pool = httpx.AsyncClient(auth=auth, event_hooks=hooks, timeout=15)
    async with (
        pool,
        Client(streamable_http_client(setup.url, http_client=pool), protocol_version=revision) as c,
    ):
        result = await c.stub.call_tool(whoami(revision))
    subject: str = json.loads(result.content[0].text)["subject"]
    return subject


@pytest.mark.parametrize("revision", ERAS)
@pytest.mark.parametrize("grant", GRANTS)
async def test_each_grant_gets_a_bound_token_and_presents_it(
    grant: str, revision: str, tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    async with protected(
        authorization=machine_server(), dpop=DPoPVerifier(), dpop_required=True
    ) as setup:
        server = setup.authorization
        assert isinstance(server, MachineAuthorizationServer)
        auth, subject = machine_auth(grant, setup, FileTokenStore(path))
        recorder = Recorder()
        assert await call_whoami(setup, auth, revision, recorder) == subject

        # The token request: the grant, its client authentication, and a proof without ath.
        ((form, proof),) = zip(server.token_requests, server.token_proofs, strict=True)
        assert form["grant_type"] == grant_type_of(grant)
        assert form["resource"] == setup.url
        assert server.client_auth == ["none" if grant == "jwt_bearer" else grant]
        assert proof is not None
        head, claims = jwt_parts(proof)
        assert head["typ"] == "dpop+jwt" and head["alg"] == "ES256"
        assert (claims["htm"], claims["htu"]) == ("POST", f"{server.issuer}/token")
        assert "ath" not in claims and "nonce" not in claims
        if grant == "jwt_bearer":
            assert [a["sub"] for a in server.assertions] == [WORKLOAD]

        # The token came back bound to that proof's key, and is stored with the key.
        token = await auth.token()
        assert token is not None and token.token_type == "DPoP" and token.dpop_key is not None
        key = DPoPKey.from_jwk(token.dpop_key)
        assert key.public_jwk == head["jwk"]
        assert jwt_parts(token.access_token)[1]["cnf"] == {"jkt": key.thumbprint}
        assert token.refresh_token is None  # no refresh token for machine grants

        # Every MCP request that carried it: the DPoP scheme and a proof of its own, with ath.
        presented = [(m, u, h) for m, u, h in recorder.sent if "authorization" in h]
        assert presented
        jtis = set()
        for method, url, headers in presented:
            assert headers["authorization"] == f"DPoP {token.access_token}"
            head, claims = jwt_parts(headers["dpop"])
            assert head["jwk"] == key.public_jwk
            assert (claims["htm"], claims["htu"]) == (method, url.split("?")[0])
            assert claims["ath"] == access_token_hash(token.access_token)
            jtis.add(claims["jti"])
        assert len(jtis) == len(presented)

        # Sent as a bearer token, the bound token is refused.
        async with httpx.AsyncClient(timeout=10) as http:
            stolen = modern_whoami_headers(authorization=f"Bearer {token.access_token}")
            response = await http.post(setup.url, json=whoami_2026(), headers=stolen)
            assert response.status_code == 401
            assert response.headers["www-authenticate"].startswith("DPoP ")

        # A new process with the same token file: the stored token and key, no new grant.
        again, _ = machine_auth(grant, setup, FileTokenStore(path))
        recorder = Recorder()
        assert await call_whoami(setup, again, revision, recorder) == subject
        assert len(server.token_requests) == 1
        first = recorder.sent[0][2]
        assert first["authorization"] == f"DPoP {token.access_token}"
        assert jwt_parts(first["dpop"])[0]["jwk"] == key.public_jwk


@pytest.mark.parametrize("revision", ERAS)
@pytest.mark.parametrize("grant", GRANTS)
async def test_nonces_at_both_servers_cost_one_retry_each(grant: str, revision: str) -> None:
    async with protected(
        authorization=machine_server(nonce=True),
        dpop=DPoPVerifier(require_nonce=True),
        dpop_required=True,
    ) as setup:
        server = setup.authorization
        auth, subject = machine_auth(grant, setup)
        recorder = Recorder()
        assert await call_whoami(setup, auth, revision, recorder) == subject

        # The token endpoint: refused for want of a nonce, then granted with it, once.
        assert [form["grant_type"] for form in server.token_requests] == [grant_type_of(grant)] * 2
        proofs = [jwt_parts(proof)[1] for proof in server.token_proofs if proof is not None]
        assert len(proofs) == 2 and "nonce" not in proofs[0] and proofs[1]["nonce"]
        assert proofs[0]["jti"] != proofs[1]["jti"]
        if grant == "private_key_jwt":  # a client assertion is single-use: a fresh one
            first, second = (form["client_assertion"] for form in server.token_requests)
            assert first != second
        if grant == "jwt_bearer":  # so may a grant assertion be: the provider is asked again
            first, second = (form["assertion"] for form in server.token_requests)
            assert first != second

        # The resource server: the first presentation of the token asked for its nonce.
        presented = [jwt_parts(h["dpop"])[1] for _, _, h in recorder.sent if "dpop" in h]
        assert "nonce" not in presented[0] and all("nonce" in p for p in presented[1:])
        assert len(presented) >= 2


@pytest.mark.parametrize("grant", GRANTS)
async def test_an_expired_token_is_granted_again_bound_to_the_same_key(grant: str) -> None:
    """No refresh token: past its expiry the flow asks for a new grant, with a proof by the
    key it already holds (and, for JWT bearer, a fresh assertion)."""
    async with protected(
        authorization=machine_server(), dpop=DPoPVerifier(), dpop_required=True
    ) as setup:
        server = setup.authorization
        assert isinstance(server, MachineAuthorizationServer)
        auth, subject = machine_auth(grant, setup)
        first = await auth.authorize()
        stored = first.to_dict() | {"expires_at": time.time() - 1}
        await auth.store.save(f"tokens {setup.url}", stored)
        record = Recorder()
        assert await call_whoami(setup, auth, "2025-11-25", record) == subject
        assert len(server.token_requests) == 2
        # Granted again before the first request: none went without a token, or with the old.
        sent = [headers.get("authorization", "") for _, url, headers in record.sent]
        assert sent and all(h.startswith("DPoP ") for h in sent)
        assert not any(first.access_token in h for h in sent)
        heads = [jwt_parts(proof)[0] for proof in server.token_proofs if proof is not None]
        assert len(heads) == 2 and heads[0]["jwk"] == heads[1]["jwk"]
        fresh = await auth.token()
        assert fresh is not None and fresh.access_token != first.access_token
        assert fresh.dpop_key == first.dpop_key
        if grant == "jwt_bearer":
            assert len(server.assertions) == 2


async def test_a_refused_grant_again_leaves_the_request_to_the_401() -> None:
    """The client's secret was changed at the server: granting again before the request is
    refused, quietly, and the request goes out without a token; the 401's authorization is
    refused too, and that refusal is what the caller sees (its connection fails), as before."""
    async with protected(
        authorization=machine_server(), dpop=DPoPVerifier(), dpop_required=True
    ) as setup:
        server = setup.authorization
        assert isinstance(server, MachineAuthorizationServer)
        auth, _ = machine_auth("client_secret_basic", setup)
        first = await auth.authorize()
        await auth.store.save(
            f"tokens {setup.url}", first.to_dict() | {"expires_at": time.time() - 1}
        )
        server.add_client("robot", secret="changed")
        record = Recorder()
        with pytest.raises(BaseException) as caught:
            await call_whoami(setup, auth, "2025-11-25", record)
        assert any("invalid_client" in str(e) for e in leaves(caught.value))
        assert len(server.token_requests) == 3  # the first, before the request, after its 401
        assert record.sent and "authorization" not in record.sent[0][2]


@pytest.mark.parametrize("revision", ERAS)
@pytest.mark.parametrize("grant", GRANTS)
async def test_dpop_false_gets_and_sends_a_bearer_token(grant: str, revision: str) -> None:
    """The AS advertises DPoP and the resource server takes either scheme: ``dpop=False``
    sends no proof anywhere and gets, and presents, a bearer token."""
    async with protected(authorization=machine_server(), dpop=DPoPVerifier()) as setup:
        server = setup.authorization
        auth, subject = machine_auth(grant, setup, dpop=False)
        recorder = Recorder()
        assert await call_whoami(setup, auth, revision, recorder) == subject
        assert server.token_proofs == [None]
        token = await auth.token()
        assert token is not None and token.token_type == "Bearer" and token.dpop_key is None
        assert "cnf" not in jwt_parts(token.access_token)[1]
        presented = [h for _, _, h in recorder.sent if "authorization" in h]
        assert presented and all(
            h["authorization"] == f"Bearer {token.access_token}" and "dpop" not in h
            for h in presented
        )


async def test_private_key_jwt_with_an_ec_key() -> None:
    """``signing_algorithm="ES256"``: the client assertion is signed with the EC key, the
    token still bound to the DPoP key (a different key: the client's identity is not its
    proof-of-possession key)."""
    async with protected(
        authorization=machine_server(), dpop=DPoPVerifier(), dpop_required=True
    ) as setup:
        server = setup.authorization
        assert isinstance(server, MachineAuthorizationServer)
        key = ECKey.generate_key("P-256")
        server.add_client("robot", public_key=key)
        auth = ClientCredentialsAuth(
            setup.url, client_id="robot", private_key=key.as_pem(private=True).decode(),
            signing_algorithm="ES256",
        )  # fmt: skip
        assert await call_whoami(setup, auth, "2026-07-28") == "robot"
        assert server.client_auth == ["private_key_jwt"]
        assertion = server.token_requests[0]["client_assertion"]
        assert jwt_parts(assertion)[0]["alg"] == "ES256"
        token = await auth.token()
        assert token is not None and token.dpop_bound and token.dpop_key is not None
        assert DPoPKey.from_jwk(token.dpop_key).thumbprint != key.thumbprint()


BAD_KEYS: dict[str, tuple[str, str, str]] = {
    # name: (PEM, signing_algorithm, what the error says)
    "not a PEM": ("-----BEGIN PRIVATE KEY-----\nbm9wZQ==\n-----END PRIVATE KEY-----\n", "RS256",
                  "not a private RSA key"),
    "an EC key for RS256": (ECKey.generate_key("P-256").as_pem(private=True).decode(), "RS256",
                            "not a private RSA key"),
    "a public key": (RSAKey.generate_key(2048).as_pem(private=False).decode(), "RS256",
                     "not a public one"),
    "a MAC algorithm": (RSAKey.generate_key(2048).as_pem(private=True).decode(), "HS256",
                        "unsupported private_key_jwt algorithm 'HS256'"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD_KEYS), ids=list(BAD_KEYS))
async def test_a_bad_private_key_is_a_clear_error_and_nothing_is_sent(case: str) -> None:
    pem, algorithm, message = BAD_KEYS[case]
    async with protected(authorization=machine_server(), dpop=DPoPVerifier()) as setup:
        auth = ClientCredentialsAuth(
            setup.url, client_id="robot", private_key=pem, signing_algorithm=algorithm
        )
        with pytest.raises(TokenRequestError, match=message):
            await auth.authorize()
        assert setup.authorization.token_requests == []
