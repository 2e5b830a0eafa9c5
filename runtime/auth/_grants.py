"""The grants: authorization code with PKCE (users), client credentials and JWT bearer (machines).

Each is an ``httpx.Auth`` (see ``_flow.OAuthFlow``) to pass as ``auth=`` to
``streamable_http_client``, ``sse_client`` or any ``httpx.AsyncClient``.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping

import httpx

from . import _deps
from ._discovery import ServerMetadata
from ._errors import AuthorizationError, AuthorizationResponseError, DiscoveryError
from ._flow import OAuthFlow, merge_scopes
from ._guard import Resolver
from ._redirect import LoopbackRedirectHandler, RedirectHandler
from ._registration import ClientMetadata, check_metadata_url, identity_for
from ._store import TokenStore
from ._token_endpoint import JWT_BEARER, ClientIdentity, Token, request_token

logger = logging.getLogger(__name__)

OFFLINE_ACCESS = "offline_access"


def check_authorization_response(
    params: Mapping[str, str], *, state: str, server: ServerMetadata
) -> str:
    """The authorization code from a redirect, after the checks that must come first.

    ``state`` must be the one sent. ``iss`` (RFC 9207 section 2.4), compared by plain string
    equality with the issuer recorded from the validated metadata: required when the server
    advertises ``authorization_response_iss_parameter_supported``, compared whenever present.
    Only then is an ``error`` reported, and a ``code`` required.
    """
    if not hmac.compare_digest(params.get("state", ""), state):
        raise AuthorizationResponseError(
            "authorization response refused: its state is not the one sent (possible CSRF)"
        )
    iss = params.get("iss")
    if iss is None:
        if server.authorization_response_iss_parameter_supported:
            raise AuthorizationResponseError(
                f"authorization response refused: {server.issuer} advertises the iss parameter "
                "but the response has none"
            )
    elif iss != server.issuer:
        raise AuthorizationResponseError(
            f"authorization response refused: it comes from {iss!r}, not {server.issuer!r} "
            "(possible mix-up attack)"
        )
    error = params.get("error")
    if error is not None:
        detail = params.get("error_description")
        raise AuthorizationResponseError(
            f"authorization denied by {server.issuer}: {error}" + (f" ({detail})" if detail else "")
        )
    code = params.get("code")
    if not code:
        raise AuthorizationResponseError("authorization response has no code")
    return code


class OAuthClientAuth(OAuthFlow):
    """OAuth 2.1 authorization code with PKCE S256, for a client acting for a user.

    ``redirect_handler`` gets the user to the authorization server and back (default: a
    ``LoopbackRedirectHandler`` opening the browser). The client identity is, in order:
    ``client`` (pre-registered), ``client_metadata_url`` (a Client ID Metadata Document, when
    the server supports them), else dynamic registration with ``client_metadata``.
    """

    def __init__(
        self,
        server_url: str,
        *,
        redirect_handler: RedirectHandler | None = None,
        client_metadata: ClientMetadata | None = None,
        client_metadata_url: str | None = None,
        client: ClientIdentity | None = None,
        store: TokenStore | None = None,
        max_step_up: int = 2,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        allowed_metadata_origins: Iterable[str] = (),
        resolver: Resolver | None = None,
        dpop: bool | None = None,
        dpop_algorithm: str = "ES256",
    ) -> None:
        super().__init__(
            server_url,
            store=store,
            client=client,
            max_step_up=max_step_up,
            transport=transport,
            timeout=timeout,
            allowed_metadata_origins=allowed_metadata_origins,
            resolver=resolver,
            dpop=dpop,
            dpop_algorithm=dpop_algorithm,
        )
        self.redirect_handler: RedirectHandler = redirect_handler or LoopbackRedirectHandler()
        self.client_metadata = client_metadata or ClientMetadata()
        if not self.client_metadata.redirect_uris:
            self.client_metadata.redirect_uris = [self.redirect_handler.redirect_uri]
        self.client_metadata_url = (
            check_metadata_url(client_metadata_url) if client_metadata_url else None
        )

    async def _obtain(
        self, http: httpx.AsyncClient, server: ServerMetadata, resource: str, scopes: list[str]
    ) -> Token:
        if server.authorization_endpoint is None:
            raise DiscoveryError(f"{server.issuer} has no authorization endpoint")
        if server.from_document and "S256" not in (server.code_challenge_methods_supported or []):
            raise AuthorizationError(
                f"{server.issuer} does not advertise PKCE S256 (code_challenge_methods_supported):"
                " refusing to authorize without it"
            )
        identity = await identity_for(
            http,
            self.store,
            server,
            preregistered=self._bind(server),
            metadata_url=self.client_metadata_url,
            metadata=self.client_metadata,
        )
        security = _deps.load("authlib.common.security")
        rfc7636 = _deps.load("authlib.oauth2.rfc7636")
        parameters = _deps.load("authlib.oauth2.rfc6749.parameters")
        verifier: str = security.generate_token(64)
        state: str = security.generate_token(32)
        if self.client_metadata.wants_refresh_tokens() and OFFLINE_ACCESS in (
            server.scopes_supported or []
        ):
            scopes = merge_scopes(scopes, [OFFLINE_ACCESS])
        redirect_uri = self.redirect_handler.redirect_uri
        url: str = parameters.prepare_grant_uri(
            server.authorization_endpoint,
            identity.client_id,
            "code",
            redirect_uri=redirect_uri,
            scope=" ".join(scopes) or None,
            state=state,
            code_challenge=rfc7636.create_s256_code_challenge(verifier),
            code_challenge_method="S256",
            resource=resource,
        )
        params = await self.redirect_handler(url)
        code = check_authorization_response(params, state=state, server=server)
        return await request_token(
            http,
            server,
            identity,
            "authorization_code",
            dpop=self._dpop_for(server),
            code=code,
            redirect_uri=redirect_uri,
            code_verifier=verifier,
            resource=resource,
        )


class ClientCredentialsAuth(OAuthFlow):
    """OAuth ``client_credentials`` for a client acting on its own behalf (no user).

    Authenticates with ``client_secret`` (``client_secret_basic``, or ``client_secret_post`` if
    that is all the server takes) or ``private_key`` (PEM, ``private_key_jwt`` signed with
    ``signing_algorithm``). ``scope`` overrides the scope selection.
    """

    def __init__(
        self,
        server_url: str,
        *,
        client_id: str,
        client_secret: str | None = None,
        private_key: str | None = None,
        signing_algorithm: str = "RS256",
        token_endpoint_auth_method: str | None = None,
        issuer: str | None = None,
        scope: str | None = None,
        store: TokenStore | None = None,
        max_step_up: int = 2,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        allowed_metadata_origins: Iterable[str] = (),
        resolver: Resolver | None = None,
        dpop: bool | None = None,
        dpop_algorithm: str = "ES256",
    ) -> None:
        client = ClientIdentity(
            client_id=client_id,
            client_secret=client_secret,
            private_key=private_key,
            signing_algorithm=signing_algorithm,
            token_endpoint_auth_method=token_endpoint_auth_method,
            issuer=issuer,
        )
        super().__init__(
            server_url,
            store=store,
            client=client,
            max_step_up=max_step_up,
            transport=transport,
            timeout=timeout,
            allowed_metadata_origins=allowed_metadata_origins,
            resolver=resolver,
            dpop=dpop,
            dpop_algorithm=dpop_algorithm,
        )
        self.scope = scope

    async def _grant(
        self, http: httpx.AsyncClient, server: ServerMetadata, resource: str, scope: str | None
    ) -> Token:
        return await request_token(
            http, server, self._identity(server), "client_credentials", scope=scope,
            resource=resource, dpop=self._dpop_for(server),
        )  # fmt: skip

    def _identity(self, server: ServerMetadata) -> ClientIdentity:
        identity = self._bind(server)
        assert identity is not None
        if identity.issuer != server.issuer:
            raise AuthorizationError(
                f"client {identity.client_id!r} belongs to {identity.issuer}, but the server "
                f"now names {server.issuer}: refusing to present its credentials there"
            )
        return identity

    async def _obtain(
        self, http: httpx.AsyncClient, server: ServerMetadata, resource: str, scopes: list[str]
    ) -> Token:
        return await self._grant(http, server, resource, self.scope or " ".join(scopes) or None)

    async def _grant_again(self) -> Token | None:
        # No user takes part: ask the server that granted the expired token again before the
        # request, rather than send it without one and wait for the 401. What this process
        # granted before; a token loaded from a store, or a refused grant, takes the 401 path.
        if self._granted is None:
            return None
        server, resource, scopes = self._granted
        async with self._http() as http:
            try:
                token = await self._obtain(http, server, resource, scopes)
            except httpx.HTTPError as exc:  # a refusal (TokenRequestError) or the network
                logger.info("granting a new token before the request failed (%s)", exc)
                self._granted = None  # stale: the 401's authorization discovers afresh
                return None
        await self.store.save(self._token_key, token.to_dict())
        return token


#: Given the authorization server's issuer and the resource, returns a JWT authorization grant.
AssertionProvider = Callable[[str, str], Awaitable[str]]


class JwtBearerAuth(ClientCredentialsAuth):
    """The JWT bearer grant (RFC 7523 section 2.1): a signed assertion traded for a token.

    ``assertion`` is called with the authorization server's issuer (the assertion's audience)
    and the resource; it returns the JWT, e.g. an identity assertion (ID-JAG) obtained from an
    enterprise identity provider by token exchange (RFC 8693), or a workload identity token.
    """

    def __init__(
        self, server_url: str, *, assertion: AssertionProvider, client_id: str, **options: object
    ) -> None:
        super().__init__(server_url, client_id=client_id, **options)  # type: ignore[arg-type]
        self.assertion = assertion

    async def _grant(
        self, http: httpx.AsyncClient, server: ServerMetadata, resource: str, scope: str | None
    ) -> Token:
        async def renew() -> dict[str, str]:
            # Asked again for a retry: an assertion may be single-use (its jti, RFC 7523 3).
            return {"assertion": await self.assertion(server.issuer, resource)}

        return await request_token(
            http, server, self._identity(server), JWT_BEARER, scope=scope, resource=resource,
            dpop=self._dpop_for(server), renew=renew, **await renew(),
        )  # fmt: skip
