"""The errors of the OAuth client: one family, each naming what was refused and why.

They derive from ``httpx.HTTPError`` because they end the HTTP request that needed the token:
a transport that already turns HTTP failures into a clear JSON-RPC error does the same for them.
No message ever carries a token, a code or a secret.
"""

from __future__ import annotations

import httpx


class AuthorizationError(httpx.HTTPError):
    """The client could not obtain (or refused to use) an authorization for the server."""


class ChallengeError(AuthorizationError, ValueError):
    """A ``WWW-Authenticate`` header that does not parse as RFC 9110 challenges."""


class DiscoveryError(AuthorizationError):
    """No usable protected-resource or authorization-server metadata (or a forged one)."""


class RegistrationError(AuthorizationError):
    """No client identity for the authorization server (none configured, none obtainable)."""


class AuthorizationResponseError(AuthorizationError):
    """The redirect back from the authorization server was refused (state, iss, error, code)."""


class TokenRequestError(AuthorizationError):
    """The token endpoint refused the request or answered something that is not a token."""

    def __init__(self, message: str, *, error: str | None = None) -> None:
        super().__init__(message)
        self.error = error


class MissingDependencyError(ImportError):
    """The optional ``auth`` extra is not installed."""
