"""The two ends of RFC 6750 on the wire: reading ``Authorization: Bearer``, writing the
``WWW-Authenticate`` challenge (with RFC 9728's ``resource_metadata``); and the same for the
``DPoP`` scheme of RFC 9449 7.1 (the token, its ``DPoP`` proof headers, the ``algs`` challenge)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from starlette.types import Scope

__all__ = [
    "MAX_TOKEN",
    "Credentials",
    "bearer_token",
    "challenge",
    "dpop_proofs",
    "valid_scope_token",
]

#: RFC 6750 2.1 ``b64token``.
_B64TOKEN: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
#: RFC 6750 3: the characters a ``scope`` token may use.
_SCOPE_TOKEN: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
#: A token longer than this is refused before any verifier sees it.
MAX_TOKEN: Final = 16 * 1024


@dataclass(frozen=True)
class Credentials:
    """What the ``Authorization`` header held: a token, nothing usable (``token`` None,
    ``problem`` None: answer with a plain challenge), or a malformed header (``problem``)."""

    token: str | None
    problem: str | None = None
    scheme: str | None = None
    #: The token came with the ``DPoP`` scheme (a proof must go with it).
    dpop: bool = False


def bearer_token(scope: Scope, dpop: bool = False) -> Credentials:
    """The bearer token of a request, read from its raw ASGI headers; with ``dpop`` the
    ``DPoP`` scheme is read too (same token syntax, RFC 9449 7.1)."""
    found = [value for name, value in scope["headers"] if name == b"authorization"]
    if not found:
        return Credentials(None)
    if len(found) > 1:
        return Credentials(None, "more than one Authorization header")
    text = found[0].decode("latin-1")
    if not text.isprintable():
        return Credentials(None, "control characters")
    scheme, _, rest = text.strip(" \t").partition(" ")
    named = scheme.lower()
    if named != "bearer" and not (dpop and named == "dpop"):
        shown = scheme[:20] if scheme.isascii() else "a non-ASCII scheme"
        return Credentials(None, scheme=shown or "an empty scheme")
    token = rest.strip(" \t")
    shown = "DPoP" if named == "dpop" else "Bearer"
    if not token:
        return Credentials(None, f"the {shown} scheme without a token")
    if len(token) > MAX_TOKEN:
        return Credentials(None, f"a {shown} token longer than {MAX_TOKEN} characters")
    if _B64TOKEN.fullmatch(token) is None:
        return Credentials(None, f"a {shown} token with characters RFC 6750 does not allow")
    return Credentials(token, dpop=named == "dpop")


def dpop_proofs(scope: Scope) -> list[str]:
    """The values of the request's ``DPoP`` headers (RFC 9449 4.3 allows exactly one)."""
    return [value.decode("latin-1") for name, value in scope["headers"] if name == b"dpop"]


def valid_scope_token(scope: str) -> bool:
    return _SCOPE_TOKEN.fullmatch(scope) is not None


def _quoted(text: str) -> str:
    """A quoted-string RFC 6750 allows: printable ASCII without ``"`` and ``\\``."""
    clean = "".join(c if " " <= c <= "~" and c not in '"\\' else " " for c in text)
    return f'"{clean}"'


def challenge(
    resource_metadata: str,
    scopes: Iterable[str] = (),
    error: str | None = None,
    description: str | None = None,
    scheme: str = "Bearer",
    algs: str | None = None,
) -> str:
    """The ``WWW-Authenticate`` value: ``Bearer`` (or ``DPoP``, with the proof algorithms
    accepted as ``algs``) with the metadata URL, the scopes the request needs, and the error
    (RFC 6750 3.1, RFC 9449 7.1) when the client sent something."""
    parts: list[str] = []
    if error is not None:
        parts.append(f"error={_quoted(error)}")
        if description:
            parts.append(f"error_description={_quoted(description)}")
    scope = " ".join(scopes)
    if scope:
        parts.append(f"scope={_quoted(scope)}")
    parts.append(f"resource_metadata={_quoted(resource_metadata)}")
    if algs is not None:
        parts.append(f"algs={_quoted(algs)}")
    return f"{scheme} " + ", ".join(parts)
