"""OAuth 2.1 authorization for MCP over HTTP (the client side; ``server`` is the resource server).

Pass one of these ``httpx.Auth`` objects as ``auth=`` to ``streamable_http_client`` or
``sse_client``; on the server's first 401 it discovers the authorization server, gets a token
and retries::

    auth = OAuthClientAuth("https://mcp.example.com/mcp", client_metadata_url=CIMD_URL)
    async with Client(streamable_http_client(url, auth=auth)) as client: ...

authlib (the ``auth`` extra) does PKCE, request encoding, client authentication and JWT
signing; it is imported only when a flow runs, with an error naming the extra if it is missing.

DPoP (RFC 9449, SEP-1932): when the authorization server advertises it (or with ``dpop=True``)
the tokens are bound to a key of the flow's (``DPoPKey``), stored with them, and each request
carries a fresh proof.

A plug-in layer the core does not name: the transports ask a ``Protection``, handlers
read ``context.auth`` (``core.access_token.AccessToken``). May import: ``endpoints`` and below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpbind.runtime._exports import install

if TYPE_CHECKING:
    from ._challenge import (
        Challenge as Challenge,
        bearer_challenge as bearer_challenge,
        parse_www_authenticate as parse_www_authenticate,
    )
    from ._discovery import (
        ResourceMetadata as ResourceMetadata,
        ServerMetadata as ServerMetadata,
        discover_resource as discover_resource,
        discover_server as discover_server,
    )
    from ._dpop import DPoPKey as DPoPKey
    from ._errors import (
        AuthorizationError as AuthorizationError,
        AuthorizationResponseError as AuthorizationResponseError,
        ChallengeError as ChallengeError,
        DiscoveryError as DiscoveryError,
        MissingDependencyError as MissingDependencyError,
        RegistrationError as RegistrationError,
        TokenRequestError as TokenRequestError,
    )
    from ._flow import OAuthFlow as OAuthFlow
    from ._grants import (
        AssertionProvider as AssertionProvider,
        ClientCredentialsAuth as ClientCredentialsAuth,
        JwtBearerAuth as JwtBearerAuth,
        OAuthClientAuth as OAuthClientAuth,
        check_authorization_response as check_authorization_response,
    )
    from ._guard import (
        OriginGuard as OriginGuard,
        Resolver as Resolver,
    )
    from ._redirect import (
        FollowRedirectHandler as FollowRedirectHandler,
        LoopbackRedirectHandler as LoopbackRedirectHandler,
        RedirectHandler as RedirectHandler,
    )
    from ._registration import ClientMetadata as ClientMetadata
    from ._store import (
        FileTokenStore as FileTokenStore,
        MemoryTokenStore as MemoryTokenStore,
        TokenStore as TokenStore,
    )
    from ._token_endpoint import (
        ClientIdentity as ClientIdentity,
        Token as Token,
    )

install(globals())
