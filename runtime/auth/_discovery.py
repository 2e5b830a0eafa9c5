"""Finding the authorization server: protected-resource metadata, then its own metadata.

RFC 9728 (protected resource metadata, PRM): the URL from the challenge's ``resource_metadata``
first, then the well-known URL with the MCP endpoint's path, then the one at the root. RFC 8414
and OpenID Connect Discovery: for an issuer with a path, OAuth with path insertion, OpenID with
path insertion, OpenID with path appending; without a path, OAuth then OpenID. A metadata
document is used only if its ``issuer`` is exactly the issuer its URL was built from. A server
without PRM (the 2025-03-26 revision) is its own authorization server at its origin, with the
default endpoints ``/authorize``, ``/token`` and ``/register`` when it has no metadata either.
Where each of those requests may go is ``_guard.OriginGuard``'s to say.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from ._errors import DiscoveryError
from ._guard import MAX_REDIRECTS, OriginGuard
from ._json import json_object, string_list

logger = logging.getLogger(__name__)

PRM_SUFFIX = "/.well-known/oauth-protected-resource"
OAUTH_SUFFIX = "/.well-known/oauth-authorization-server"
OPENID_SUFFIX = "/.well-known/openid-configuration"
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
#: Metadata documents larger than this are not parsed.
MAX_DOCUMENT = 256 * 1024
#: The endpoints of authorization server metadata the client may be sent to.
SERVER_ENDPOINTS = ("authorization_endpoint", "token_endpoint", "registration_endpoint", "jwks_uri")


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server (RFC 8707): lowercase scheme and host, no fragment,
    no trailing slash on a bare origin."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise DiscoveryError(f"not an absolute http(s) URL: {url!r}")
    path = "" if parts.path == "/" else parts.path
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), "", "", ""))


def covers(resource: str, server_url: str) -> bool:
    """Whether the PRM ``resource`` names ``server_url`` itself or a path above it."""
    try:
        given, wanted = urlsplit(canonical_resource(resource)), urlsplit(server_url)
    except DiscoveryError:
        return False
    if (given.scheme, given.netloc) != (wanted.scheme, wanted.netloc):
        return False
    base = given.path.rstrip("/")
    return wanted.path.rstrip("/") == base or wanted.path.startswith(base + "/")


def resource_metadata_urls(server_url: str, from_challenge: str | None) -> list[str]:
    """The PRM URLs to try, in the spec's order."""
    parts = urlsplit(server_url)
    root = origin(server_url)
    urls = [from_challenge] if from_challenge else []
    path = parts.path.rstrip("/")
    if path:
        urls.append(f"{root}{PRM_SUFFIX}{path}")
    urls.append(f"{root}{PRM_SUFFIX}")
    return list(dict.fromkeys(urls))


def server_metadata_urls(issuer: str) -> list[str]:
    """The authorization server metadata URLs to try for ``issuer``, in the spec's order."""
    root = origin(issuer)
    path = urlsplit(issuer).path.rstrip("/")
    if not path:
        return [f"{root}{OAUTH_SUFFIX}", f"{root}{OPENID_SUFFIX}"]
    return [
        f"{root}{OAUTH_SUFFIX}{path}",
        f"{root}{OPENID_SUFFIX}{path}",
        f"{root}{path}{OPENID_SUFFIX}",
    ]


def checked_endpoint(value: Any, name: str) -> str:
    """An endpoint URL from metadata: absolute, and HTTPS unless on the loopback interface."""
    if not isinstance(value, str):
        raise DiscoveryError(f"authorization server metadata: {name} is not a URL")
    parts = urlsplit(value)
    secure = parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK)
    if secure and parts.netloc and not parts.fragment:
        return value
    raise DiscoveryError(f"authorization server metadata: {name} {value!r} is not an HTTPS URL")


def _strings(raw: dict[str, Any], name: str) -> list[str] | None:
    value = raw.get(name)
    if value is None:
        return None
    strings = string_list(value)
    if strings is None:
        raise DiscoveryError(f"metadata field {name} is not a list of strings")
    return strings


@dataclass(frozen=True)
class ResourceMetadata:
    """A protected resource's metadata (RFC 9728), as far as the client uses it."""

    resource: str
    authorization_servers: list[str]
    scopes_supported: list[str] | None
    url: str


@dataclass(frozen=True)
class ServerMetadata:
    """An authorization server's metadata (RFC 8414), or the 2025-03-26 defaults."""

    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: list[str] | None = None
    code_challenge_methods_supported: list[str] | None = None
    token_endpoint_auth_methods_supported: list[str] | None = None
    grant_types_supported: list[str] | None = None
    client_id_metadata_document_supported: bool = False
    authorization_response_iss_parameter_supported: bool = False
    #: False for the 2025-03-26 default endpoints (no document was found).
    from_document: bool = True
    raw: dict[str, Any] = field(default_factory=dict[str, Any])

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> ServerMetadata:
        issuer = raw.get("issuer")
        if not isinstance(issuer, str):
            raise DiscoveryError("authorization server metadata has no issuer")
        authorization = raw.get("authorization_endpoint")
        registration = raw.get("registration_endpoint")
        return cls(
            issuer=issuer,
            authorization_endpoint=(
                checked_endpoint(authorization, "authorization_endpoint")
                if authorization is not None
                else None
            ),
            token_endpoint=checked_endpoint(raw.get("token_endpoint"), "token_endpoint"),
            registration_endpoint=(
                checked_endpoint(registration, "registration_endpoint")
                if registration is not None
                else None
            ),
            scopes_supported=_strings(raw, "scopes_supported"),
            code_challenge_methods_supported=_strings(raw, "code_challenge_methods_supported"),
            token_endpoint_auth_methods_supported=_strings(
                raw, "token_endpoint_auth_methods_supported"
            ),
            grant_types_supported=_strings(raw, "grant_types_supported"),
            client_id_metadata_document_supported=(
                raw.get("client_id_metadata_document_supported") is True
            ),
            authorization_response_iss_parameter_supported=(
                raw.get("authorization_response_iss_parameter_supported") is True
            ),
            raw=raw,
        )

    @classmethod
    def defaults(cls, base: str) -> ServerMetadata:
        """The 2025-03-26 fallback: the default endpoints at the server's origin."""
        return cls(
            issuer=base,
            authorization_endpoint=f"{base}/authorize",
            token_endpoint=f"{base}/token",
            registration_endpoint=f"{base}/register",
            from_document=False,
        )


async def _get_json(http: httpx.AsyncClient, url: str, guard: OriginGuard) -> dict[str, Any] | None:
    """The JSON object at ``url``, or None if it is not there (any non-200, not JSON).

    Redirects are followed by hand, only within ``url``'s origin (a cross-origin one raises).
    """
    for _ in range(MAX_REDIRECTS + 1):
        try:
            response = await http.get(url, headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            logger.debug("metadata at %s unreachable: %s", url, type(exc).__name__)
            return None
        location = response.headers.get("location")
        if not response.is_redirect or location is None:
            break
        target = urljoin(url, location)
        guard.check_redirect(url, target)
        url = target
    else:
        logger.debug("metadata at %s: more than %d redirects", url, MAX_REDIRECTS)
        return None
    if response.status_code != 200 or len(response.content) > MAX_DOCUMENT:
        logger.debug("no metadata at %s (HTTP %d)", url, response.status_code)
        return None
    try:
        data = response.json()
    except ValueError:
        logger.debug("metadata at %s is not JSON", url)
        return None
    return json_object(data)


async def discover_resource(
    http: httpx.AsyncClient,
    server_url: str,
    from_challenge: str | None,
    guard: OriginGuard | None = None,
) -> ResourceMetadata | None:
    """The server's PRM, checked to name this server; None if it publishes none.

    A challenge's metadata URL off the server's origin is refused before any request (unless
    ``guard`` allows that origin; the default guard allows none).
    """
    guard = guard or OriginGuard(server_url)
    for url in resource_metadata_urls(server_url, from_challenge):
        guard.check_resource_metadata(url)
        raw = await _get_json(http, url, guard)
        if raw is None:
            continue
        resource = raw.get("resource")
        servers = _strings(raw, "authorization_servers")
        if not isinstance(resource, str) or not servers:
            raise DiscoveryError(
                f"protected resource metadata at {url} lacks resource or authorization_servers"
            )
        if not covers(resource, server_url):
            raise DiscoveryError(
                f"protected resource metadata at {url} is for {resource!r}, not {server_url!r}: "
                "refusing to authorize for another resource"
            )
        for server in servers:
            checked_endpoint(server, "authorization_servers entry")
        return ResourceMetadata(resource, servers, _strings(raw, "scopes_supported"), url)
    return None


async def discover_server(
    http: httpx.AsyncClient, issuer: str, guard: OriginGuard | None = None
) -> ServerMetadata | None:
    """The metadata of the authorization server ``issuer``; None if none is published.

    A document whose ``issuer`` differs from ``issuer`` is never used (RFC 8414 3.3); if only
    such documents exist, that is an error, not an absence. The issuer, and every endpoint the
    document names, must pass ``guard``'s address check (the default guard measures them
    against the issuer's own address).
    """
    guard = guard or OriginGuard(issuer)
    await guard.check_address(issuer, "authorization server")
    refused: list[str] = []
    for url in server_metadata_urls(issuer):
        raw = await _get_json(http, url, guard)
        if raw is None:
            continue
        if raw.get("issuer") != issuer:
            logger.warning("refused metadata at %s: issuer is not %s", url, issuer)
            refused.append(url)
            continue
        metadata = ServerMetadata.parse(raw)
        for name in SERVER_ENDPOINTS:
            endpoint = raw.get(name)
            if isinstance(endpoint, str):
                await guard.check_address(endpoint, f"{name} of {issuer}")
        return metadata
    if refused:
        raise DiscoveryError(
            f"authorization server metadata at {', '.join(refused)} names another issuer "
            f"than {issuer!r}: refused"
        )
    return None
