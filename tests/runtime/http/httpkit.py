"""Helpers for the HTTP transport tests: a small server on our runtime and raw HTTP helpers.

Every test serves a real uvicorn on 127.0.0.1 with an ephemeral port (``serving``).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import INVALID_PARAMS, McpError, RequestContext, Server
from mcpbind.runtime.http import HttpRequestContext

ACCEPT_BOTH = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
#: The same, as a raw ASGI scope's headers of a POST to 127.0.0.1:8000.
ASGI_POST_HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
]

INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


def build_server() -> Server:
    """Tools that exercise every routing path of the transport.

    ``echo``: plain answer; ``progress``: related notifications before the answer (with a
    stream drop in the middle if ``drop`` is set); ``ask_llm``: a nested request on the POST
    stream; ``broadcast``: an unrelated notification, which must use the GET stream;
    ``sleep``: a long handler, for disconnects and cancellation.
    """
    server = Server("http-test", "1.0", capabilities={"tools": {"listChanged": True}})

    @server.handler(methods.TOOLS_LIST)
    async def list_tools(
        params: types.PaginatedRequestParams, context: RequestContext
    ) -> types.ListToolsResult:
        schema = types.ToolInputSchema(type="object")
        return types.ListToolsResult(
            tools=[types.Tool(name=n, inputSchema=schema) for n in ("echo", "progress", "ask_llm")]
        )

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        args = params.arguments or {}
        if params.name == "echo":
            return text(str(args.get("text", "")))
        if params.name == "progress":
            steps = int(args.get("steps", 5))
            for step in range(1, steps + 1):
                await context.report_progress(step, steps)
                if args.get("drop") == step and isinstance(
                    context.transport_context, HttpRequestContext
                ):
                    await context.transport_context.close_sse_stream()
                await anyio.sleep(float(args.get("delay", 0.01)))
            return text(f"{steps} steps")
        if params.name == "ask_llm":
            reply = await context.peer.create_message(
                types.CreateMessageRequestParams(
                    messages=[
                        types.SamplingMessage(role="user", content=types.TextContent(text="hi"))
                    ],
                    maxTokens=10,
                )
            )
            return text(f"llm: {reply.content.text}")
        if params.name == "broadcast":
            await context.session.send_notification(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED, None)
            return text("sent")
        if params.name == "sleep":
            await anyio.sleep(float(args.get("seconds", 30)))
            return text("slept")
        raise McpError(INVALID_PARAMS, f"unknown tool {params.name!r}")

    return server


async def raw_initialize(http: httpx.AsyncClient, url: str) -> str:
    """Initialize a session by hand; returns its id (after ``notifications/initialized``)."""
    response = await http.post(url, json=INITIALIZE, headers=ACCEPT_BOTH)
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    headers = {**ACCEPT_BOTH, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    done = await http.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    assert done.status_code == 202, (done.status_code, done.text)
    return session_id


def session_headers(session_id: str) -> dict[str, str]:
    return {**ACCEPT_BOTH, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}


def sse_messages(body: str) -> list[Any]:
    """The JSON messages of an SSE body (priming events left out)."""
    out = []
    for block in body.split("\n\n"):
        data = [line[6:] for line in block.split("\n") if line.startswith("data: ")]
        if data and data[0].strip():
            out.append(json.loads("\n".join(data)))
    return out


def answers(response: httpx.Response) -> list[Any]:
    """The JSON-RPC messages of a POST's answer, whether it came as JSON or as SSE."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return sse_messages(response.text)
    body = response.json()
    return body if isinstance(body, list) else [body]


MODERN = "2026-07-28"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
#: A tool whose ``region`` is mirrored into ``Mcp-Param-Region`` (and ``count`` into
#: ``Mcp-Param-Count``) by 2026-07-28 clients.
REGION_TOOL = {
    "name": "where",
    "description": "Says where it ran",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "loud": {"type": "boolean", "x-mcp-header": "Loud"},
        },
        "required": ["region"],
    },
}


def done(value: str) -> dict[str, Any]:
    """A complete 2026-07-28 tool result (its handlers say ``resultType`` themselves)."""
    return {"content": [{"type": "text", "text": value}], "resultType": "complete"}


def build_dual_server(cancelled: list[str] | None = None) -> Server:
    """``build_server`` plus 2026-07-28 handlers on the same ``Server``: ``where`` (with
    ``x-mcp-header`` arguments), ``ask_name`` (an ``InputRequiredResult`` first), ``sleep``
    (noting its cancellation in ``cancelled``), and ``subscriptions/listen``."""
    from mcpbind.generated.v2026_07_28 import methods as modern

    server = build_server()
    plain = [{"name": n, "inputSchema": {"type": "object"}} for n in ("echo", "ask_name")]

    @server.handler(modern.TOOLS_LIST)
    async def list_tools(params: Any, context: RequestContext) -> Any:
        return {"tools": [*plain, REGION_TOOL], "resultType": "complete", "ttlMs": 0,
                "cacheScope": "public"}  # fmt: skip

    @server.handler(modern.TOOLS_CALL)
    async def call_tool(params: Any, context: RequestContext) -> Any:
        args = params.arguments or {}
        if params.name == "echo":
            return done(str(args.get("text", "")))
        if params.name == "where":
            said = f"{args.get('region')}/{args.get('count')}/{args.get('loud')}"
            return done(said)
        if params.name == "ask_name":
            responses = params.inputResponses or {}
            reply = responses.get("name")
            if reply is None:
                schema = {"type": "object", "properties": {"name": {"type": "string"}}}
                ask = {"method": "elicitation/create",
                       "params": {"message": "Name?", "requestedSchema": schema}}  # fmt: skip
                return {"resultType": "input_required", "inputRequests": {"name": ask}}
            name = (reply.content or {}).get("name")
            return done(f"hello {name}")
        if params.name == "sleep":
            try:
                await anyio.sleep(float(args.get("seconds", 30)))
            except anyio.get_cancelled_exc_class():
                if cancelled is not None:
                    cancelled.append("sleep")
                raise
            return done("slept")
        raise McpError(INVALID_PARAMS, f"unknown tool {params.name!r}")

    @server.handler(modern.SUBSCRIPTIONS_LISTEN)
    async def listen(params: Any, context: RequestContext) -> Any:
        ack = modern.NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED
        assert ack.params_type is not None
        acknowledged = {"notifications": {}, "_meta": {SUBSCRIPTION_ID: context.request_id}}
        await context.send_notification(ack, ack.params_type.model_validate(acknowledged))
        try:
            await anyio.sleep_forever()
        finally:
            if cancelled is not None:
                cancelled.append("listen")
        return {"resultType": "complete"}

    return server


def modern_call(request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments, "_meta": MODERN_META}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def modern_headers(
    method: str = "tools/call", name: str | None = None, **extra: str
) -> dict[str, str]:
    """The headers a 2026-07-28 client sends with a POST."""
    headers = {**ACCEPT_BOTH, "mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return {**headers, **extra}


async def raw_request(
    base: str, method: str, headers: list[tuple[bytes, bytes]], body: bytes = b""
) -> tuple[int, bytes]:
    """One HTTP/1.1 request written byte for byte (clients refuse to send malformed headers:
    surrounding whitespace, non-ASCII, control characters); returns (status, body)."""
    host, port = base.removeprefix("http://").split(":")
    lines = [f"{method} /mcp HTTP/1.1".encode(), f"host: {host}:{port}".encode(),
             b"connection: close", b"content-length: %d" % len(body)]  # fmt: skip
    lines += [name + b": " + value for name, value in headers]
    async with await anyio.connect_tcp(host, int(port)) as stream:
        await stream.send(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        received = b""
        try:
            while True:
                received += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            pass
    head, _, payload = received.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), payload
