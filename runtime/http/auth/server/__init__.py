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
"""

from ._introspection import IntrospectionVerifier
from ._jwt import JWTVerifier
from ._resource import WELL_KNOWN, ResourceServer, canonical_resource
from ._token import AccessToken, TokenError, TokenVerifier, VerifierUnavailable

__all__ = [
    "WELL_KNOWN",
    "AccessToken",
    "IntrospectionVerifier",
    "JWTVerifier",
    "ResourceServer",
    "TokenError",
    "TokenVerifier",
    "VerifierUnavailable",
    "canonical_resource",
]
