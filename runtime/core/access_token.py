"""Who a request's OAuth access token speaks for, as handlers see it (``RequestContext.auth``).

The core names this type and nothing else of authorization: a resource server
(``mcpbind.runtime.auth.server``) verifies tokens and puts an ``AccessToken`` in the transport's
per-request context; the core only hands it to handlers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AccessToken"]


@dataclass(frozen=True)
class AccessToken:
    """A verified access token: who it speaks for, to whom, with what rights, until when.

    The raw token is deliberately not kept: an MCP server must never pass it on to another
    service (authorization.md, "token passthrough"), and what is not held cannot leak into a
    log. ``claims`` has everything the verifier saw (JWT claims or the introspection answer).
    """

    subject: str | None
    client_id: str | None
    scopes: frozenset[str]
    expires_at: int | None
    audience: tuple[str, ...]
    issuer: str | None = None
    claims: Mapping[str, Any] = field(default_factory=dict[str, Any], repr=False)

    @property
    def principal(self) -> str:
        """Who holds the token, as one string: a session is bound to it, so a refreshed token
        of the same user and client keeps working while another's token does not."""
        return "\n".join((self.issuer or "", self.subject or "", self.client_id or ""))
