"""Our client in the 2026-07-28 era over Streamable HTTP: against the official Python SDK 2.3.0
server (a real process on 127.0.0.1), and against small raw ASGI servers for the error paths.

Every POST is recorded through an httpx event hook, so the tests see the request metadata
headers the transport really sent.
"""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcpbind.generated import v2025_11_25, v2026_07_28
from mcpbind.runtime import Client, McpError, ProtocolVersionError, RequestContext, Server
from mcpbind.runtime.http import StreamableHTTPServer, serving, streamable_http_client

pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.timeout(60)]

types = v2026_07_28.types
methods = v2026_07_28.methods
SDK_HTTP_SERVER = str(Path(__file__).with_name("sdk_http_server.py"))
VERSION = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
Sent = list[tuple[str, httpx.Headers, Any]]


@contextmanager
def sdk_server(*args: str) -> Iterator[str]:
    """The SDK server as a process of its own; yields its MCP endpoint URL."""
    process = subprocess.Popen(
        [sys.executable, SDK_HTTP_SERVER, *args], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), f"the SDK server printed {url!r}"
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def recording(sent: Sent) -> httpx.AsyncClient:
    """An httpx client noting every request: method, headers, parsed JSON body."""

    async def note(request: httpx.Request) -> None:
        body = json.loads(request.content) if request.content else None
        sent.append((request.method, request.headers, body))

    return httpx.AsyncClient(event_hooks={"request": [note]}, timeout=10.0)


def client_of(url: str, sent: Sent, **options: Any) -> Client:
    transport = streamable_http_client(url, http_client=recording(sent))
    client = Client(transport, protocol_version=VERSION, **options)

    @client.handler(methods.ELICITATION_CREATE)
    async def elicit(params: Any, context: RequestContext) -> Any:
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    return client


def posted(sent: Sent) -> list[str]:
    return [body["method"] for verb, _, body in sent if verb == "POST"]


async def call(client: Client, name: str, **arguments: Any) -> str:
    params = types.CallToolRequestParams(name=name, arguments=arguments or None)
    result = await client.stub.call_tool(params)
    text: str = result.content[0].text
    return text


async def test_our_client_speaks_2026_with_the_sdk_server() -> None:
    sent: Sent = []
    with sdk_server() as url:
        async with client_of(url, sent) as client:
            assert client.revision == VERSION
            assert client.session.peer.era == "stateless"
            assert client.server_info.name == "sdk-http-peer"
            tools = await client.list_all(methods.TOOLS_LIST)
            assert [tool.name for tool in tools] == ["echo", "where", "ask_name", "touch"]
            assert await call(client, "where", region="eu-west 1 ü", text="hi") == (
                "hi in eu-west 1 ü"
            )
            # An input-required round: the SDK elicits, our handler answers, the call is retried.
            assert await call(client, "ask_name") == "hello Ada (state s1)"
            resource = await client.stub.read_resource(
                types.ReadResourceRequestParams(uri="memo://readme")
            )
            assert resource.contents[0].text == "hello from the SDK"
    assert posted(sent) == [
        "server/discover",
        "tools/list",
        "tools/call",
        "tools/call",
        "tools/call",
        "resources/read",
    ]
    assert {verb for verb, _, _ in sent} == {"POST"}, "no GET stream, no DELETE in this era"
    for _, headers, body in sent:
        assert headers["mcp-protocol-version"] == body["params"]["_meta"][META_VERSION] == VERSION
        assert headers["mcp-method"] == body["method"]
        assert "mcp-session-id" not in headers
        name = body["params"].get("name") or body["params"].get("uri")
        assert headers.get("mcp-name") == (
            name if body["method"] in ("tools/call", "resources/read") else None
        )
    where = sent[2][1]
    assert where["mcp-param-region"] == "=?base64?ZXUtd2VzdCAxIMO8?="
    assert sent[3][2]["params"].get("requestState") is None
    retry = sent[4][2]["params"]
    assert retry["requestState"], "the SDK's (sealed) requestState is echoed back"
    assert retry["inputResponses"]["name"]["content"] == {"name": "Ada"}
    assert "mcp-param-region" not in sent[3][1]


async def test_a_header_mismatch_refreshes_tools_list_and_retries_once() -> None:
    with sdk_server() as url:
        # The SDK does check Mcp-Param-Region against the body: a wrong one is -32020.
        async with httpx.AsyncClient() as raw:
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "name": "where",
                    "arguments": {"region": "a", "text": "b"},
                    "_meta": {
                        META_VERSION: VERSION,
                        "io.modelcontextprotocol/clientCapabilities": {},
                    },
                },
            }
            headers = {
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": VERSION,
                "mcp-method": "tools/call",
                "mcp-name": "where",
                "mcp-param-region": "elsewhere",
            }
            refused = await raw.post(url, json=body, headers=headers)
            assert refused.status_code == 400
            assert refused.json()["error"]["code"] == -32020
        sent: Sent = []
        async with client_of(url, sent) as client:
            # Never listed: the call goes without Mcp-Param-Region, the SDK refuses it, the
            # client lists the tools, learns the annotation and calls again.
            assert await call(client, "where", region="us-west1", text="hi") == "hi in us-west1"
    assert posted(sent) == ["server/discover", "tools/call", "tools/list", "tools/call"]
    assert "mcp-param-region" not in sent[1][1]
    assert sent[3][1]["mcp-param-region"] == "us-west1"


async def test_listen_over_http_with_the_sdk_server() -> None:
    sent: Sent = []
    with sdk_server() as url:
        async with client_of(url, sent) as client:
            async with (
                client.listen(tools_list_changed=True) as tools_changes,
                client.listen(resource_subscriptions=["memo://readme"]) as updates,
            ):
                assert tools_changes.acknowledged == {"toolsListChanged": True}
                assert updates.acknowledged == {"resourceSubscriptions": ["memo://readme"]}
                assert tools_changes.refused == updates.refused == []
                assert await call(client, "touch", uri="memo://readme") == "touched"
                async for first in tools_changes:
                    assert first.method == "notifications/tools/list_changed"
                    break
                async for second in updates:
                    assert second.method == "notifications/resources/updated"
                    assert second.params.uri == "memo://readme"
                    break
            # Both streams were closed by leaving; the client goes on.
            assert await call(client, "echo", text="after") == "after"
    listens = [body for verb, _, body in sent if body and body["method"] == "subscriptions/listen"]
    assert [body["params"]["notifications"] for body in listens] == [
        {"toolsListChanged": True},
        {"resourceSubscriptions": ["memo://readme"]},
    ]
    assert "notifications/cancelled" not in posted(sent), "HTTP cancels by closing the stream"


async def test_a_pinned_revision_the_server_lacks_is_refused() -> None:
    sent: Sent = []
    with (
        sdk_server("--legacy-only") as url,
        pytest.raises(ProtocolVersionError, match="not a stateless-era server"),
    ):
        async with client_of(url, sent):
            raise AssertionError("connected")
    assert posted(sent) == ["server/discover"], "no silent fallback to initialize"


async def test_with_fallback_a_handshake_only_sdk_server_is_served_at_2025_11_25() -> None:
    sent: Sent = []
    with sdk_server("--legacy-only") as url:
        async with client_of(url, sent, fallback=True) as client:
            assert client.revision == "2025-11-25"
            assert client.session.peer.era == "handshake"
            result = await client.stub.call_tool(
                v2025_11_25.types.CallToolRequestParams(name="echo", arguments={"text": "old"})
            )
            assert result.content[0].text == "old"
    assert posted(sent)[:3] == ["server/discover", "initialize", "notifications/initialized"]


@pytest.mark.parametrize("status", [401, 500])
async def test_a_probe_refused_with_another_status_is_no_reason_to_fall_back(status: int) -> None:
    """Only 400, 404 and 405 without a modern error body mean "legacy server"."""
    sent: Sent = []

    async def answer(message: dict[str, Any]) -> Reply:
        return status, "text/plain", b"no"

    async with raw_server(answer) as server:
        with pytest.raises(McpError) as refused:
            async with client_of(server.url, sent, fallback=True):
                raise AssertionError("connected")
    assert refused.value.code == -32000 and refused.value.data == {"httpStatus": status}
    assert posted(sent) == ["server/discover"]


async def test_an_unreachable_server_is_a_transport_error_not_a_version_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(McpError) as failed:
        async with client_of(f"http://127.0.0.1:{port}/mcp", [], fallback=True):
            raise AssertionError("connected")
    assert failed.value.code == -32000 and failed.value.data == {"httpStatus": None}


async def test_with_fallback_our_handshake_only_server_is_served_at_2025_11_25(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("handshake-only", revisions=["2025-11-25"])

    @server.handler(v2025_11_25.methods.TOOLS_CALL)
    async def echo(params: Any, context: RequestContext) -> Any:
        text = str((params.arguments or {}).get("text"))
        return v2025_11_25.types.CallToolResult(content=[v2025_11_25.types.TextContent(text=text)])

    sent: Sent = []
    async with serving(StreamableHTTPServer(server.serve)) as base:
        with caplog.at_level(logging.INFO, "mcpbind.runtime"):
            async with client_of(f"{base}/mcp", sent, fallback=True) as client:
                assert client.revision == "2025-11-25"
                assert "fell back to the handshake, revision 2025-11-25" in caplog.text
                result = await client.stub.call_tool(
                    v2025_11_25.types.CallToolRequestParams(name="echo", arguments={"text": "x"})
                )
                assert result.content[0].text == "x"
        with pytest.raises(ProtocolVersionError):
            async with client_of(f"{base}/mcp", []):
                raise AssertionError("connected")


# -- raw servers for the error paths ---------------------------------------------------------

Reply = tuple[int, str, bytes]
Answer = Callable[[dict[str, Any]], Awaitable[Reply | None]]

DISCOVERED = {
    "resultType": "complete",
    "supportedVersions": [VERSION],
    "capabilities": {"tools": {}},
    "ttlMs": 0,
    "cacheScope": "private",
}


def rpc_error(code: int, message: str, data: Any = None, request_id: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()


def result(request_id: Any, value: dict[str, Any]) -> Reply:
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": value}).encode()
    return 200, "application/json", body


@dataclass
class RawServer:
    url: str
    disconnected: anyio.Event


@asynccontextmanager
async def raw_server(answer: Answer) -> AsyncIterator[RawServer]:
    """A bare ASGI server answering each POST with ``answer`` (``server/discover`` too, unless
    it returns None for it: then the usual result); None for another request holds an SSE
    stream open until the client disconnects, which sets ``disconnected``."""
    disconnected = anyio.Event()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        chunks = []
        while True:
            event = await receive()
            chunks.append(event.get("body", b""))
            if not event.get("more_body"):
                break
        message = json.loads(b"".join(chunks))
        reply = await answer(message)
        if reply is None and message.get("method") == "server/discover":
            reply = result(message["id"], DISCOVERED)
        if reply is None:
            headers = [(b"content-type", b"text/event-stream")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
            while (await receive())["type"] != "http.disconnect":
                pass
            disconnected.set()
            return
        status, content_type, body = reply
        headers = [(b"content-type", content_type.encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async with serving(app) as base:
        yield RawServer(f"{base}/mcp", disconnected)


async def test_a_json_rpc_error_body_is_surfaced_with_its_own_code_message_and_data() -> None:
    async def answer(message: dict[str, Any]) -> Reply | None:
        name = message["params"].get("name")
        if name == "custom":
            return 400, "application/json", rpc_error(-32042, "custom refusal", {"why": "test"})
        if name == "unknown":
            return 404, "application/json", rpc_error(-32601, "Not found", None, message["id"])
        if name == "teapot":
            return 418, "text/plain", b"I'm a teapot"
        return None

    async with raw_server(answer) as server, client_of(server.url, []) as client:
        with pytest.raises(McpError) as custom:
            await call(client, "custom")
        assert (custom.value.code, custom.value.message, custom.value.data) == (
            -32042,
            "custom refusal",
            {"why": "test"},
        )
        with pytest.raises(McpError) as unknown:
            await call(client, "unknown")
        assert unknown.value.code == -32601
        with pytest.raises(McpError) as teapot:
            await call(client, "teapot")
        assert teapot.value.code == -32000 and "HTTP 418" in teapot.value.message


async def test_an_unsupported_version_is_retried_with_one_from_the_list() -> None:
    tries: list[str] = []

    async def answer(message: dict[str, Any]) -> Reply | None:
        if message["method"] != "tools/list":
            return None
        tries.append(message["params"]["_meta"][META_VERSION])
        if len(tries) == 1:
            data = {"supported": [VERSION], "requested": VERSION}
            return 400, "application/json", rpc_error(-32022, "Unsupported", data, message["id"])
        # No resultType: the spec says the client treats the result as complete.
        return result(message["id"], {"tools": [], "ttlMs": 0, "cacheScope": "private"})

    async with raw_server(answer) as server, client_of(server.url, []) as client:
        assert await client.list_all(methods.TOOLS_LIST) == []
    assert tries == [VERSION, VERSION]


@pytest.mark.parametrize("fallback", [False, True])
async def test_a_probe_refused_with_unknown_versions_is_a_version_error(fallback: bool) -> None:
    """-32022 is a modern server's answer: never a reason to fall back to ``initialize``."""
    sent: Sent = []

    async def answer(message: dict[str, Any]) -> Reply | None:
        data = {"supported": ["2099-01-01"], "requested": VERSION}
        return 400, "application/json", rpc_error(-32022, "Unsupported", data, message["id"])

    async with raw_server(answer) as server:
        with pytest.raises(ProtocolVersionError, match="none of which"):
            async with client_of(server.url, sent, fallback=fallback):
                raise AssertionError("connected")
    assert posted(sent) == ["server/discover"]


async def test_cancelling_a_stateless_request_closes_its_stream_without_a_notification() -> None:
    sent: Sent = []
    received = anyio.Event()

    async def answer(message: dict[str, Any]) -> Reply | None:
        if message.get("method") == "tools/call":
            received.set()
        return None

    async with raw_server(answer) as server, client_of(server.url, sent) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(call, client, "forever")
            # Cancelled once the server holds the request: the client records a POST before its
            # body is on the wire, and a POST cut before that reaches the server as a bare
            # disconnect, with no request to hold open.
            with anyio.fail_after(10):
                await received.wait()
            tg.cancel_scope.cancel()
        with anyio.fail_after(10):
            await server.disconnected.wait()
    assert posted(sent) == ["server/discover", "tools/call"]


async def test_a_modern_only_server_refusing_initialize_is_surfaced_not_taken_for_sse() -> None:
    """A handshake client meeting a modern-only server gets its refusal (which names the
    versions it serves), rather than a search for a legacy HTTP+SSE endpoint."""
    sent: Sent = []

    async def answer(message: dict[str, Any]) -> Reply:
        data = {"supported": [VERSION]}
        refusal = rpc_error(-32601, f"initialize unknown; this server speaks {VERSION}", data)
        return 404, "application/json", refusal

    async with raw_server(answer) as server:
        transport = streamable_http_client(server.url, http_client=recording(sent))
        with pytest.raises(McpError) as refused:
            async with Client(transport):
                raise AssertionError("connected")
    assert refused.value.code == -32601 and refused.value.data == {"supported": [VERSION]}
    assert [verb for verb, _, _ in sent] == ["POST"], "no GET looking for an HTTP+SSE endpoint"
