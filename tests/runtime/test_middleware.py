"""Middleware (``Server.add_middleware``, ``App(middleware=...)``, ``@app.middleware``) on every
transport and in both eras: the order, a short-circuit with a result and with an error, a
failing middleware answered -32603 without ending the session, notifications, and the
identity of an HTTP request's token."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import (
    INTERNAL_ERROR,
    CallNext,
    Client,
    IncomingCall,
    McpError,
    Server,
    Session,
    StdioParameters,
)
from mcpbind.runtime.auth.server import AccessToken, ResourceServer
from mcpbind.runtime.http import LegacySSEServer, serving, sse_client, streamable_http_client
from middleware_app import BLOCKED, JOURNAL, build
from runtime_helpers import RawPeer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

APP_SCRIPT = str(Path(__file__).with_name("middleware_app.py"))
STATELESS = "2026-07-28"


async def exercise(client: Client) -> dict[str, Any]:
    """Call what the test app's middleware treats differently; what came back."""
    echoed = await client.call_tool("echo", {"text": "hi"})
    journal = (await client.call_tool("journal", {})).content[0].text
    cached = await client.call_tool("cached", {})
    errors: dict[str, McpError] = {}
    for name in ("blocked", "broken"):
        with pytest.raises(McpError) as caught:
            await client.call_tool(name, {})
        errors[name] = caught.value
    after = await client.call_tool("echo", {"text": "still here"})
    return {
        "echoed": echoed.content[0].text,
        "journal": journal.splitlines(),
        "cached": cached.content[0].text,
        "errors": errors,
        "after": after.content[0].text,
    }


def check(seen: dict[str, Any], era: str, revision: str) -> None:
    journal = seen["journal"]
    start = journal.index(f"outer> tools/call:echo request {era} {revision}")
    # First added is outermost; the handler runs inside both, and both see it end.
    assert journal[start : start + 5] == [
        f"outer> tools/call:echo request {era} {revision}",
        "inner> tools/call:echo",
        "handler echo hi",
        "<inner tools/call:echo",
        "<outer tools/call:echo",
    ]
    # The journal tool's own call is under way while it reads the journal.
    assert journal[-2:] == [
        f"outer> tools/call:journal request {era} {revision}",
        "inner> tools/call:journal",
    ]
    assert seen["echoed"] == "hi"
    assert seen["cached"] == "answered by middleware"
    blocked, broken = seen["errors"]["blocked"], seen["errors"]["broken"]
    assert (blocked.code, blocked.message) == (BLOCKED, "blocked by policy: tool 'blocked'")
    assert (broken.code, broken.message) == (INTERNAL_ERROR, "Internal error")
    assert "secret" not in str(broken.data)
    assert seen["after"] == "still here"


async def test_in_memory_order_short_circuit_and_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    JOURNAL.clear()
    app = build()
    with caplog.at_level(logging.ERROR, logger="mcpbind.runtime"):
        async with Client(app.memory_transport()) as client:
            seen = await exercise(client)
    check(seen, "handshake", "2025-11-25")
    # The failing middleware is logged with its exception, and the session lived on.
    failed = [r for r in caplog.records if "tools/call" in r.getMessage() and r.exc_info]
    assert failed and "secret detail" in str(failed[0].exc_info[1])  # type: ignore[index]
    # ``initialize`` passes through too, before any revision was negotiated.
    assert JOURNAL[0] == "outer> initialize request handshake None"


@pytest.mark.parametrize("version", ["2025-11-25", STATELESS])
async def test_over_stdio(version: str) -> None:
    params = StdioParameters(sys.executable, [APP_SCRIPT])
    async with Client(params, protocol_version=version) as client:
        seen = await exercise(client)
    check(seen, "stateless" if version == STATELESS else "handshake", version)


@pytest.mark.parametrize("version", ["2025-11-25", STATELESS])
async def test_over_streamable_http(version: str) -> None:
    JOURNAL.clear()
    app = build()
    async with serving(app.http_app()) as url:
        client = Client(streamable_http_client(f"{url}/mcp"), protocol_version=version)
        async with client:
            seen = await exercise(client)
    check(seen, "stateless" if version == STATELESS else "handshake", version)


async def test_over_legacy_sse() -> None:
    JOURNAL.clear()
    app = build()
    async with serving(LegacySSEServer(app.server.serve)) as url:
        client = Client(sse_client(f"{url}/sse"), protocol_version="2024-11-05")
        async with client:
            seen = await exercise(client)
    check(seen, "handshake", "2024-11-05")


async def test_notifications_and_ping_pass_through() -> None:
    seen: list[tuple[str, str, Any]] = []
    handled: list[str] = []
    server = Server("notes")

    async def watch(call: IncomingCall, call_next: CallNext) -> Any:
        seen.append((call.kind, call.method, call.request_id))
        if call.method == "notifications/roots/list_changed" and len(handled) == 1:
            return None  # the second one stops here: the handler never hears of it
        return await call_next()

    @server.notification_handler(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED)
    async def changed(params: Any, session: Session) -> None:
        handled.append("roots changed")

    server.add_middleware(watch)
    async with Client(server.memory_transport()) as client:
        await client.ping()
        for _ in range(2):
            await client.send_notification(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED, None)
        with anyio.fail_after(5):
            while len([s for s in seen if s[1] == "notifications/roots/list_changed"]) < 2:
                await anyio.sleep(0.01)
    assert ("request", "ping", 2) in seen
    assert ("notification", "notifications/initialized", None) in seen
    assert handled == ["roots changed"]


async def test_without_middleware_routing_is_the_class_own() -> None:
    server = Server("plain")
    # Nothing is decided per call: the session finds the class's own methods.
    assert "route_request" not in vars(server)
    assert "route_notification" not in vars(server)

    async def first(call: IncomingCall, call_next: CallNext) -> Any:
        return await call_next()

    async def outermost(call: IncomingCall, call_next: CallNext) -> Any:
        return await call_next()

    server.add_middleware(first)
    server.add_middleware(outermost, outermost=True)
    assert server.middleware == [outermost, first]
    assert "route_request" in vars(server)
    with pytest.raises(TypeError, match="a middleware is an async callable, not str"):
        server.add_middleware("nope")  # type: ignore[arg-type]


async def test_requests_refused_while_routing_never_reach_it() -> None:
    seen: list[str] = []
    server = Server("strict")

    @server.handler(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, context: Any) -> types.CallToolResult:
        return types.CallToolResult(content=[])

    async def watch(call: IncomingCall, call_next: CallNext) -> Any:
        seen.append(call.method)
        return await call_next()

    server.add_middleware(watch)
    async with server.memory_transport() as connection:
        peer = RawPeer(connection)
        await peer.request(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        unknown = await peer.request({"jsonrpc": "2.0", "id": 2, "method": "no/such"})
        invalid = await peer.request(
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"arguments": 5}}
        )
    assert unknown["error"]["code"] == -32601
    assert invalid["error"]["code"] == -32602
    assert seen == ["initialize"]


async def test_a_middleware_short_circuits_a_low_level_server() -> None:
    server = Server("low")
    ran: list[str] = []

    @server.handler(methods.TOOLS_LIST)
    async def tools(params: types.ListToolsRequestParams, context: Any) -> types.ListToolsResult:
        ran.append("handler")
        return types.ListToolsResult(tools=[])

    async def answer(call: IncomingCall, call_next: CallNext) -> Any:
        if call.method == "tools/list":
            assert call.context is not None and call.context.session is call.session
            return types.ListToolsResult(
                tools=[types.Tool(name="made-up", inputSchema={"type": "object"})]
            )
        return await call_next()

    server.add_middleware(answer)
    async with Client(server.memory_transport()) as client:
        listed = await client.stub.list_tools()
    assert [tool.name for tool in listed.tools] == ["made-up"]
    assert ran == []


async def test_a_client_middleware_sees_the_servers_requests() -> None:
    """A ``Client`` takes middleware too: the server's sampling request during a tool call
    passes through it, and it may answer in the handler's place (a method needs a handler to
    reach middleware at all: one without is refused while routing)."""
    server = Server("asks")

    @server.handler(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, context: Any) -> types.CallToolResult:
        sampled = await context.peer.create_message(
            types.CreateMessageRequestParams(messages=[], maxTokens=5)
        )
        return types.CallToolResult(content=[types.TextContent(text=sampled.content.text)])

    client = Client(server.memory_transport())
    seen: list[tuple[str, str]] = []

    @client.handler(methods.SAMPLING_CREATEMESSAGE)
    async def sample(params: Any, context: Any) -> types.CreateMessageResult:
        raise AssertionError("the middleware answers in its place")

    async def answer(call: IncomingCall, call_next: CallNext) -> Any:
        seen.append((call.kind, call.method))
        if call.method == "sampling/createMessage":
            return types.CreateMessageResult(
                role="assistant", model="mw", content=types.TextContent(text="from middleware")
            )
        return await call_next()

    client.add_middleware(answer)
    async with client:
        result = await client.call_tool("anything", {})
    assert result.content[0].text == "from middleware"
    assert seen == [("request", "sampling/createMessage")]


class Tokens:
    """A token verifier of two users: ``alice-token`` and ``bob-token``."""

    async def verify(self, token: str) -> AccessToken | None:
        user = token.removesuffix("-token")
        if user not in ("alice", "bob"):
            return None
        return AccessToken(
            subject=user,
            client_id="test",
            scopes=frozenset({"mcp"}),
            expires_at=None,
            audience=(RESOURCE,),
        )


RESOURCE = "https://mcp.example.com/mcp"


@pytest.mark.parametrize("version", ["2025-11-25", STATELESS])
async def test_the_identity_of_an_http_request(version: str) -> None:
    from mcpbind.runtime.app import App

    subjects: list[str | None] = []
    app = App("who")

    @app.middleware
    async def who(call: IncomingCall, call_next: CallNext) -> Any:
        if call.kind == "request":
            assert call.context is not None and call.context.auth == call.auth
        subjects.append(call.auth.subject if call.auth else None)
        return await call_next()

    @app.tool()
    async def echo(text: str) -> str:
        """Return the text."""
        return text

    auth = ResourceServer(Tokens(), resource=RESOURCE, authorization_servers=[RESOURCE])
    async with serving(app.http_app(auth=auth)) as url:
        for user in ("alice", "bob"):
            headers = {"authorization": f"Bearer {user}-token"}
            transport = streamable_http_client(f"{url}/mcp", headers=headers)
            async with Client(transport, protocol_version=version) as client:
                await client.call_tool("echo", {"text": user})
    assert "alice" in subjects and "bob" in subjects
    assert None not in subjects
