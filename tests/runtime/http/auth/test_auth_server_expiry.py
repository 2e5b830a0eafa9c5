"""An open stream ends when the access token it was opened with expires.

A GET event stream of a handshake-era session, and a stateless POST whose tool runs longer
than the token lives, on real uvicorn behind a ``ResourceServer`` (``_token_expiry.py``): at the
token's ``exp`` (or, with ``recheck_interval``, soon after the token is revoked) the stream
gets one last event, a JSON-RPC error saying why, and ends, while the session stays usable with
a fresh token. A JSON answer not started by then is a 401 ``invalid_token`` instead.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import httpx
import pytest
from auth_server_kit import Setup, protected, protected_server
from httpkit import ACCEPT_BOTH, INITIALIZE, MODERN_META, modern_headers, session_headers
from mcpbind.generated.v2026_07_28 import methods as modern, types as new
from mcpbind.runtime import RequestContext
from mcpbind.runtime.auth.server import ResourceServer
from mcpbind.runtime.http import StreamableHTTPServer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

EXPIRED = "Unauthorized: the access token expired; reconnect with a fresh one"


async def open_session(http: httpx.AsyncClient, setup: Setup, token: str) -> str:
    opened = await http.post(setup.url, json=INITIALIZE, headers=setup.bearer(token, **ACCEPT_BOTH))
    assert opened.status_code == 200
    sid = opened.headers["mcp-session-id"]
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    ready = await http.post(
        setup.url, json=done, headers=setup.bearer(token, **session_headers(sid))
    )
    assert ready.status_code == 202
    return sid


def data_lines(text: str) -> list[Any]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]


async def test_a_get_stream_ends_with_an_error_event_when_its_token_expires() -> None:
    async with protected() as setup, httpx.AsyncClient(timeout=20) as http:
        sid = await open_session(http, setup, setup.good_token())
        short = setup.good_token(lifetime=2)
        expires = int(time.time()) + 2
        headers = setup.bearer(short, **{**session_headers(sid), "accept": "text/event-stream"})
        async with http.stream("GET", setup.url, headers=headers) as stream:
            assert stream.status_code == 200
            text = ""
            with anyio.fail_after(10):
                async for chunk in stream.aiter_text():
                    text += chunk
            ended = time.time()
        assert expires - 1 <= ended <= expires + 3
        (last,) = data_lines(text)[-1:]
        assert last["error"]["message"] == EXPIRED
        assert "id" not in last or last["id"] is None
        # The session is still there for the same user with a fresh token.
        fresh = setup.bearer(setup.good_token(), **session_headers(sid))
        ping = await http.post(setup.url, json={"jsonrpc": "2.0", "id": 9, "method": "ping"},
                               headers=fresh)  # fmt: skip
        assert ping.status_code == 200


def slow_app(resource_server: ResourceServer) -> StreamableHTTPServer:
    server = protected_server()

    @server.handler(modern.TOOLS_CALL)
    async def call_tool(params: new.CallToolRequestParams, context: RequestContext) -> Any:
        await context.report_progress(1, 2)  # starts the event stream of the POST
        await anyio.sleep(30)
        return new.CallToolResult(content=[])

    return StreamableHTTPServer(server.serve, auth=resource_server)


async def test_a_long_post_stream_ends_when_its_token_expires() -> None:
    async with protected(asgi=slow_app) as setup, httpx.AsyncClient(timeout=20) as http:
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "whoami", "arguments": {},
                           "_meta": {**MODERN_META, "progressToken": "p"}}}  # fmt: skip
        headers = setup.bearer(
            setup.good_token(lifetime=2), **modern_headers("tools/call", "whoami")
        )
        began = time.monotonic()
        with anyio.fail_after(10):
            response = await http.post(setup.url, json=call, headers=headers)
        assert time.monotonic() - began < 5
        assert response.headers["content-type"].startswith("text/event-stream")
        messages = data_lines(response.text)
        assert messages[0]["method"] == "notifications/progress"
        assert messages[-1]["error"]["message"] == EXPIRED


REVOKED = "Unauthorized: the access token is no longer valid; reconnect with a fresh one"


async def test_a_get_stream_ends_soon_after_its_token_is_revoked() -> None:
    async with (
        protected(verifier="introspection", recheck_interval=0.3) as setup,
        httpx.AsyncClient(timeout=20) as http,
    ):
        token = setup.good_token()
        sid = await open_session(http, setup, token)
        headers = setup.bearer(token, **{**session_headers(sid), "accept": "text/event-stream"})
        async with http.stream("GET", setup.url, headers=headers) as stream:
            assert stream.status_code == 200
            opened = setup.authorization.introspections
            # Re-checked twice (every 0.3 s) while still valid: the stream stays open. Counted,
            # not timed, so a loaded machine's slower checks do not fail it.
            with anyio.fail_after(10):
                while setup.authorization.introspections - opened < 2:
                    await anyio.sleep(0.05)
            setup.authorization.revoked.add(token)
            revoked_at = time.monotonic()
            text = ""
            with anyio.fail_after(10):
                async for chunk in stream.aiter_text():
                    text += chunk
            assert time.monotonic() - revoked_at < 2.0
        assert data_lines(text)[-1]["error"]["message"] == REVOKED


async def test_a_json_answer_not_started_at_expiry_is_a_401() -> None:
    def json_app(resource_server: ResourceServer) -> StreamableHTTPServer:
        server = protected_server()

        @server.handler(modern.TOOLS_CALL)
        async def call_tool(params: new.CallToolRequestParams, context: RequestContext) -> Any:
            await anyio.sleep(30)
            return new.CallToolResult(content=[])

        return StreamableHTTPServer(server.serve, auth=resource_server, json_response=True)

    async with protected(asgi=json_app) as setup, httpx.AsyncClient(timeout=20) as http:
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "whoami", "arguments": {}, "_meta": MODERN_META}}  # fmt: skip
        short = setup.good_token(lifetime=2)
        headers = setup.bearer(short, **modern_headers("tools/call", "whoami"))
        with anyio.fail_after(10):
            response = await http.post(setup.url, json=call, headers=headers)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert response.json()["error"]["message"] == EXPIRED
