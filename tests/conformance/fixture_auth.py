"""The OAuth side of the conformance fixture client: which ``httpx.Auth`` each scenario gets.

``auth/client-credentials-*`` are machine clients (``ClientCredentialsAuth``);
``auth/wif-jwt-bearer`` presents the suite's workload identity token (``JwtBearerAuth``);
``auth/enterprise-managed-authorization`` trades the suite's ID token at its identity provider
for an identity assertion (RFC 8693) and that assertion for a token (``JwtBearerAuth``); every
other ``auth/*`` scenario is the authorization code flow, with the headless
``FollowRedirectHandler``, a Client ID Metadata Document URL, and the pre-registered client the
suite's context may give.
"""

from __future__ import annotations

from typing import Any

import httpx
from mcpbind.runtime.auth import (
    ClientCredentialsAuth,
    ClientIdentity,
    ClientMetadata,
    FollowRedirectHandler,
    JwtBearerAuth,
    OAuthClientAuth,
    OAuthFlow,
)

REDIRECT_URI = "http://localhost:3000/callback"
#: The URL client id the suite's CIMD scenarios expect.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"


def _required(context: dict[str, Any], *names: str) -> list[str]:
    missing = [name for name in names if not context.get(name)]
    if missing:
        raise SystemExit(f"MCP_CONFORMANCE_CONTEXT lacks {', '.join(missing)}")
    return [str(context[name]) for name in names]


def enterprise_auth(url: str, context: dict[str, Any]) -> JwtBearerAuth:
    client_id, secret, idp_client, id_token, idp_token_endpoint = _required(
        context, "client_id", "client_secret", "idp_client_id", "idp_id_token",
        "idp_token_endpoint",
    )  # fmt: skip

    async def identity_assertion(issuer: str, resource: str) -> str:
        async with httpx.AsyncClient(timeout=10.0) as http:
            response = await http.post(
                idp_token_endpoint,
                data={
                    "grant_type": TOKEN_EXCHANGE,
                    "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                    "subject_token": id_token,
                    "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                    "audience": issuer,
                    "resource": resource,
                    "client_id": idp_client,
                },
            )
        response.raise_for_status()
        assertion: str = response.json()["access_token"]
        return assertion

    return JwtBearerAuth(
        url, assertion=identity_assertion, client_id=client_id, client_secret=secret,
        token_endpoint_auth_method="client_secret_basic",
    )  # fmt: skip


def make_auth(scenario: str, url: str, context: dict[str, Any]) -> OAuthFlow | None:
    """The auth for ``scenario`` (None outside ``auth/*``)."""
    if not scenario.startswith("auth/"):
        return None
    if scenario == "auth/client-credentials-jwt":
        client_id, key = _required(context, "client_id", "private_key_pem")
        return ClientCredentialsAuth(
            url,
            client_id=client_id,
            private_key=key,
            signing_algorithm=str(context.get("signing_algorithm") or "ES256"),
        )
    if scenario == "auth/client-credentials-basic":
        client_id, secret = _required(context, "client_id", "client_secret")
        return ClientCredentialsAuth(
            url,
            client_id=client_id,
            client_secret=secret,
            token_endpoint_auth_method="client_secret_basic",
        )
    if scenario == "auth/enterprise-managed-authorization":
        return enterprise_auth(url, context)
    if scenario == "auth/wif-jwt-bearer":
        client_id, workload_token = _required(context, "client_id", "valid_jwt")

        async def workload_identity(issuer: str, resource: str) -> str:
            return workload_token

        return JwtBearerAuth(url, assertion=workload_identity, client_id=client_id)
    client = None
    if context.get("client_id"):
        client = ClientIdentity(
            client_id=str(context["client_id"]), client_secret=context.get("client_secret")
        )
    return OAuthClientAuth(
        url,
        redirect_handler=FollowRedirectHandler(REDIRECT_URI),
        client_metadata=ClientMetadata(client_name="mcpbind-conformance-client"),
        client_metadata_url=CLIENT_METADATA_URL,
        client=client,
    )
