"""An MCP HTTP server as an OAuth 2.1 resource server (authorization.md, RFC 6750/8707/9728).

::

    verifier = JWTVerifier("https://auth.example.com", jwks_url="https://auth.example.com/jwks")
    auth = ResourceServer(
        verifier,
        resource="https://mcp.example.com/mcp",
        authorization_servers=["https://auth.example.com"],
        required_scopes=["mcp:tools"],
    )
    app = StreamableHTTPServer(server.serve, auth=auth)

Handlers see the verified token as ``context.auth`` (an ``AccessToken``). ``JWTVerifier``
needs the ``auth`` extra (joserfc); ``IntrospectionVerifier`` and verifiers of one's own
(anything with ``async def verify(token) -> AccessToken | None``) do not.

``ResourceServer(..., dpop=DPoPVerifier())`` also takes DPoP-bound tokens with their proofs
(RFC 9449, SEP-1932); ``dpop_required=True`` takes nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpbind.runtime._exports import install

if TYPE_CHECKING:
    from ._dpop import (
        DPoPError as DPoPError,
        DPoPProof as DPoPProof,
        DPoPUnavailable as DPoPUnavailable,
        DPoPVerifier as DPoPVerifier,
        InProcessReplayCache as InProcessReplayCache,
        ReplayCache as ReplayCache,
    )
    from ._introspection import IntrospectionVerifier as IntrospectionVerifier
    from ._jwt import JWTVerifier as JWTVerifier
    from ._resource import (
        WELL_KNOWN as WELL_KNOWN,
        ResourceServer as ResourceServer,
        canonical_resource as canonical_resource,
    )
    from ._token import (
        AccessToken as AccessToken,
        TokenError as TokenError,
        TokenVerifier as TokenVerifier,
        VerifierUnavailable as VerifierUnavailable,
    )

install(globals())
