"""DPoP for the OAuth client (RFC 9449, as SEP-1932 profiles it for MCP): a key, its proofs.

A client that proves possession of a key gets access tokens bound to it (``cnf.jkt``): a
token stolen from a log or a proxy is useless without the private key. ``DPoPKey`` is that key
(ES256 by default, made with joserfc); ``proof`` signs a fresh proof JWT for one request: the
method (``htm``), the URL without query and fragment (``htu``), ``iat``, a random ``jti``, the
access token's hash (``ath``) when one is presented, and the server's ``nonce`` when it asked
for one. ``DPoPProver`` adds the nonces, remembered per origin from ``DPoP-Nonce`` headers.

The private key is stored with the tokens it is bound to (a private JWK in the token entry),
and shown by no ``repr`` and no log line.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import httpx

from . import _deps
from ._errors import AuthorizationError

#: The signature algorithms a client key can use, in the order the client prefers them.
ALGORITHMS: Final = ("ES256", "ES384", "ES512", "EdDSA", "PS256", "RS256")
_CURVES: Final = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}
#: The error the token endpoint (400) and the resource server (401) ask for a nonce with.
USE_DPOP_NONCE: Final = "use_dpop_nonce"
NONCE_HEADER: Final = "DPoP-Nonce"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def access_token_hash(access_token: str) -> str:
    """``ath``: base64url of the SHA-256 of the token's ASCII bytes (RFC 9449 4.2)."""
    return _b64(hashlib.sha256(access_token.encode("ascii")).digest())


def target_uri(url: str) -> str:
    """``htu``: the request's URL without its query and fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def choose_algorithm(advertised: Sequence[str] | None, preferred: str) -> str | None:
    """The algorithm to sign with: ``preferred`` if the server takes it (or names none), else
    the first of ``ALGORITHMS`` it takes; None when it takes none of them (never ``none``)."""
    if preferred not in ALGORITHMS:
        raise ValueError(f"unsupported DPoP algorithm {preferred!r} (one of {ALGORITHMS})")
    if advertised is None:
        return preferred
    if preferred in advertised:
        return preferred
    return next((alg for alg in ALGORITHMS if alg in advertised), None)


class DPoPKey:
    """A DPoP key pair and the algorithm it signs with.

    ``generate()`` makes one; ``to_jwk()`` / ``from_jwk()`` turn it into the private JWK a
    token store keeps, and back. ``thumbprint`` is its JWK SHA-256 thumbprint (RFC 7638), the
    ``cnf.jkt`` of the tokens bound to it.
    """

    def __init__(self, key: Any, algorithm: str) -> None:
        self._key = key
        self.algorithm = algorithm
        self.public_jwk: dict[str, Any] = dict(key.as_dict(private=False))
        self.thumbprint: str = key.thumbprint()

    def __repr__(self) -> str:
        return f"DPoPKey({self.algorithm}, jkt={self.thumbprint})"

    @classmethod
    def generate(cls, algorithm: str = "ES256") -> DPoPKey:
        jwk = _deps.load("joserfc.jwk")
        if algorithm in _CURVES:
            key = jwk.ECKey.generate_key(_CURVES[algorithm])
        elif algorithm == "EdDSA":
            key = jwk.OKPKey.generate_key("Ed25519")
        elif algorithm in ("PS256", "RS256"):
            key = jwk.RSAKey.generate_key(2048)
        else:
            raise ValueError(f"unsupported DPoP algorithm {algorithm!r} (one of {ALGORITHMS})")
        return cls(key, algorithm)

    @classmethod
    def from_jwk(cls, data: Mapping[str, Any]) -> DPoPKey:
        """The key from a private JWK carrying its ``alg`` (what ``to_jwk`` wrote)."""
        jwk = _deps.load("joserfc.jwk")
        algorithm = data.get("alg")
        if algorithm not in ALGORITHMS or "d" not in data:
            raise ValueError("a stored DPoP key is a private JWK with a supported 'alg'")
        errors = _deps.load("joserfc.errors")
        fields = {name: value for name, value in data.items() if name != "alg"}
        try:
            return cls(jwk.JWKRegistry.import_key(fields), str(algorithm))
        except (errors.JoseError, ValueError, TypeError, KeyError) as exc:
            raise ValueError(
                f"a stored DPoP key is not a valid JWK ({type(exc).__name__})"
            ) from None

    def to_jwk(self) -> dict[str, Any]:
        """The private JWK, with ``alg``: for token stores only (it is a credential)."""
        return {**self._key.as_dict(private=True), "alg": self.algorithm}

    def proof(
        self,
        method: str,
        url: str,
        *,
        access_token: str | None = None,
        nonce: str | None = None,
    ) -> str:
        """A fresh proof JWT for one request (RFC 9449 4.2)."""
        jwt = _deps.load("joserfc.jwt")
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": target_uri(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = access_token_hash(access_token)
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": self.algorithm, "jwk": self.public_jwk}
        signed: str = jwt.encode(header, claims, self._key, algorithms=[self.algorithm])
        return signed


class DPoPProver:
    """A key with the nonces servers gave it, remembered per origin (RFC 9449 8 and 9)."""

    def __init__(self, key: DPoPKey, nonces: dict[str, str] | None = None) -> None:
        self.key = key
        self.nonces = nonces if nonces is not None else {}

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        nonce = self.nonces.get(origin_of(url))
        return self.key.proof(method, url, access_token=access_token, nonce=nonce)

    def learn(self, response: httpx.Response) -> bool:
        """Remember the response's ``DPoP-Nonce`` for its origin; True if it is a new one."""
        nonce = response.headers.get(NONCE_HEADER)
        if not nonce or not nonce.isascii() or len(nonce) > 1024:
            return False
        where = origin_of(str(response.request.url))
        if self.nonces.get(where) == nonce:
            return False
        self.nonces[where] = nonce
        return True


def key_for(token_key: Mapping[str, Any] | None, cache: dict[str, DPoPKey]) -> DPoPKey | None:
    """The key a stored token is bound to, imported once per distinct JWK."""
    if not token_key:
        return None
    marker = json.dumps(token_key, sort_keys=True)
    known = cache.get(marker)
    if known is None:
        try:
            known = DPoPKey.from_jwk(token_key)
        except (ValueError, TypeError) as exc:
            raise AuthorizationError(f"the stored DPoP key is unusable ({exc})") from None
        cache[marker] = known
    return known
