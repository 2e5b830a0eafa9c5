"""A protected resource and its authorization server in one small app, for the OAuth client tests.

``World`` says how each part behaves (where metadata lives, what the redirect carries, which
tokens are valid) and records every request, so a test can assert what the client asked for,
in which order, and that nothing reached a party it must not reach. ``serve_world`` runs it on
uvicorn at 127.0.0.1 (an ephemeral port).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from mcpbind.runtime.http import serving
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send


@dataclass
class World:
    """The behaviour of the resource (``/mcp``) and of the authorization server."""

    base: str = ""
    #: The authorization server's issuer path ("" = at the origin).
    issuer_path: str = ""
    #: Where the PRM is served: "path" (well-known + /mcp), "root", "custom" (only via the header).
    prm_at: str = "path"
    #: Whether the 401 names the PRM URL (resource_metadata).
    prm_in_header: bool = True
    #: The PRM URL the 401 names instead of this server's own (e.g. on another origin).
    prm_url: str | None = None
    #: Which AS metadata URL answers: "oauth", "openid", "openid-append", or "none".
    metadata_at: str = "oauth"
    metadata_issuer: str | None = None
    #: Fields that replace or extend the authorization server metadata (endpoints elsewhere).
    metadata_extra: dict[str, Any] = field(default_factory=dict)
    prm_resource: str | None = None
    pkce_methods: list[str] | None = field(default_factory=lambda: ["S256"])
    iss_supported: bool = False
    #: The redirect's iss: "correct", "wrong" or "omit".
    iss_in_redirect: str = "omit"
    wrong_state: bool = False
    scopes_supported: list[str] | None = None
    challenge_scope: str | None = None
    #: Scopes /mcp needs beyond a valid token (403 insufficient_scope otherwise).
    needed_scopes: set[str] = field(default_factory=set)
    #: Scopes the authorization server never grants, even when asked.
    withheld: set[str] = field(default_factory=set)
    expires_in: int = 3600
    malformed_challenge: bool = False
    client_secret: str = "s3cret-client-secret-value"
    requests: list[str] = field(default_factory=list)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    authorize_requests: list[dict[str, str]] = field(default_factory=list)
    tokens: dict[str, set[str]] = field(default_factory=dict)
    issued: list[str] = field(default_factory=list)
    codes: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: Dynamically registered clients: client_id -> the issuer that registered it.
    registered: dict[str, str] = field(default_factory=dict)
    #: A real MCP server (Streamable HTTP or legacy SSE) behind the token check, if given.
    mcp: Any = None

    @property
    def issuer(self) -> str:
        return self.base + self.issuer_path

    @property
    def server_url(self) -> str:
        return f"{self.base}/mcp"

    def prm_path(self) -> str:
        return {
            "path": "/.well-known/oauth-protected-resource/mcp",
            "root": "/.well-known/oauth-protected-resource",
            "custom": "/meta/resource.json",
        }[self.prm_at]

    def metadata_path(self) -> str | None:
        tail = self.issuer_path
        return {
            "oauth": f"/.well-known/oauth-authorization-server{tail}",
            "openid": f"/.well-known/openid-configuration{tail}",
            "openid-append": f"{tail}/.well-known/openid-configuration",
            "none": None,
        }[self.metadata_at]

    def mint(self, scopes: set[str]) -> str:
        token = "at-" + secrets.token_urlsafe(16)
        self.tokens[token] = scopes
        self.issued.append(token)
        return token


def build_app(world: World) -> Starlette:
    async def resource(request: Request) -> Response:
        world.requests.append(f"{request.method} {request.url.path}")
        header = request.headers.get("authorization", "")
        scopes = world.tokens.get(header.removeprefix("Bearer "))
        prm_url = world.prm_url or f"{world.base}{world.prm_path()}"
        prm = f'resource_metadata="{prm_url}"' if world.prm_in_header else ""
        if scopes is None:
            params = [p for p in ('error="invalid_token"', prm) if p]
            if world.challenge_scope:
                params.append(f'scope="{world.challenge_scope}"')
            challenge = (
                'Bearer realm="x", scope="unterminated'
                if world.malformed_challenge
                else ("Bearer " + ", ".join(params))
            )
            return JSONResponse({"error": "unauthorized"}, 401, {"WWW-Authenticate": challenge})
        if not world.needed_scopes <= scopes:
            need = " ".join(sorted(world.needed_scopes))
            challenge = f'Bearer error="insufficient_scope", scope="{need}", {prm}'
            return JSONResponse({"error": "forbidden"}, 403, {"WWW-Authenticate": challenge})
        return JSONResponse({"ok": True})

    async def record(request: Request) -> None:
        world.requests.append(f"{request.method} {request.url.path}")

    async def prm(request: Request) -> Response:
        await record(request)
        body: dict[str, Any] = {
            "resource": world.prm_resource or world.server_url,
            "authorization_servers": [world.issuer],
        }
        if world.scopes_supported is not None:
            body["scopes_supported"] = world.scopes_supported
        return JSONResponse(body)

    async def metadata(request: Request) -> Response:
        await record(request)
        if request.url.path != world.metadata_path():
            return JSONResponse({"error": "not_found"}, 404)
        body: dict[str, Any] = {
            "issuer": world.metadata_issuer or world.issuer,
            "authorization_endpoint": f"{world.base}/authorize",
            "token_endpoint": f"{world.base}/token",
            "registration_endpoint": f"{world.base}/register",
            "response_types_supported": ["code"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            "authorization_response_iss_parameter_supported": world.iss_supported,
        }
        if world.pkce_methods is not None:
            body["code_challenge_methods_supported"] = world.pkce_methods
        return JSONResponse({**body, **world.metadata_extra})

    async def register(request: Request) -> Response:
        await record(request)
        sent = await request.json()
        client_id = f"client-{len(world.registered) + 1}"
        world.registered[client_id] = world.issuer
        return JSONResponse(
            {**sent, "client_id": client_id, "client_secret": world.client_secret,
             "token_endpoint_auth_method": "client_secret_basic"},
            201,
        )  # fmt: skip

    async def authorize(request: Request) -> Response:
        await record(request)
        params = dict(request.query_params)
        world.authorize_requests.append(params)
        code = "code-" + secrets.token_urlsafe(8)
        world.codes[code] = (params.get("code_challenge", ""), params.get("scope", ""))
        back = {"code": code, "state": "forged" if world.wrong_state else params["state"]}
        if world.iss_in_redirect == "correct":
            back["iss"] = world.issuer
        elif world.iss_in_redirect == "wrong":
            back["iss"] = "https://evil.example"
        return RedirectResponse(f"{params['redirect_uri']}?{urlencode(back)}", 302)

    async def token(request: Request) -> Response:
        await record(request)
        form = {key: str(value) for key, value in (await request.form()).items()}
        world.token_requests.append(form)
        basic = request.headers.get("authorization", "").removeprefix("Basic ")
        client_id, _, secret = base64.b64decode(basic).decode().partition(":")
        if world.registered.get(client_id) != world.issuer or secret != world.client_secret:
            return JSONResponse({"error": "invalid_client"}, 401)
        form["client_id"] = client_id
        if form.get("grant_type") == "authorization_code":
            challenge, scope = world.codes.pop(form.get("code", ""), ("", ""))
            digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != challenge:
                return JSONResponse({"error": "invalid_grant"}, 400)
        elif form.get("grant_type") == "refresh_token":
            scope = form.get("scope", "")
        else:
            return JSONResponse({"error": "unsupported_grant_type"}, 400)
        granted = set(scope.split()) - world.withheld
        return JSONResponse(
            {"access_token": world.mint(granted), "token_type": "Bearer",
             "expires_in": world.expires_in, "refresh_token": "rt-" + secrets.token_urlsafe(12),
             "scope": scope},
            headers={"Cache-Control": "no-store"},
        )  # fmt: skip

    async def missing(request: Request) -> Response:
        await record(request)
        return JSONResponse({"error": "not_found"}, 404)

    class Guard:
        """The MCP server, reached only with a token the authorization server issued."""

        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            request = Request(scope, receive)
            if request.headers.get("authorization", "").removeprefix("Bearer ") in world.tokens:
                await world.mcp(scope, receive, send)
            else:
                await (await resource(request))(scope, receive, send)

    mcp_routes = [
        Route(path, Guard(), methods=["GET", "POST", "DELETE"])
        for path in ("/mcp", "/sse", "/messages/")
    ]
    routes = [
        *(mcp_routes if world.mcp is not None else []),
        Route("/mcp", resource, methods=["GET", "POST"]),
        Route(world.prm_path(), prm),
        Route("/register", register, methods=["POST"]),
        Route("/authorize", authorize),
        Route("/token", token, methods=["POST"]),
    ]
    for pattern in (
        "/.well-known/oauth-authorization-server{tail:path}",
        "/.well-known/openid-configuration{tail:path}",
        "/{head:path}/.well-known/openid-configuration",
    ):
        routes.append(Route(pattern, metadata))
    routes.append(Route("/{rest:path}", missing, methods=["GET", "POST"]))
    if world.mcp is None:
        return Starlette(routes=routes)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with world.mcp.run():
            yield

    return Starlette(routes=routes, lifespan=lifespan)


@asynccontextmanager
async def serve_world(world: World) -> AsyncIterator[World]:
    """Serve ``world`` on 127.0.0.1; ``world.base`` is its origin while the block runs."""
    async with serving(build_app(world)) as base:
        world.base = base
        yield world
