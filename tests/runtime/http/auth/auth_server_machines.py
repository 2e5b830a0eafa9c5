"""The test authorization server's grants for machines: client credentials and JWT bearer.

``MachineAuthorizationServer`` is the ``LocalAuthorizationServer`` that also grants
``client_credentials`` (RFC 6749 4.4) and the JWT bearer grant (RFC 7523 2.1), and takes
``private_key_jwt`` client authentication (RFC 7523 2.2, each assertion's ``jti`` used once).
The JWT bearer assertions it trusts are signed by ``identity_provider`` (``sign_assertion``
makes one, as a workload identity or an enterprise IdP would), each used once; like a client
assertion, it is checked after the DPoP proof, so a request refused for want of a nonce has
not used it up. Like the code grant, both bind
their access token to the DPoP proof's key (``cnf.jkt``, ``token_type`` DPoP) when a valid
proof comes; ``DPoPVerifier(require_nonce=True)`` as its ``dpop`` adds the nonce round trip.
Neither issues a refresh token (RFC 6749 4.4.3): the client asks again.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from auth_server_as import LocalAuthorizationServer
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, KeySet, RSAKey
from joserfc.jws import extract_compact
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
CLIENT_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
IDP = "https://idp.example"


def _audiences(claims: dict[str, Any]) -> list[object]:
    aud = claims.get("aud")
    return list(aud) if isinstance(aud, list) else [aud]


@dataclass
class MachineAuthorizationServer(LocalAuthorizationServer):
    """The code-grant server plus the machine grants; ``add_client`` registers a client."""

    grant_types: Sequence[str] = ("client_credentials", JWT_BEARER)
    auth_methods: Sequence[str] = (
        "none", "client_secret_basic", "client_secret_post", "private_key_jwt",
    )  # fmt: skip
    identity_provider: RSAKey = field(
        default_factory=lambda: RSAKey.generate_key(2048, {"kid": "idp-1"})
    )
    #: How each token request authenticated its client (``client_secret_basic``...).
    client_auth: list[str] = field(default_factory=list)
    #: The JWT bearer assertions accepted (their claims).
    assertions: list[dict[str, Any]] = field(default_factory=list)
    used_jtis: set[str] = field(default_factory=set)

    def add_client(
        self,
        client_id: str,
        *,
        secret: str | None = None,
        public_key: RSAKey | ECKey | None = None,
    ) -> None:
        """A pre-registered client: with a secret, a public key (``private_key_jwt``) or
        neither (a public client)."""
        info: dict[str, Any] = {"client_id": client_id, "redirect_uris": []}
        if secret is not None:
            info["client_secret"] = secret
        if public_key is not None:
            info["jwks"] = KeySet([public_key]).as_dict(private=False)
        self.clients[client_id] = info

    def sign_assertion(self, subject: str, audience: str, lifetime: int = 120) -> str:
        """A JWT authorization grant from the trusted identity provider."""
        now = int(time.time())
        claims = {"iss": IDP, "sub": subject, "aud": audience, "iat": now,
                  "exp": now + lifetime, "jti": secrets.token_hex(8)}  # fmt: skip
        key = self.identity_provider
        return jwt.encode({"alg": "RS256", "kid": key.kid}, claims, key)

    # -- client authentication ------------------------------------------------------------

    def _client_of(self, request: Request, form: dict[str, str]) -> str | None:
        if form.get("client_assertion_type") == CLIENT_ASSERTION:
            client_id = self._asserted_client(form)
            if client_id is not None:
                self.client_auth.append("private_key_jwt")
            return client_id
        client_id = super()._client_of(request, form)
        if client_id is None or "jwks" in self.clients[client_id]:
            return None  # a key-holding client must prove it holds its key
        client = self.clients[client_id]
        if "client_secret" not in client:
            method = "none"
        elif request.headers.get("authorization", "").lower().startswith("basic "):
            method = "client_secret_basic"
        else:
            method = "client_secret_post"
        self.client_auth.append(method)
        return client_id

    def _asserted_client(self, form: dict[str, str]) -> str | None:
        """The client a ``private_key_jwt`` assertion authenticates (RFC 7523 3), or None."""
        assertion = form.get("client_assertion", "")
        # authlib sends no client_id with an assertion: its unverified ``sub`` names the client.
        try:
            sent = json.loads(extract_compact(assertion.encode()).payload)
            client_id = form.get("client_id") or str(sent["sub"])
        except (JoseError, ValueError, KeyError, TypeError):
            return None
        client = self.clients.get(client_id or "")
        if client is None or "jwks" not in client:
            return None
        try:
            keys = KeySet.import_key_set(client["jwks"])
            claims = jwt.decode(assertion, keys, algorithms=["RS256", "ES256"]).claims
        except (JoseError, ValueError):
            return None
        audiences = _audiences(claims)
        if (
            claims.get("iss") != client_id
            or claims.get("sub") != client_id
            or not ({self.issuer, f"{self.issuer}/token"} & set(map(str, audiences)))
            or not isinstance(claims.get("exp"), int)
            or claims["exp"] <= time.time()
            or not isinstance(claims.get("jti"), str)
            or claims["jti"] in self.used_jtis
        ):
            return None
        self.used_jtis.add(claims["jti"])
        return client_id

    # -- the grants ------------------------------------------------------------------------

    async def _other_grant(
        self, kind: str | None, form: dict[str, str], client_id: str, jkt: str | None
    ) -> Response:
        if kind == "client_credentials":
            subject = client_id
        elif kind == JWT_BEARER:
            grant = self._assertion_of(form.get("assertion", ""))
            if grant is None:
                return JSONResponse({"error": "invalid_grant"}, 400)
            self.assertions.append(grant)
            subject = grant["sub"]
        else:
            return JSONResponse({"error": "unsupported_grant_type"}, 400)
        asked = form.get("scope", "").split()
        scope = " ".join(s for s in asked if s in self.scopes_supported)
        bound = {"cnf": {"jkt": jkt}} if jkt is not None else None
        token = self.mint(
            form.get("resource"), scope, subject=subject, client_id=client_id, extra=bound
        )
        answer = {"access_token": token, "token_type": "DPoP" if jkt else "Bearer",
                  "expires_in": 300, "scope": scope}  # fmt: skip
        return JSONResponse(answer, headers={"cache-control": "no-store"})

    def _assertion_of(self, assertion: str) -> dict[str, Any] | None:
        """The claims of a JWT authorization grant from the trusted IdP, for this server."""
        try:
            claims = jwt.decode(assertion, self.identity_provider, algorithms=["RS256"]).claims
        except (JoseError, ValueError):
            return None
        if (
            claims.get("iss") != IDP
            or self.issuer not in _audiences(claims)
            or not isinstance(claims.get("sub"), str)
            or not isinstance(claims.get("exp"), int)
            or claims["exp"] <= time.time()
            or not isinstance(claims.get("jti"), str)
            or claims["jti"] in self.used_jtis
        ):
            return None
        self.used_jtis.add(claims["jti"])  # a grant is used once (RFC 7523 3, item 7)
        return dict(claims)
