"""What the HTTP transports ask of a resource server protecting them (their ``auth=``).

The transports name this protocol, not its implementation: ``mcpbind.runtime.auth.server``'s
``ResourceServer`` is one (bearer tokens, RFC 9728 metadata, scopes), and an application may
bring its own. A verified token goes into the ASGI scope under ``common.AUTH_SCOPE_KEY``, where
the session's request context finds it (``RequestContext.auth``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from starlette.types import Scope, Send

__all__ = ["Protection"]


class Protection(Protocol):
    """The checks a protected HTTP endpoint runs on each request."""

    async def serve_metadata(self, scope: Scope, send: Send) -> bool:
        """Answer a protected-resource metadata request; ``False`` if this is not one."""
        ...

    async def admit(self, scope: Scope, send: Send) -> bool:
        """Verify the request's token (answering 401/403 itself); ``True`` lets it through."""
        ...

    def operation_refusal(
        self, scope: Scope, messages: Sequence[Any]
    ) -> tuple[int, bytes, dict[str, str]] | None:
        """The refusal (status, body, headers) of JSON-RPC calls the token may not make, or
        ``None`` when it may."""
        ...

    async def admit_operations(self, scope: Scope, send: Send, messages: Sequence[Any]) -> bool:
        """``operation_refusal``, answered: ``False`` once the refusal is sent."""
        ...

    def bind(self, session: object, scope: Scope) -> None:
        """Bind a new session to the token holder that opened it."""
        ...

    def owns(self, session: object, scope: Scope) -> bool:
        """Whether this request's token holder is the one the session is bound to."""
        ...
