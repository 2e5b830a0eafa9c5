"""What a verified access token says, the verifier protocol, and its two error types.

Kept free of any OAuth library so that the HTTP server can name these types without the
``auth`` extra installed: the libraries load only when a verifier that needs them is made.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Protocol, cast, runtime_checkable

from mcpbind.runtime.core.access_token import AccessToken

__all__ = [
    "AccessToken",
    "TokenError",
    "TokenVerifier",
    "VerifierUnavailable",
    "check_times",
    "from_claims",
]


class TokenError(Exception):
    """The token is not acceptable (bad signature, expired, wrong issuer...): HTTP 401 with
    ``error="invalid_token"``. ``description`` is shown to the client, so it names the rule
    broken, never a key or the token."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


class VerifierUnavailable(Exception):
    """The token could not be checked for a reason that is not the client's fault (the JWKS
    or introspection endpoint is down): HTTP 503, so the client retries instead of sending
    its user through authorization again."""


@runtime_checkable
class TokenVerifier(Protocol):
    """Checks a bearer token: its ``AccessToken`` if valid, else ``None`` or ``TokenError``.

    The verifier answers for authenticity and validity (signature or introspection, issuer,
    lifetime); the ``ResourceServer`` then checks the audience and the scopes, so a verifier
    of one's own gets those checks too.
    """

    async def verify(self, token: str) -> AccessToken | None: ...


def _strings(value: Any) -> tuple[str, ...] | None:
    """A JSON string or array of strings as a tuple; ``None`` for anything else."""
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list):
        return None
    items = cast("list[object]", value)
    strings = tuple(item for item in items if isinstance(item, str))
    return strings if len(strings) == len(items) else None


def _number(claims: Mapping[str, Any], name: str) -> int | None:
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TokenError(f"the token's {name!r} is not a number")
    return int(value)


def check_times(claims: Mapping[str, Any], leeway: float, require_exp: bool) -> None:
    """``exp`` and ``nbf`` against the clock, allowing ``leeway`` seconds of skew."""
    now = time.time()
    expires = _number(claims, "exp")
    if expires is None:
        if require_exp:
            raise TokenError("the token has no expiry ('exp')")
    elif expires <= now - leeway:
        raise TokenError("the token has expired")
    not_before = _number(claims, "nbf")
    if not_before is not None and not_before > now + leeway:
        raise TokenError("the token is not valid yet ('nbf')")


def from_claims(claims: Mapping[str, Any]) -> AccessToken:
    """An ``AccessToken`` from JWT claims (RFC 9068) or an introspection answer (RFC 7662):
    ``scope`` is a space-separated string (``scp``, a list, as some servers send), the client
    is ``client_id`` (or ``azp``), ``aud`` a string or a list."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        scopes = frozenset(scope.split())
    else:
        listed = _strings(claims.get("scp")) if scope is None else None
        if scope is not None or (claims.get("scp") is not None and listed is None):
            raise TokenError("the token's scope is malformed")
        scopes = frozenset(listed or ())
    audience = claims.get("aud")
    audiences = () if audience is None else _strings(audience)
    if audiences is None:
        raise TokenError("the token's audience ('aud') is malformed")
    texts: dict[str, str | None] = {}
    for name in ("sub", "client_id", "azp", "iss"):
        value = claims.get(name)
        if value is not None and not isinstance(value, str):
            raise TokenError(f"the token's {name!r} is not a string")
        texts[name] = value
    return AccessToken(
        subject=texts["sub"],
        client_id=texts["client_id"] or texts["azp"],
        scopes=scopes,
        expires_at=_number(claims, "exp"),
        audience=audiences,
        issuer=texts["iss"],
        claims=dict(claims),
    )
