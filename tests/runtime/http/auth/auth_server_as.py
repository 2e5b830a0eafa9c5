"""A small but real OAuth 2.1 authorization server for the resource-server tests.

A starlette app served by uvicorn like the MCP servers: RFC 8414 metadata, a JWKS, dynamic
client registration (RFC 7591), an authorization endpoint that approves at once (no user to
ask) and redirects with ``code``, ``state`` and ``iss`` (RFC 9207), a token endpoint checking
PKCE S256 and the ``resource`` (RFC 8707), and RFC 7662 introspection for the resource server
(with its own client credentials). Clients with a secret must authenticate at the token
endpoint (Basic or form); refresh tokens rotate. JWTs are signed with joserfc; ``mint`` makes any token a
test needs (expired, foreign audience, unknown key...) without the flow. With ``dpop`` (a
``DPoPVerifier``) it advertises DPoP and binds the tokens of a request that carries a valid
proof to its key (``cnf.jkt``, ``token_type`` DPoP; the refresh token too, RFC 9449 5).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote_plus, urlencode

from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from mcpbind.runtime.auth.server import DPoPError, DPoPVerifier
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

#: The credentials the resource server uses at the introspection endpoint.
RS_CLIENT = ("mcp-resource-server", "rs-secret:with/odd chars")


@dataclass
class Grant:
    client_id: str
    redirect_uri: str
    challenge: str
    scope: str
    resource: str | None
    jkt: str | None = None


@dataclass
class LocalAuthorizationServer:
    """The server's state; ``app`` serves it. ``issuer`` is set once its URL is known."""

    issuer: str = ""
    subject: str = "user-1"
    scopes_supported: Sequence[str] = ("mcp:tools", "mcp:admin")
    keys: list[RSAKey] = field(default_factory=lambda: [RSAKey.generate_key(2048, {"kid": "k1"})])
    clients: dict[str, dict[str, Any]] = field(default_factory=dict)
    grants: dict[str, Grant] = field(default_factory=dict)
    refresh_tokens: dict[str, Grant] = field(default_factory=dict)
    opaque: dict[str, dict[str, Any]] = field(default_factory=dict)
    revoked: set[str] = field(default_factory=set)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    authorizations: list[dict[str, str]] = field(default_factory=list)
    introspections: int = 0
    dpop: DPoPVerifier | None = None
    #: The DPoP proofs the token endpoint received (None: a request without one).
    token_proofs: list[str | None] = field(default_factory=list)
    grant_types: Sequence[str] = ("authorization_code", "refresh_token")
    auth_methods: Sequence[str] = ("none", "client_secret_basic", "client_secret_post")

    # -- tokens -------------------------------------------------------------------------

    def mint(
        self,
        audience: str | list[str] | None,
        scope: str = "mcp:tools",
        *,
        subject: str | None = None,
        client_id: str = "test-client",
        lifetime: float = 300,
        not_before: float | None = None,
        issuer: str | None = None,
        key: RSAKey | None = None,
        extra: dict[str, Any] | None = None,
    ) -> str:
        """A signed access token; every claim can be made wrong on purpose."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": issuer if issuer is not None else self.issuer,
            "sub": subject or self.subject,
            "client_id": client_id,
            "scope": scope,
            "iat": now,
            "exp": int(now + lifetime),
            "jti": secrets.token_hex(8),
        }
        if audience is not None:
            claims["aud"] = audience
        if not_before is not None:
            claims["nbf"] = int(not_before)
        claims.update(extra or {})
        signer = key or self.keys[-1]
        return jwt.encode(
            {"alg": "RS256", "kid": signer.kid}, claims, signer, default_type="at+jwt"
        )

    def mint_opaque(self, audience: str, scope: str = "mcp:tools", lifetime: float = 300) -> str:
        """An opaque token only introspection can explain."""
        token = secrets.token_urlsafe(24)
        now = int(time.time())
        self.opaque[token] = {
            "iss": self.issuer, "sub": self.subject, "client_id": "test-client", "scope": scope,
            "aud": audience, "iat": now, "exp": int(now + lifetime), "token_type": "Bearer",
        }  # fmt: skip
        return token

    def rotate(self) -> RSAKey:
        """Sign with a new key from now on (published in the JWKS beside the old one)."""
        key = RSAKey.generate_key(2048, {"kid": f"k{len(self.keys) + 1}"})
        self.keys.append(key)
        return key

    def _claims_of(self, token: str) -> dict[str, Any] | None:
        if token in self.revoked:
            return None
        if token in self.opaque:
            claims = self.opaque[token]
        else:
            try:
                claims = jwt.decode(token, KeySet(list(self.keys)), algorithms=["RS256"]).claims
            except Exception:
                return None
        return claims if claims.get("exp", 0) > time.time() else None

    # -- endpoints ----------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        base = self.issuer
        return {
            "issuer": base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "registration_endpoint": f"{base}/register",
            "jwks_uri": f"{base}/jwks",
            "introspection_endpoint": f"{base}/introspect",
            "response_types_supported": ["code"],
            "grant_types_supported": list(self.grant_types),
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": list(self.auth_methods),
            "scopes_supported": list(self.scopes_supported),
            "authorization_response_iss_parameter_supported": True,
        } | (
            {"dpop_signing_alg_values_supported": list(self.dpop.algorithms)}
            if self.dpop is not None
            else {}
        )

    async def _metadata(self, request: Request) -> Response:
        return JSONResponse(self.metadata())

    async def _jwks(self, request: Request) -> Response:
        return JSONResponse(KeySet(list(self.keys)).as_dict(private=False))

    async def _register(self, request: Request) -> Response:
        body = await request.json()
        uris = body.get("redirect_uris")
        if not isinstance(uris, list) or not uris:
            return JSONResponse({"error": "invalid_redirect_uri"}, 400)
        client_id = f"client-{secrets.token_hex(4)}"
        method = body.get("token_endpoint_auth_method", "client_secret_basic")  # RFC 7591 2
        info = {**body, "client_id": client_id, "client_id_issued_at": int(time.time()),
                "token_endpoint_auth_method": method}  # fmt: skip
        if method != "none":
            info["client_secret"] = secrets.token_urlsafe(16)
        self.clients[client_id] = info
        return JSONResponse(info, 201)

    async def _authorize(self, request: Request) -> Response:
        query = request.query_params
        self.authorizations.append(dict(query))
        client = self.clients.get(query.get("client_id", ""))
        redirect_uri = query.get("redirect_uri", "")
        if client is None or redirect_uri not in client["redirect_uris"]:
            return JSONResponse({"error": "invalid_request"}, 400)
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            answer = {"error": "invalid_request", "error_description": "PKCE S256 is required"}
        else:
            code = secrets.token_urlsafe(16)
            self.grants[code] = Grant(
                client["client_id"], redirect_uri, query["code_challenge"],
                query.get("scope", ""), query.get("resource"),
            )  # fmt: skip
            answer = {"code": code}
        answer |= {"iss": self.issuer}
        if "state" in query:
            answer["state"] = query["state"]
        return RedirectResponse(f"{redirect_uri}?{urlencode(answer)}", 302)

    def _client_of(self, request: Request, form: dict[str, str]) -> str | None:
        """The client a token request authenticates as (RFC 6749 2.3.1: Basic with
        form-urlencoded parts, or the form); ``None`` if its secret is wrong or missing."""
        header = request.headers.get("authorization", "")
        client_id, secret = form.get("client_id"), form.get("client_secret")
        if header.lower().startswith("basic "):
            decoded = base64.b64decode(header[6:]).decode()
            client_id, _, secret = (unquote_plus(part) for part in decoded.partition(":"))
        client = self.clients.get(client_id or "")
        if client is None or client.get("client_secret", secret) != secret:
            return None
        return client_id

    def _tokens(self, grant: Grant, jkt: str | None = None) -> Response:
        refresh = secrets.token_urlsafe(16)
        self.refresh_tokens[refresh] = Grant(
            grant.client_id, grant.redirect_uri, grant.challenge, grant.scope, grant.resource, jkt
        )
        bound = {"cnf": {"jkt": jkt}} if jkt is not None else None
        token = self.mint(grant.resource, grant.scope, client_id=grant.client_id, extra=bound)
        answer = {"access_token": token, "token_type": "DPoP" if jkt else "Bearer",
                  "expires_in": 300, "scope": grant.scope, "refresh_token": refresh}  # fmt: skip
        return JSONResponse(answer, headers={"cache-control": "no-store"})

    async def _token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        self.token_requests.append(form)
        client_id = self._client_of(request, form)
        if client_id is None:
            return JSONResponse({"error": "invalid_client"}, 401)
        proof = request.headers.get("dpop")
        self.token_proofs.append(proof)
        jkt = None
        if self.dpop is not None and proof is not None:
            try:
                checked = await self.dpop.check(proof, method="POST", url=f"{self.issuer}/token")
                jkt = checked.jkt
            except DPoPError as exc:
                headers = (
                    {"dpop-nonce": self.dpop.new_nonce()} if exc.error == "use_dpop_nonce" else {}
                )
                body = {"error": exc.error, "error_description": exc.description}
                return JSONResponse(body, 400, headers=headers)
        kind = form.get("grant_type")
        if kind == "refresh_token":
            grant = self.refresh_tokens.pop(form.get("refresh_token", ""), None)
            if grant is None or grant.client_id != client_id or grant.jkt not in (None, jkt):
                return JSONResponse({"error": "invalid_grant"}, 400)
            return self._tokens(grant, jkt)
        if kind != "authorization_code":
            return await self._other_grant(kind, form, client_id, jkt)
        grant = self.grants.pop(form.get("code", ""), None)
        verifier = form.get("code_verifier", "").encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=")
        if (
            grant is None
            or grant.client_id != client_id
            or digest.decode() != grant.challenge
            or form.get("redirect_uri") != grant.redirect_uri
            or form.get("resource", grant.resource) != grant.resource
        ):
            return JSONResponse({"error": "invalid_grant"}, 400)
        return self._tokens(grant, jkt)

    async def _other_grant(
        self, kind: str | None, form: dict[str, str], client_id: str, jkt: str | None
    ) -> Response:
        """A grant beyond the code and refresh grants (``auth_server_machines`` adds some)."""
        return JSONResponse({"error": "unsupported_grant_type"}, 400)

    async def _introspect(self, request: Request) -> Response:
        self.introspections += 1
        pair = ":".join(quote(part, safe="") for part in RS_CLIENT)  # RFC 6749 2.3.1
        expected = "Basic " + base64.b64encode(pair.encode()).decode()
        if request.headers.get("authorization") != expected:
            return JSONResponse({"error": "invalid_client"}, 401)
        token = str((await request.form()).get("token", ""))
        claims = self._claims_of(token)
        if claims is None:
            return JSONResponse({"active": False})
        return JSONResponse({"active": True, **claims})

    @property
    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/.well-known/oauth-authorization-server", self._metadata),
                Route("/jwks", self._jwks),
                Route("/register", self._register, methods=["POST"]),
                Route("/authorize", self._authorize),
                Route("/token", self._token, methods=["POST"]),
                Route("/introspect", self._introspect, methods=["POST"]),
            ]
        )
