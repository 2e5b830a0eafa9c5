"""DPoP proofs (RFC 9449) on their own: what the client's ``DPoPKey`` signs, and every rule of
the resource server's ``DPoPVerifier`` broken once, each refused with the error RFC 9449 names.

``forge`` signs proofs the client never would (any header, any claims, any key) with joserfc.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from typing import Any

import anyio
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, OctKey
from mcpbind.runtime.auth import DPoPKey, Token
from mcpbind.runtime.auth._dpop import DPoPProver, choose_algorithm, target_uri
from mcpbind.runtime.auth.server import DPoPError, DPoPProof, DPoPUnavailable, DPoPVerifier
from mcpbind.runtime.auth.server._dpop import InProcessReplayCache, normalized_uri

URL = "https://mcp.example.com/mcp"
TOKEN = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl"


def ath(token: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).rstrip(b"=").decode()


def forge(
    key: Any = None,
    *,
    header: dict[str, Any] | None = None,
    drop: tuple[str, ...] = (),
    **claims: Any,
) -> str:
    """A proof for POST ``URL`` with ``TOKEN``, signed by ``key`` (a new P-256 key), whose
    header and claims the test overrides (``drop`` removes claims)."""
    key = key or ECKey.generate_key("P-256")
    base: dict[str, Any] = {"jti": secrets.token_urlsafe(8), "htm": "POST", "htu": URL,
                            "iat": int(time.time()), "ath": ath(TOKEN)}  # fmt: skip
    base.update(claims)
    for name in drop:
        base.pop(name)
    head = {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.as_dict(private=False), **(header or {})}
    head = {name: value for name, value in head.items() if value is not None}  # None: left out
    return jwt.encode(head, base, key, algorithms=[head["alg"]])


def check(verifier: DPoPVerifier, proof: str, **given: Any) -> DPoPProof:
    """``verifier.check`` run to its end (it is async: its replay cache may be remote)."""
    checked: DPoPProof = anyio.run(lambda: verifier.check(proof, **given))
    return checked


def refused(verifier: DPoPVerifier, proof: str, **overrides: Any) -> DPoPError:
    given: dict[str, Any] = {"method": "POST", "url": URL, "access_token": TOKEN, **overrides}
    with pytest.raises(DPoPError) as caught:
        check(verifier, proof, **given)
    return caught.value


def test_a_proof_from_the_client_key_passes_and_names_the_key() -> None:
    key = DPoPKey.generate()
    proof = key.proof("post", f"{URL}?page=2#top", access_token=TOKEN)
    checked = check(DPoPVerifier(), proof, method="POST", url=URL, access_token=TOKEN)
    assert checked.jkt == key.thumbprint
    assert checked.claims["htu"] == URL  # query and fragment left out (RFC 9449 4.2)
    assert checked.claims["htm"] == "POST"
    assert checked.claims["ath"] == ath(TOKEN)
    assert "nonce" not in checked.claims


@pytest.mark.filterwarnings("ignore:EdDSA is deprecated")
@pytest.mark.parametrize("algorithm", ["ES256", "ES384", "ES512", "EdDSA", "PS256", "RS256"])
def test_every_client_algorithm_is_accepted(algorithm: str) -> None:
    key = DPoPKey.generate(algorithm)
    proof = key.proof("GET", URL, access_token=TOKEN)
    assert check(DPoPVerifier(), proof, method="GET", url=URL, access_token=TOKEN).jkt == (
        key.thumbprint
    )


BAD_PROOFS: dict[str, tuple[dict[str, Any], dict[str, Any], str]] = {
    # name: (forge options, check overrides, the rule the description names)
    "wrong method": ({"htm": "GET"}, {}, "htm"),
    "wrong URL": ({"htu": "https://mcp.example.com/other"}, {}, "htu"),
    "wrong host": ({"htu": "https://evil.example.com/mcp"}, {}, "htu"),
    # iat_offset: seconds from the time the test runs (not when this module was imported).
    "stale iat": ({"iat_offset": -120}, {}, "iat"),
    "iat in the future": ({"iat_offset": 60}, {}, "iat"),
    "iat not a number": ({"iat": "now"}, {}, "iat"),
    "missing ath": ({"drop": ("ath",)}, {}, "ath"),
    "ath of another token": ({"ath": ath("another-token")}, {}, "ath"),
    "missing jti": ({"drop": ("jti",)}, {}, "jti"),
    "typ not dpop+jwt": ({"header": {"typ": "JWT"}}, {}, "typ"),
    "no jwk": ({"header": {"jwk": None}}, {}, "jwk"),
    "alg not allowed": ({}, {"verifier": DPoPVerifier(algorithms=["RS256"])}, "alg"),
}


@pytest.mark.parametrize("case", list(BAD_PROOFS), ids=list(BAD_PROOFS))
def test_each_bad_proof_gets_invalid_dpop_proof(case: str) -> None:
    given, changed, rule = BAD_PROOFS[case]
    options, overrides = dict(given), dict(changed)  # copies: the table is shared
    verifier = overrides.pop("verifier", DPoPVerifier())
    if "iat_offset" in options:
        options["iat"] = int(time.time()) + options.pop("iat_offset")
    proof = forge(**options)
    error = refused(verifier, proof, **overrides)
    assert error.error == "invalid_dpop_proof"
    assert rule in error.description


def test_a_proof_signed_with_another_key_than_its_jwk_is_refused() -> None:
    named, signer = ECKey.generate_key("P-256"), ECKey.generate_key("P-256")
    proof = forge(signer, header={"jwk": named.as_dict(private=False)})
    error = refused(DPoPVerifier(), proof)
    assert (error.error, error.description) == (
        "invalid_dpop_proof",
        "the DPoP proof's signature is not valid",
    )


def test_a_private_key_in_the_header_is_refused() -> None:
    key = ECKey.generate_key("P-256")
    proof = forge(key, header={"jwk": key.as_dict(private=True)})
    assert "not a public key" in refused(DPoPVerifier(), proof).description


def test_a_mac_is_never_a_proof() -> None:
    with pytest.raises(ValueError, match="asymmetric"):
        DPoPVerifier(algorithms=["HS256"])
    secret = OctKey.generate_key(256)
    claims = {"jti": "j", "htm": "POST", "htu": URL, "iat": int(time.time()), "ath": ath(TOKEN)}
    header = {"typ": "dpop+jwt", "alg": "HS256", "jwk": secret.as_dict(private=False)}
    proof = jwt.encode(header, claims, secret, algorithms=["HS256"])
    assert refused(DPoPVerifier(), proof).error == "invalid_dpop_proof"


@pytest.mark.parametrize("junk", ["", "not-a-jwt", "a.b.c", "x" * 9000, "é.é.é"])
def test_junk_is_refused_not_crashed_on(junk: str) -> None:
    assert refused(DPoPVerifier(), junk).error == "invalid_dpop_proof"


def test_a_replayed_jti_is_refused_and_a_fresh_one_is_not() -> None:
    verifier = DPoPVerifier()
    key = DPoPKey.generate()
    proof = key.proof("POST", URL, access_token=TOKEN)
    check(verifier, proof, method="POST", url=URL, access_token=TOKEN)
    error = refused(verifier, proof)
    assert (error.error, "replayed" in error.description) == ("invalid_dpop_proof", True)
    check(verifier, key.proof("POST", URL, access_token=TOKEN), method="POST", url=URL,
                   access_token=TOKEN)  # fmt: skip


def test_the_replay_cache_is_bounded_in_size_and_time() -> None:
    now = [0.0]
    cache = InProcessReplayCache(max_entries=3, clock=lambda: now[0])
    assert all(cache.add(f"j{i}", 10.0) for i in range(5))
    assert len(cache) == 3  # the oldest two dropped
    assert not cache.add("j4", 10.0)
    now[0] = 11.0
    assert cache.add("j4", 10.0)  # expired, so forgotten
    assert len(cache) == 1


class Unreachable:
    """A replay cache that cannot answer (Redis down)."""

    async def seen(self, key: str, lifetime: float) -> bool:
        raise ConnectionError("connection refused")


def test_a_cache_that_cannot_answer_refuses_the_proof() -> None:
    verifier = DPoPVerifier(replay_cache=Unreachable())
    proof = DPoPKey.generate().proof("POST", URL, access_token=TOKEN)
    with pytest.raises(DPoPUnavailable, match="replay cache is unreachable: connection refused"):
        check(verifier, proof, method="POST", url=URL, access_token=TOKEN)
    # A bad proof is still refused for what is wrong with it, before the cache is asked.
    assert refused(verifier, forge(htm="GET")).error == "invalid_dpop_proof"


def test_nonces_when_required() -> None:
    clock = [time.time()]
    verifier = DPoPVerifier(require_nonce=True, nonce_lifetime=60, clock=lambda: clock[0])
    key = DPoPKey.generate()
    without = refused(verifier, key.proof("POST", URL, access_token=TOKEN))
    assert without.error == "use_dpop_nonce"
    nonce = verifier.new_nonce()
    good = key.proof("POST", URL, access_token=TOKEN, nonce=nonce)
    assert check(verifier, good, method="POST", url=URL, access_token=TOKEN).jkt == key.thumbprint
    forged = f"{nonce.partition('.')[0]}.AAAAAAAAAAAAAAAAAAAAAAAA"
    other = DPoPVerifier(require_nonce=True).new_nonce()  # another secret
    for bad in (forged, other, "zz", "x" * 100):
        proof = key.proof("POST", URL, access_token=TOKEN, nonce=bad)
        assert refused(verifier, proof).error == "use_dpop_nonce"
    clock[0] += 61
    stale = key.proof("POST", URL, access_token=TOKEN, nonce=nonce)
    assert refused(verifier, stale, url=URL).error in ("use_dpop_nonce", "invalid_dpop_proof")
    shared = DPoPVerifier(require_nonce=True, nonce_secret=b"s" * 32)
    twin = DPoPVerifier(require_nonce=True, nonce_secret=b"s" * 32)
    proof = key.proof("POST", URL, access_token=TOKEN, nonce=shared.new_nonce())
    check(twin, proof, method="POST", url=URL, access_token=TOKEN)  # workers sharing a secret


def test_uris_compare_as_rfc_3986_normalizes_them() -> None:
    assert normalized_uri("HTTPS://MCP.Example.com:443/mcp?x=1#f") == "https://mcp.example.com/mcp"
    assert normalized_uri("http://[::1]:80") == "http://[::1]/"
    assert normalized_uri("http://h:8080/a%7Eb") == "http://h:8080/a~b"
    assert normalized_uri("ftp://h/") is None
    assert normalized_uri("http://h:99999/") is None
    assert target_uri("https://h/p?q=1#f") == "https://h/p"


def test_the_key_survives_a_store_and_is_never_shown() -> None:
    key = DPoPKey.generate()
    stored = key.to_jwk()
    assert stored["alg"] == "ES256" and "d" in stored
    again = DPoPKey.from_jwk(stored)
    assert again.thumbprint == key.thumbprint
    assert stored["d"] not in repr(key)
    token = Token(access_token="t", token_type="DPoP", dpop_key=stored)
    assert stored["d"] not in repr(token) and token.dpop_bound
    assert Token.from_dict(token.to_dict()) == token
    with pytest.raises(ValueError):
        DPoPKey.from_jwk(key.public_jwk | {"alg": "ES256"})  # a public key cannot sign
    for broken in ({"alg": "ES256", "d": "x"}, {**stored, "x": "!!"}, {**stored, "crv": "P-9"}):
        with pytest.raises(ValueError, match="stored DPoP key"):
            DPoPKey.from_jwk(broken)
    with pytest.raises(ValueError):
        DPoPKey.generate("HS256")


def test_the_algorithm_follows_what_the_server_advertises() -> None:
    assert choose_algorithm(None, "ES256") == "ES256"
    assert choose_algorithm(["RS256", "ES256"], "ES256") == "ES256"
    assert choose_algorithm(["RS256", "PS256"], "ES256") == "PS256"
    assert choose_algorithm(["none", "HS256"], "ES256") is None


def test_the_prover_remembers_nonces_per_origin() -> None:
    import httpx

    prover = DPoPProver(DPoPKey.generate())
    request = httpx.Request("POST", "https://as.example/token")
    response = httpx.Response(400, headers={"DPoP-Nonce": "n1"}, request=request)
    assert prover.learn(response) and not prover.learn(response)
    proof = prover.proof("POST", "https://as.example/token")
    assert jwt.decode(proof, DPoPKey.from_jwk(prover.key.to_jwk())._key).claims["nonce"] == "n1"
    elsewhere = prover.proof("POST", "https://mcp.example/mcp")
    assert "nonce" not in jwt.decode(elsewhere, prover.key._key).claims


@pytest.mark.parametrize(
    "jwk",
    [
        {"kty": "EC", "crv": "P-9", "x": "AA", "y": "AA"},
        {"kty": "EC", "crv": "P-256", "x": "!!", "y": "??"},
        {"kty": "EC"},
        {"kty": "EC", "crv": ["P-256"], "x": 1, "y": None},
    ],
)
def test_a_made_up_key_is_refused_not_crashed_on(jwk: dict[str, Any]) -> None:
    head = base64.urlsafe_b64encode(
        json.dumps({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk}).encode()
    ).rstrip(b"=")
    proof = f"{head.decode()}.e30.c2ln"
    assert refused(DPoPVerifier(), proof).error == "invalid_dpop_proof"
