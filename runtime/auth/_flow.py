"""The part every OAuth grant shares: an ``httpx.Auth`` that answers 401 and 403 challenges.

On a 401 it parses the Bearer challenge, discovers the authorization server (``_discovery``),
chooses the scopes (the challenge's, else the resource's ``scopes_supported``, else none) and
lets the grant obtain a token (``_obtain``), then retries the request once. On a 403
``insufficient_scope`` it re-authorizes with the union of the scopes asked so far and the
challenge's, at most ``max_step_up`` times per request. Tokens are kept in a ``TokenStore``
under the server's canonical URI and refreshed before they expire; on a 401 the refresh token
is used only while the resource still names the authorization server that issued it.

DPoP (RFC 9449, SEP-1932): when the authorization server lists
``dpop_signing_alg_values_supported`` (or ``dpop=True``), token requests carry a proof made
with the flow's key (``_dpop``), the ``DPoP`` token that comes back is stored with that key,
and every request presents it as ``Authorization: DPoP`` with a fresh proof. A server that
answers ``use_dpop_nonce`` (with a new ``DPoP-Nonce``) gets the request once more with it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Callable, Generator, Iterable
from dataclasses import replace
from typing import cast

import anyio
import httpx
from mcpbind.runtime.core.outgoing import DEADLINE_HOLD

from ._challenge import Challenge, oauth_challenge
from ._discovery import (
    ServerMetadata,
    canonical_resource,
    discover_resource,
    discover_server,
    origin,
)
from ._dpop import USE_DPOP_NONCE, DPoPKey, DPoPProver, choose_algorithm, key_for
from ._errors import AuthorizationError, DiscoveryError, TokenRequestError
from ._guard import OriginGuard, Resolver
from ._http import oauth_client
from ._registration import client_key
from ._store import MemoryTokenStore, TokenStore
from ._token_endpoint import ClientIdentity, Token, request_token

logger = logging.getLogger(__name__)


def merge_scopes(*groups: list[str] | None) -> list[str]:
    """The union of scope lists, in first-seen order."""
    return list(dict.fromkeys(scope for group in groups if group for scope in group))


class OAuthFlow(httpx.Auth):
    """Base of the OAuth ``httpx.Auth`` classes; subclasses implement ``_obtain``.

    Discovery stays near the MCP server (``_guard``): ``allowed_metadata_origins`` names the
    other origins (``https://host[:port]``) it may fetch protected-resource metadata from, and
    whose authorization server endpoints may be on a private, loopback or link-local address
    the MCP server is not on. ``resolver`` replaces the system resolver for that address check.

    ``dpop``: None (the default) binds tokens to a key (RFC 9449) when the authorization
    server advertises DPoP, True always (``AuthorizationError`` if it advertises only
    algorithms the client lacks), False never. ``dpop_algorithm`` is the key's algorithm when
    the server takes it (ES256 by default). One key per flow, stored with its tokens.
    """

    def __init__(
        self,
        server_url: str,
        *,
        store: TokenStore | None = None,
        client: ClientIdentity | None = None,
        max_step_up: int = 2,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        allowed_metadata_origins: Iterable[str] = (),
        resolver: Resolver | None = None,
        dpop: bool | None = None,
        dpop_algorithm: str = "ES256",
    ) -> None:
        choose_algorithm(None, dpop_algorithm)  # an unknown algorithm fails here, not later
        self.server_url = canonical_resource(server_url)
        self.allowed_metadata_origins = tuple(allowed_metadata_origins)
        self._resolver = resolver
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.client = client
        self.max_step_up = max_step_up
        self._transport = transport
        self._timeout = timeout
        self._lock = anyio.Lock()
        self._scopes: list[str] = []
        #: Where the last grant came from (server, resource, scopes), for a flow that can ask
        #: again with no one present (``_grant_again``).
        self._granted: tuple[ServerMetadata, str, list[str]] | None = None
        self._token_key = f"tokens {self.server_url}"
        self.dpop = dpop
        self.dpop_algorithm = dpop_algorithm
        self._dpop_key: DPoPKey | None = None
        self._dpop_keys: dict[str, DPoPKey] = {}
        #: The DPoP nonces servers gave, per origin (authorization and resource servers).
        self._dpop_nonces: dict[str, str] = {}

    # -- the grant's part ------------------------------------------------------------------

    async def _obtain(
        self,
        http: httpx.AsyncClient,
        server: ServerMetadata,
        resource: str,
        scopes: list[str],
    ) -> Token:
        raise NotImplementedError

    def _bind(self, server: ServerMetadata) -> ClientIdentity | None:
        """The pre-registered client, bound to the first authorization server it meets."""
        if self.client is not None and self.client.issuer is None:
            self.client = replace(self.client, issuer=server.issuer)
        return self.client

    # -- DPoP ------------------------------------------------------------------------------

    def _dpop_for(self, server: ServerMetadata) -> DPoPProver | None:
        """The prover for a token request to ``server`` (None: a bearer token is asked for)."""
        if self.dpop is False:
            return None
        raw: object = server.raw.get("dpop_signing_alg_values_supported")
        listed = cast("list[object]", raw) if isinstance(raw, list) else None
        advertised = [a for a in listed if isinstance(a, str)] if listed is not None else None
        if self.dpop is None and not advertised:
            return None
        algorithm = choose_algorithm(advertised, self.dpop_algorithm)
        if algorithm is None:
            if self.dpop is None:
                return None
            raise AuthorizationError(
                f"{server.issuer} takes DPoP proofs signed with {', '.join(advertised or [])}"
                " only: none of them is supported"
            )
        if self._dpop_key is None or self._dpop_key.algorithm != algorithm:
            self._dpop_key = DPoPKey.generate(algorithm)
        return DPoPProver(self._dpop_key, self._dpop_nonces)

    def _prover_of(self, token: Token) -> DPoPProver | None:
        """The prover of a DPoP-bound token (its key as stored with it), else None."""
        if not token.dpop_bound:
            return None
        key = key_for(token.dpop_key, self._dpop_keys)
        assert key is not None
        if self._dpop_key is None:
            self._dpop_key = key  # later tokens stay bound to the key stored before
        return DPoPProver(key, self._dpop_nonces)

    def _present(self, request: httpx.Request, token: Token) -> DPoPProver | None:
        """Put ``token`` on ``request``: ``Bearer``, or ``DPoP`` with a fresh proof."""
        prover = self._prover_of(token)
        if prover is None:
            request.headers["Authorization"] = f"Bearer {token.access_token}"
            request.headers.pop("DPoP", None)
            return None
        request.headers["Authorization"] = f"DPoP {token.access_token}"
        request.headers["DPoP"] = prover.proof(request.method, str(request.url), token.access_token)
        return prover

    # -- httpx.Auth ------------------------------------------------------------------------

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        raise RuntimeError("OAuth authorization needs an httpx.AsyncClient")

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        token = await self.token()
        prover = self._present(request, token) if token is not None else None
        response = yield request
        step_ups = 0
        reauthorized = False
        nonce_retried = False
        while True:
            fresh_nonce = prover is not None and prover.learn(response)
            if response.status_code not in (401, 403):
                return
            challenge = oauth_challenge(
                response.headers.get_list("www-authenticate"), dpop=prover is not None
            )
            if (
                token is not None
                and response.status_code == 401
                and fresh_nonce
                and not nonce_retried
                and challenge is not None
                and challenge.error == USE_DPOP_NONCE
            ):
                # RFC 9449 9: the resource server wants its nonce in the proof; once.
                nonce_retried = True
                await response.aread()
                prover = self._present(request, token)
                response = yield request
                continue
            if response.status_code == 403:
                if challenge is None or challenge.error != "insufficient_scope":
                    return
                if step_ups >= self.max_step_up:
                    logger.warning(
                        "still insufficient_scope after %d step-up(s): giving up", step_ups
                    )
                    return
                step_ups += 1
            elif reauthorized:
                return
            else:
                reauthorized = True
            await response.aread()
            # Signing in (a browser, a user) is not the server's time: the MCP request's
            # timeout is held meanwhile, when the transport passed its hold along.
            hold: Callable[[], contextlib.AbstractContextManager[None]] | None = (
                request.extensions.get(DEADLINE_HOLD)
            )
            with hold() if callable(hold) else contextlib.nullcontext():
                token = await self._reauthorize(token, challenge, response.status_code == 403)
            prover = self._present(request, token)
            response = yield request

    async def authorize(self) -> Token:
        """Get a token now, before connecting: what the server's first 401 would trigger.

        A sign-in on a request's 401 does not count against that request's timeout (the
        transport holds its deadline meanwhile); an app may still sign in before connecting,
        so that no request waits on the user at all. The server is asked once without a token
        for its challenge (scopes, metadata URL); without one, discovery uses the well-known
        URLs.
        """
        async with self._lock:
            current = await self._usable_token()
            if current is not None:
                return current
            async with self._http() as http:
                challenge = None
                try:
                    async with http.stream(
                        "GET", self.server_url, headers={"Accept": "text/event-stream"}
                    ) as response:
                        if response.status_code == 401:
                            found = response.headers.get_list("www-authenticate")
                            challenge = oauth_challenge(found)
                except httpx.HTTPError as exc:
                    raise DiscoveryError(f"{self.server_url} is unreachable: {exc}") from exc
                token = await self._authorize(http, challenge, step_up=False)
            await self.store.save(self._token_key, token.to_dict())
            return token

    # -- tokens ----------------------------------------------------------------------------

    async def token(self) -> Token | None:
        """The stored token, refreshed first if it is about to expire (None: none usable)."""
        async with self._lock:
            return await self._usable_token()

    async def _usable_token(self) -> Token | None:
        stored = await self.store.load(self._token_key)
        token = Token.from_dict(stored) if stored is not None else None
        if token is None or not token.expired():
            return token
        if token.refresh_token is None:
            return await self._grant_again()
        async with self._http() as http:
            return await self._refresh(http, token)

    async def _grant_again(self) -> Token | None:
        """A new token for an expired one that cannot be refreshed, where the flow can ask with
        no one present (None: the server's 401 starts authorization as usual)."""
        return None

    async def _refresh(self, http: httpx.AsyncClient, token: Token) -> Token | None:
        """A refreshed token (RFC 6749 section 6), or None (and the old one dropped)."""
        if token.issuer is None or token.token_endpoint is None or token.refresh_token is None:
            return None
        server = ServerMetadata(
            issuer=token.issuer, authorization_endpoint=None, token_endpoint=token.token_endpoint
        )
        identity = await self._identity_for_refresh(token)
        try:
            fresh = await request_token(
                http,
                server,
                identity,
                "refresh_token",
                # A refresh token bound to a key (RFC 9449 5) is refreshed with its proof.
                dpop=self._prover_of(token),
                refresh_token=token.refresh_token,
                resource=token.resource or self.server_url,
            )
        except TokenRequestError as exc:
            logger.info("token refresh refused (%s); authorizing again", exc.error or exc)
            await self.store.delete(self._token_key)
            return None
        if fresh.refresh_token is None:
            fresh.refresh_token = token.refresh_token
        fresh.scope = fresh.scope or token.scope
        await self.store.save(self._token_key, fresh.to_dict())
        logger.info("refreshed the access token for %s", self.server_url)
        return fresh

    async def _identity_for_refresh(self, token: Token) -> ClientIdentity:
        if self.client is not None and self.client.client_id == token.client_id:
            return self.client
        stored = await self.store.load(client_key(token.issuer or ""))
        if stored is not None:
            identity = ClientIdentity.from_dict(stored)
            if identity.client_id == token.client_id:
                return identity
        return ClientIdentity(client_id=token.client_id or "", token_endpoint_auth_method="none")

    def _http(self) -> httpx.AsyncClient:
        return oauth_client(self._transport, self._timeout)

    def _guard(self) -> OriginGuard:
        """The discovery rules, with a fresh resolution cache for each authorization."""
        return OriginGuard(
            self.server_url,
            allowed_origins=self.allowed_metadata_origins,
            resolver=self._resolver,
            timeout=self._timeout,
        )

    async def _reauthorize(
        self, used: Token | None, challenge: Challenge | None, step_up: bool
    ) -> Token:
        async with self._lock:
            current = await self._usable_token()
            if (
                not step_up
                and current is not None
                and (used is None or current.access_token != used.access_token)
            ):
                return current  # another request got a new token meanwhile
            async with self._http() as http:
                if (
                    not step_up
                    and current is not None
                    and current.refresh_token is not None
                    and await self._same_server(http, challenge, current)
                ):
                    refreshed = await self._refresh(http, current)
                    if refreshed is not None:
                        return refreshed
                token = await self._authorize(http, challenge, step_up)
            await self.store.save(self._token_key, token.to_dict())
            return token

    async def _same_server(
        self, http: httpx.AsyncClient, challenge: Challenge | None, token: Token
    ) -> bool:
        """Whether the resource still names the server that issued ``token``."""
        resource = await discover_resource(
            http, self.server_url, challenge.resource_metadata if challenge else None, self._guard()
        )
        issuers = resource.authorization_servers if resource else [origin(self.server_url)]
        return token.issuer in issuers

    async def _authorize(
        self, http: httpx.AsyncClient, challenge: Challenge | None, step_up: bool
    ) -> Token:
        guard = self._guard()
        resource_metadata = await discover_resource(
            http, self.server_url, challenge.resource_metadata if challenge else None, guard
        )
        if resource_metadata is not None:
            issuer = resource_metadata.authorization_servers[0]
            server = await discover_server(http, issuer, guard)
            if server is None:
                raise DiscoveryError(f"no authorization server metadata found for {issuer}")
            resource = canonical_resource(resource_metadata.resource)
        else:
            # 2025-03-26: no PRM; the server's origin is its authorization server.
            base = origin(self.server_url)
            server = await discover_server(http, base, guard) or ServerMetadata.defaults(base)
            resource = self.server_url
        challenged = challenge.scopes if challenge is not None else []
        if challenged:
            scopes = merge_scopes(self._scopes, challenged) if step_up else challenged
        elif step_up:
            scopes = self._scopes
        else:
            supported = resource_metadata.scopes_supported if resource_metadata else None
            scopes = list(supported or [])
        token = await self._obtain(http, server, resource, scopes)
        self._scopes = scopes
        self._granted = (server, resource, scopes)
        logger.info("authorized with %s for %s", server.issuer, resource)
        return token
