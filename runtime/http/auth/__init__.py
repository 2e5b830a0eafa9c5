"""OAuth 2.1 authorization for MCP over HTTP (the client side; ``server`` is the resource server).

Pass one of these ``httpx.Auth`` objects as ``auth=`` to ``streamable_http_client`` or
``sse_client``; on the server's first 401 it discovers the authorization server, gets a token
and retries::

    auth = OAuthClientAuth("https://mcp.example.com/mcp", client_metadata_url=CIMD_URL)
    async with Client(streamable_http_client(url, auth=auth)) as client: ...

authlib (the ``auth`` extra) does PKCE, request encoding, client authentication and JWT
signing; it is imported only when a flow runs, with an error naming the extra if it is missing.
"""

from ._challenge import Challenge, bearer_challenge, parse_www_authenticate
from ._discovery import ResourceMetadata, ServerMetadata, discover_resource, discover_server
from ._errors import (
    AuthorizationError,
    AuthorizationResponseError,
    ChallengeError,
    DiscoveryError,
    MissingDependencyError,
    RegistrationError,
    TokenRequestError,
)
from ._flow import OAuthFlow
from ._grants import (
    AssertionProvider,
    ClientCredentialsAuth,
    JwtBearerAuth,
    OAuthClientAuth,
    check_authorization_response,
)
from ._redirect import FollowRedirectHandler, LoopbackRedirectHandler, RedirectHandler
from ._registration import ClientMetadata
from ._store import FileTokenStore, MemoryTokenStore, TokenStore
from ._token_endpoint import ClientIdentity, Token

__all__ = [
    "AssertionProvider",
    "AuthorizationError",
    "AuthorizationResponseError",
    "Challenge",
    "ChallengeError",
    "ClientCredentialsAuth",
    "ClientIdentity",
    "ClientMetadata",
    "DiscoveryError",
    "FileTokenStore",
    "FollowRedirectHandler",
    "JwtBearerAuth",
    "LoopbackRedirectHandler",
    "MemoryTokenStore",
    "MissingDependencyError",
    "OAuthClientAuth",
    "OAuthFlow",
    "RedirectHandler",
    "RegistrationError",
    "ResourceMetadata",
    "ServerMetadata",
    "Token",
    "TokenRequestError",
    "TokenStore",
    "bearer_challenge",
    "check_authorization_response",
    "discover_resource",
    "discover_server",
    "parse_www_authenticate",
]
