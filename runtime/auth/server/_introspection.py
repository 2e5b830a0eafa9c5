"""A ``TokenVerifier`` asking the authorization server about each token (RFC 7662).

For opaque tokens, or when revocation must take effect at once. The resource server
authenticates to the introspection endpoint as a client of its own (``client_secret_basic``
by default, as RFC 7662 expects; ``client_secret_post`` or a bearer token as alternatives),
and trusts the answer only as far as it goes: ``active`` must be true, and ``exp``/``nbf``
are checked here as well, since a cached or lagging answer may still say active.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import logging
import time
from typing import Any, Literal, cast
from urllib.parse import quote

import httpx

from ._bearer import MAX_TOKEN
from ._token import AccessToken, TokenError, VerifierUnavailable, check_times, from_claims

__all__ = ["IntrospectionVerifier"]

logger = logging.getLogger("mcpbind.runtime.auth")


AuthMethod = Literal["client_secret_basic", "client_secret_post", "bearer", "none"]


class IntrospectionVerifier:
    """Verifies tokens by POSTing them to ``endpoint`` (RFC 7662).

    ``client_id``/``client_secret`` authenticate this server to the endpoint with
    ``auth_method`` (``"bearer"`` sends ``client_secret`` as a bearer token). ``issuer``, if
    given, must match the answer's ``iss`` when it has one. An unreachable endpoint, or an
    answer that is not a JSON object, raises ``VerifierUnavailable`` (the client is told 503,
    not sent to re-authorize); ``active: false`` is an invalid token (401). ``cache_ttl``
    seconds (default 0: ask every time, so a revocation counts at once) an active answer is
    reused for the same token, at most ``cache_size`` of them, never past the token's expiry.
    """

    def __init__(
        self,
        endpoint: str,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        auth_method: AuthMethod = "client_secret_basic",
        issuer: str | None = None,
        leeway: float = 30.0,
        require_exp: bool = False,
        cache_ttl: float = 0.0,
        cache_size: int = 1024,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = 10.0,
    ) -> None:
        if auth_method != "none" and client_secret is None:
            raise ValueError(f"auth_method {auth_method!r} needs a client_secret")
        if auth_method in ("client_secret_basic", "client_secret_post") and client_id is None:
            raise ValueError(f"auth_method {auth_method!r} needs a client_id")
        self.endpoint = endpoint
        self.client_id = client_id
        self._secret = client_secret
        self.auth_method = auth_method
        self.issuer = issuer
        self.leeway = leeway
        self.require_exp = require_exp
        self._http = http_client
        self._timeout = timeout
        self.cache_ttl = cache_ttl
        self.cache_size = cache_size
        self._answers: dict[bytes, tuple[float, AccessToken]] = {}

    def _request(self, token: str) -> tuple[dict[str, str], dict[str, str]]:
        """The form and the headers of one introspection request."""
        form = {"token": token, "token_type_hint": "access_token"}
        headers = {"accept": "application/json"}
        if self.auth_method == "client_secret_basic":
            assert self.client_id is not None and self._secret is not None
            # RFC 6749 2.3.1: both parts form-urlencoded before Basic encoding.
            pair = f"{quote(self.client_id, safe='')}:{quote(self._secret, safe='')}"
            headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        elif self.auth_method == "client_secret_post":
            assert self.client_id is not None and self._secret is not None
            form |= {"client_id": self.client_id, "client_secret": self._secret}
        elif self.auth_method == "bearer":
            headers["authorization"] = f"Bearer {self._secret}"
        elif self.client_id is not None:
            form["client_id"] = self.client_id
        return form, headers

    async def _post(self, form: dict[str, str], headers: dict[str, str]) -> httpx.Response:
        if self._http is not None:
            return await self._http.post(
                self.endpoint, data=form, headers=headers, timeout=self._timeout
            )
        async with httpx.AsyncClient(timeout=self._timeout) as http:
            return await http.post(self.endpoint, data=form, headers=headers)

    async def verify(self, token: str) -> AccessToken | None:
        if len(token) > MAX_TOKEN:
            raise TokenError("the token is too long")
        if self.cache_ttl <= 0:
            return await self._introspect(token)
        digest = hashlib.sha256(token.encode()).digest()
        now = time.monotonic()
        known = self._answers.get(digest)
        if known is not None:
            until, remembered = known
            expiry = remembered.expires_at
            if now < until and (expiry is None or expiry > time.time()):
                return remembered
            del self._answers[digest]
        answer = await self._introspect(token)
        if answer is not None:
            if len(self._answers) >= self.cache_size:
                del self._answers[next(iter(self._answers))]
            self._answers[digest] = (now + self.cache_ttl, answer)
        return answer

    async def _introspect(self, token: str) -> AccessToken | None:
        form, headers = self._request(token)
        try:
            response = await self._post(form, headers)
        except httpx.HTTPError as exc:
            logger.warning("token introspection at %s failed: %s", self.endpoint, exc)
            raise VerifierUnavailable(f"the introspection endpoint is unreachable: {exc}") from exc
        if response.status_code != 200:
            logger.warning(
                "token introspection at %s answered HTTP %d", self.endpoint, response.status_code
            )
            raise VerifierUnavailable(
                f"the introspection endpoint answered HTTP {response.status_code}"
            )
        try:
            document: object = response.json()
        except ValueError:
            document = None
        if not isinstance(document, dict):
            raise VerifierUnavailable("the introspection endpoint answered something not JSON")
        answer = cast("dict[str, Any]", document)
        if answer.get("active") is not True:
            return None
        issuer = answer.get("iss")
        if self.issuer is not None and issuer is not None and issuer != self.issuer:
            raise TokenError("the token was issued by another authorization server")
        check_times(answer, self.leeway, self.require_exp)
        verified = from_claims(answer)
        if verified.issuer is None and self.issuer is not None:
            verified = dataclasses.replace(verified, issuer=self.issuer)
        return verified
