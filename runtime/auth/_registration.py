"""Obtaining a client identity at an authorization server, in the spec's order of preference.

1. pre-registered credentials (bound to one authorization server: used with another, refused);
2. a Client ID Metadata Document URL as ``client_id``, when the server advertises
   ``client_id_metadata_document_supported``;
3. Dynamic Client Registration (RFC 7591) at its ``registration_endpoint``; the result is
   stored under the issuer and never presented to another authorization server.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from ._discovery import LOOPBACK, ServerMetadata
from ._errors import RegistrationError
from ._json import json_object
from ._store import TokenStore
from ._token_endpoint import ClientIdentity

logger = logging.getLogger(__name__)


@dataclass
class ClientMetadata:
    """What the client says about itself when registering (RFC 7591 section 2)."""

    client_name: str = "mcpbind client"
    redirect_uris: list[str] = field(default_factory=list[str])
    grant_types: list[str] = field(default_factory=lambda: ["authorization_code", "refresh_token"])
    response_types: list[str] = field(default_factory=lambda: ["code"])
    token_endpoint_auth_method: str | None = None
    application_type: str | None = None
    extra: dict[str, Any] = field(default_factory=dict[str, Any])

    def wants_refresh_tokens(self) -> bool:
        return "refresh_token" in self.grant_types

    def registration_body(self, server: ServerMetadata) -> dict[str, Any]:
        """The DCR request: native for loopback redirect URIs, web otherwise."""
        native = all(urlsplit(uri).hostname in LOOPBACK for uri in self.redirect_uris)
        body: dict[str, Any] = {
            "client_name": self.client_name,
            "redirect_uris": self.redirect_uris,
            "grant_types": self.grant_types,
            "response_types": self.response_types,
            "token_endpoint_auth_method": self.token_endpoint_auth_method
            or _preferred_method(server),
            "application_type": self.application_type or ("native" if native else "web"),
        }
        body.update(self.extra)
        return body


def _preferred_method(server: ServerMetadata) -> str:
    """A public client asks for ``none`` unless the server only takes client secrets."""
    supported = server.token_endpoint_auth_methods_supported
    if not supported or "none" in supported:
        return "none"
    for method in ("client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return supported[0]


def check_metadata_url(url: str) -> str:
    """A Client ID Metadata Document URL must be HTTPS with a path."""
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.path in ("", "/"):
        raise RegistrationError(f"client metadata URL {url!r} must be an https URL with a path")
    return url


def client_key(issuer: str) -> str:
    return f"client {issuer}"


async def register(
    http: httpx.AsyncClient, server: ServerMetadata, metadata: ClientMetadata
) -> ClientIdentity:
    """Dynamic Client Registration (RFC 7591) at ``server``."""
    if server.registration_endpoint is None:
        raise RegistrationError(
            f"no client identity for {server.issuer}: it supports neither client ID metadata "
            "documents (or none is configured) nor dynamic registration, and no pre-registered "
            "client was given"
        )
    try:
        response = await http.post(
            server.registration_endpoint, json=metadata.registration_body(server)
        )
    except httpx.HTTPError as exc:
        raise RegistrationError(f"client registration failed: {type(exc).__name__}") from None
    try:
        data = json_object(response.json())
    except ValueError:
        data = None
    if response.status_code not in (200, 201) or data is None:
        error = data.get("error") if data is not None else None
        raise RegistrationError(
            f"client registration at {server.registration_endpoint} refused "
            f"(HTTP {response.status_code}{', ' + error if isinstance(error, str) else ''})"
        )
    client_id = data.get("client_id")
    if not isinstance(client_id, str) or not client_id:
        raise RegistrationError("client registration answered without a client_id")
    secret = data.get("client_secret")
    method = data.get("token_endpoint_auth_method")
    logger.info("registered a client with %s", server.issuer)
    return ClientIdentity(
        client_id=client_id,
        client_secret=secret if isinstance(secret, str) else None,
        token_endpoint_auth_method=method if isinstance(method, str) else None,
        issuer=server.issuer,
    )


async def identity_for(
    http: httpx.AsyncClient,
    store: TokenStore,
    server: ServerMetadata,
    *,
    preregistered: ClientIdentity | None,
    metadata_url: str | None,
    metadata: ClientMetadata,
) -> ClientIdentity:
    """The client's identity at ``server``, registering if needed (see the module docstring)."""
    if preregistered is not None:
        if preregistered.issuer is not None and preregistered.issuer != server.issuer:
            raise RegistrationError(
                f"the pre-registered client belongs to {preregistered.issuer}, but the server "
                f"now names {server.issuer}: refusing to present it there"
            )
        return preregistered
    stored = await store.load(client_key(server.issuer))
    if stored is not None:
        identity = ClientIdentity.from_dict(stored)
        if identity.issuer == server.issuer:
            return identity
    if metadata_url is not None and server.client_id_metadata_document_supported:
        return ClientIdentity(client_id=metadata_url, token_endpoint_auth_method="none")
    identity = await register(http, server, metadata)
    await store.save(client_key(server.issuer), identity.to_dict())
    return identity
