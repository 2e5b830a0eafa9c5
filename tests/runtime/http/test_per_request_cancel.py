"""A per-request session stopped because its client left ends quietly.

A 2026-07-28 request answered by SSE is cancelled when its client closes the stream (as a
``subscriptions/listen`` stream is, each time a client stops listening): the endpoint's ASGI
call must then return normally, not raise ``CancelledError`` (which uvicorn logs as
"Exception in ASGI application" with a traceback), while the handler is cancelled.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from httpkit import MODERN_META, modern_headers
from mcpbind.generated.v2026_07_28 import methods, types
from mcpbind.runtime import RequestContext, Server
from mcpbind.runtime.http import StreamableHTTPServer, serving
from starlette.types import Receive, Scope, Send

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]


async def test_a_request_whose_client_leaves_ends_without_an_error() -> None:
    server = Server("quiet", "1.0", capabilities={"tools": {}})
    started, stopped = anyio.Event(), anyio.Event()

    @server.handler(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, context: RequestContext) -> Any:
        started.set()
        try:
            await anyio.sleep(60)
        finally:
            stopped.set()

    endpoint = StreamableHTTPServer(server.serve, json_response=False)
    outcomes: list[str] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await endpoint(scope, receive, send)
        except BaseException as exc:
            if scope["type"] == "http":
                outcomes.append(type(exc).__name__)
            raise
        if scope["type"] == "http":
            outcomes.append("returned")

    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "wait", "arguments": {}, "_meta": MODERN_META}}  # fmt: skip
    async with serving(app) as base, httpx.AsyncClient(timeout=10) as http:
        headers = modern_headers("tools/call", "wait")
        async with http.stream("POST", f"{base}/mcp", json=body, headers=headers) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            with anyio.fail_after(10):
                await started.wait()
        with anyio.fail_after(10):  # the client left: the handler is stopped...
            await stopped.wait()
            while not outcomes:
                await anyio.sleep(0.01)
    assert outcomes == ["returned"]  # ...and the request's ASGI call ended without an error
