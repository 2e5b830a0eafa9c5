"""Token requests (RFC 6749 section 3.2) and the tokens they return.

authlib builds the request: the form body (``prepare_token_request``), the client
authentication (``ClientAuth``: ``client_secret_basic``, ``client_secret_post``, ``none``, and
``PrivateKeyJWT`` for ``private_key_jwt``, RFC 7523, signed with joserfc), and the token's expiry
(``OAuth2Token``). We send it over httpx and check the answer. Every request carries the
``resource`` parameter (RFC 8707) its caller gives. With a ``DPoPProver`` the request carries
a ``DPoP`` proof (RFC 9449 5), is sent once more with the server's nonce when it answers
``use_dpop_nonce`` (section 8), and a ``DPoP`` token comes back bound to the prover's key.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Final

import httpx

from . import _deps
from ._discovery import ServerMetadata
from ._dpop import USE_DPOP_NONCE, DPoPProver
from ._errors import TokenRequestError
from ._json import json_object

logger = logging.getLogger(__name__)

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: A token this close to its expiry is refreshed before use.
EXPIRY_LEEWAY = 30.0
#: The key type each ``private_key_jwt`` signing algorithm takes.
_KEY_TYPES: Final = {
    **dict.fromkeys(("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"), "RSA"),
    **dict.fromkeys(("ES256", "ES384", "ES512"), "EC"),
    "EdDSA": "OKP",
}


@dataclass
class ClientIdentity:
    """A client's identity at one authorization server (``issuer``; None: not yet bound).

    ``private_key`` (PEM) selects ``private_key_jwt``; a secret selects ``client_secret_basic``
    or ``client_secret_post`` (whichever the server supports); neither, ``none``.
    """

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    token_endpoint_auth_method: str | None = None
    private_key: str | None = field(default=None, repr=False)
    signing_algorithm: str = "RS256"
    issuer: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClientIdentity:
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        return cls(**known)

    def auth_method(self, server: ServerMetadata) -> str:
        if self.private_key is not None:
            return "private_key_jwt"
        if self.token_endpoint_auth_method is not None:
            return self.token_endpoint_auth_method
        if self.client_secret is None:
            return "none"
        supported = server.token_endpoint_auth_methods_supported or ["client_secret_basic"]
        if "client_secret_basic" not in supported and "client_secret_post" in supported:
            return "client_secret_post"
        return "client_secret_basic"


@dataclass
class Token:
    """An access token and what it takes to refresh it (which server, which client)."""

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = field(default=None, repr=False)
    scope: str | None = None
    issuer: str | None = None
    client_id: str | None = None
    token_endpoint: str | None = None
    #: The resource indicator (RFC 8707) it was obtained for, sent again when refreshing.
    resource: str | None = None
    #: The private JWK of the key a ``DPoP`` token is bound to (RFC 9449), kept with it.
    dpop_key: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def dpop_bound(self) -> bool:
        return self.token_type.lower() == "dpop" and self.dpop_key is not None

    def expired(self, leeway: float = EXPIRY_LEEWAY) -> bool:
        return self.expires_at is not None and self.expires_at - leeway <= time.time()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Token | None:
        if not isinstance(data.get("access_token"), str):
            return None
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        return cls(**known)


def _client_auth(identity: ClientIdentity, server: ServerMetadata) -> Any:
    auth = _deps.load("authlib.oauth2.auth")
    method: Any = identity.auth_method(server)
    secret: Any = identity.client_secret
    if method == "private_key_jwt":
        rfc7523 = _deps.load("authlib.oauth2.rfc7523")
        jwk = _deps.load("joserfc.jwk")
        errors = _deps.load("joserfc.errors")
        algorithm = identity.signing_algorithm
        # The key type follows the algorithm: joserfc guessing it from the PEM would let a key
        # of another kind through to fail later, less clearly (and warns about it).
        key_type = _KEY_TYPES.get(algorithm)
        if key_type is None:
            raise TokenRequestError(f"unsupported private_key_jwt algorithm {algorithm!r}")
        if identity.private_key is None:
            raise TokenRequestError("private_key_jwt needs a private key")
        try:
            secret = jwk.import_key(identity.private_key, key_type)
        except (errors.JoseError, ValueError, TypeError) as exc:
            raise TokenRequestError(
                f"the private key is not a private {key_type} key in PEM, as {algorithm} "
                f"needs ({type(exc).__name__})"
            ) from None
        if not secret.is_private:
            raise TokenRequestError("private_key_jwt needs a private key, not a public one")
        # The audience is the authorization server's issuer (RFC 7523 section 3).
        method = rfc7523.PrivateKeyJWT(
            server.token_endpoint, claims={"aud": server.issuer}, alg=identity.signing_algorithm
        )
    return auth.ClientAuth(identity.client_id, secret, method)


def _error_of(response: httpx.Response) -> tuple[str | None, str | None]:
    try:
        body = json_object(response.json())
    except ValueError:
        body = None
    error = body.get("error") if body is not None else None
    detail = body.get("error_description") if body is not None else None
    return (
        error if isinstance(error, str) else None,
        detail if isinstance(detail, str) else None,
    )


def _refusal(response: httpx.Response) -> TokenRequestError:
    error, detail = _error_of(response)
    if error is not None:
        described = f": {detail}" if detail is not None else ""
        return TokenRequestError(
            f"the token endpoint refused the request ({error}){described}", error=error
        )
    return TokenRequestError(f"the token endpoint answered HTTP {response.status_code}")


async def request_token(
    http: httpx.AsyncClient,
    server: ServerMetadata,
    identity: ClientIdentity,
    grant_type: str,
    *,
    dpop: DPoPProver | None = None,
    renew: Callable[[], Awaitable[dict[str, str]]] | None = None,
    **params: str | None,
) -> Token:
    """POST a ``grant_type`` request to ``server``'s token endpoint; the token it returns.

    ``renew`` gives the parameters to send afresh on a retry (a grant assertion, which the
    server may take as used once it has seen it)."""
    parameters = _deps.load("authlib.oauth2.rfc6749.parameters")
    wrappers = _deps.load("authlib.oauth2.rfc6749.wrappers")
    given = {name: value for name, value in params.items() if value}

    async def post() -> tuple[httpx.Response, bool]:
        """The endpoint's answer, and whether it gave a DPoP nonce not known before."""
        # Built afresh for the retry: a client assertion, like a proof, is single-use.
        body: str = parameters.prepare_token_request(grant_type, **given)
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        }
        url, headers, body = _client_auth(identity, server).prepare(
            "POST", server.token_endpoint, headers, body
        )
        if dpop is not None:
            headers["DPoP"] = dpop.proof("POST", url)
        logger.debug("token request (%s) to %s", grant_type, url)
        try:
            response = await http.post(url, content=body.encode(), headers=headers)
        except httpx.HTTPError as exc:
            raise TokenRequestError(
                f"the token endpoint is unreachable: {type(exc).__name__}"
            ) from None
        return response, dpop is not None and dpop.learn(response)

    response, fresh_nonce = await post()
    if fresh_nonce and response.status_code == 400 and _error_of(response)[0] == USE_DPOP_NONCE:
        logger.debug("the token endpoint asked for a DPoP nonce: retrying once with it")
        if renew is not None:
            given.update(await renew())
        response, _ = await post()
    if response.status_code != 200:
        raise _refusal(response)
    try:
        data = json_object(response.json())
    except ValueError:
        data = None
    token_type = data.get("token_type") if data is not None else None
    if (
        data is None
        or not isinstance(data.get("access_token"), str)
        or not isinstance(token_type, str)
    ):
        raise TokenRequestError("the token endpoint's answer is not a token response")
    token_type = token_type.lower()
    bound = dpop is not None and token_type == "dpop"
    if token_type != "bearer" and not bound:
        raise TokenRequestError(f"unsupported token type {data['token_type']!r}")
    data.pop("expires_at", None)
    if not isinstance(data.get("expires_in"), int | float):
        data.pop("expires_in", None)
    parsed = wrappers.OAuth2Token(data)
    refresh = parsed.get("refresh_token")
    scope = parsed.get("scope")
    return Token(
        access_token=parsed["access_token"],
        token_type="DPoP" if bound else "Bearer",
        expires_at=parsed.get("expires_at"),
        refresh_token=refresh if isinstance(refresh, str) else None,
        scope=scope if isinstance(scope, str) else given.get("scope"),
        issuer=server.issuer,
        client_id=identity.client_id,
        token_endpoint=server.token_endpoint,
        resource=given.get("resource"),
        dpop_key=dpop.key.to_jwk() if bound and dpop is not None else None,
    )
