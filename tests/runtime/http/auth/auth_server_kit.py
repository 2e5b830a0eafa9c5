"""The resource-server tests' set-up: the test authorization server and a protected MCP
server, each on its own real uvicorn on 127.0.0.1, and the requests the tests send.

The MCP server's ``whoami`` tool answers with what its handler sees as ``context.auth``, in
both eras (a 2025-11-25 session and 2026-07-28 stateless POSTs).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from auth_server_as import RS_CLIENT, LocalAuthorizationServer
from httpkit import MODERN_META, modern_headers
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.generated.v2026_07_28 import methods as modern
from mcpbind.runtime import INVALID_PARAMS, McpError, RequestContext, Server
from mcpbind.runtime.auth.server import (
    DPoPVerifier,
    IntrospectionVerifier,
    JWTVerifier,
    ResourceServer,
    TokenVerifier,
)
from mcpbind.runtime.http import LegacySSEServer, StreamableHTTPServer, combined_app, serving
from mcpbind.runtime.transports.http.uvicorn import tcp_listener


def identity(context: RequestContext) -> str:
    token = context.auth
    if token is None:
        return "anonymous"
    seen = {"subject": token.subject, "client_id": token.client_id,
            "scopes": sorted(token.scopes), "audience": list(token.audience)}  # fmt: skip
    return json.dumps(seen)


def protected_server() -> Server:
    """``whoami`` in both eras; ``tools/list`` for the handshake era."""
    server = Server("protected", "1.0", capabilities={"tools": {}})

    @server.handler(methods.TOOLS_LIST)
    async def list_tools(
        params: types.PaginatedRequestParams, context: RequestContext
    ) -> types.ListToolsResult:
        schema = types.ToolInputSchema(type="object")
        return types.ListToolsResult(tools=[types.Tool(name="whoami", inputSchema=schema)])

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        if params.name != "whoami":
            raise McpError(INVALID_PARAMS, f"unknown tool {params.name!r}")
        return types.CallToolResult(content=[types.TextContent(text=identity(context))])

    @server.handler(modern.TOOLS_CALL)
    async def call_tool_2026(params: Any, context: RequestContext) -> Any:
        if params.name != "whoami":
            raise McpError(INVALID_PARAMS, f"unknown tool {params.name!r}")
        content = [{"type": "text", "text": identity(context)}]
        return {"content": content, "resultType": "complete"}

    return server


@dataclass
class Setup:
    authorization: LocalAuthorizationServer
    resource_server: ResourceServer
    base: str

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def bearer(self, token: str, **headers: str) -> dict[str, str]:
        return {**headers, "authorization": f"Bearer {token}"}

    def good_token(self, scope: str = "mcp:tools", **options: Any) -> str:
        return self.authorization.mint(self.url, scope, **options)


@asynccontextmanager
async def protected(
    verifier: str = "jwt",
    required_scopes: Sequence[str] = ("mcp:tools",),
    legacy: bool = False,
    asgi: Callable[[ResourceServer], Any] | None = None,
    as_dpop: DPoPVerifier | None = None,
    authorization: LocalAuthorizationServer | None = None,
    **options: Any,
) -> AsyncIterator[Setup]:
    """The test AS and an MCP server protected by a ``ResourceServer`` trusting it, whose
    ``verifier`` is ``"jwt"`` (keys from the AS's JWKS) or ``"introspection"``. ``asgi`` makes
    the served app from the resource server, instead of the ``whoami`` server here.
    ``as_dpop`` makes the AS bind tokens to DPoP keys; ``authorization`` is the AS to serve
    (e.g. one granting more), given its ``dpop`` already."""
    if authorization is None:
        authorization = LocalAuthorizationServer(dpop=as_dpop)
    async with serving(authorization.app) as issuer:
        authorization.issuer = issuer
        # The resource URL (the tokens' audience) is known before the server it names starts:
        # its socket is bound now and served later, so no other process can take the port.
        sock = tcp_listener("127.0.0.1", 0)
        with sock:  # closed also if the app is not served
            base = f"http://127.0.0.1:{sock.getsockname()[1]}"
            chosen: TokenVerifier
            if verifier == "jwt":
                chosen = JWTVerifier(issuer, jwks_url=f"{issuer}/jwks", refetch_interval=0.0)
            else:
                chosen = IntrospectionVerifier(
                    f"{issuer}/introspect", client_id=RS_CLIENT[0], client_secret=RS_CLIENT[1],
                    issuer=issuer,
                )  # fmt: skip
            resource_server = ResourceServer(
                chosen,
                resource=f"{base}/mcp",
                authorization_servers=[issuer],
                required_scopes=required_scopes,
                **options,
            )
            server = protected_server()
            app: Any = StreamableHTTPServer(server.serve, auth=resource_server)
            if asgi is not None:
                app = asgi(resource_server)
            elif legacy:
                app = combined_app(app, LegacySSEServer(server.serve, auth=resource_server))
            async with serving(app, sock=sock) as served:
                assert served == base
                yield Setup(authorization, resource_server, base)


def sudo_needs_admin(method: str, params: Any) -> list[str]:
    """``operation_scopes`` for the tests: ``whoami`` with ``sudo`` needs ``mcp:admin``."""
    arguments = params.get("arguments") if isinstance(params, dict) else None
    return ["mcp:admin"] if method == "tools/call" and (arguments or {}).get("sudo") else []


def whoami_2025(request_id: int = 1) -> dict[str, Any]:
    params = {"name": "whoami", "arguments": {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def whoami_2026(request_id: int = 1) -> dict[str, Any]:
    params = {"name": "whoami", "arguments": {}, "_meta": MODERN_META}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def modern_whoami_headers(**extra: str) -> dict[str, str]:
    return modern_headers("tools/call", "whoami", **extra)
