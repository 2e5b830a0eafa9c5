"""Outgoing middleware (``Endpoint.add_outgoing_middleware``): the order, what a middleware sees,
one that changes ``_meta`` (in both eras), one that raises (the caller's error, nothing sent),
a server's requests to the client during a tool call, and the seam's cost: a session of an
endpoint without outgoing middleware is untouched."""

from __future__ import annotations

from typing import Any

import pytest
from mcpbind.generated import v2025_11_25
from mcpbind.runtime import (
    CallNext,
    Client,
    IncomingCall,
    McpError,
    OutgoingRequest,
    RequestContext,
)
from mcpbind.runtime.app import App, Context

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

STATELESS = "2026-07-28"


def build(seen: list[Any]) -> App:
    """An app whose ``echo`` returns its text, ``ask`` samples the client; its incoming
    middleware notes each ``tools/call``'s ``_meta``."""
    app = App("outgoing")

    @app.tool()
    async def echo(text: str) -> str:
        """Return the text."""
        return text

    @app.tool()
    async def ask(ctx: Context) -> str:
        """Ask the client's model."""
        answer = await ctx.sample("capital of France?")
        return f"the model said: {answer.content.text}"

    @app.middleware
    async def keep_meta(call: IncomingCall, call_next: CallNext) -> Any:
        if call.method == "tools/call":
            seen.append((call.params or {}).get("_meta"))
        return await call_next()

    return app


@pytest.mark.parametrize("version", ["2025-11-25", STATELESS])
async def test_order_and_what_a_middleware_sees(version: str) -> None:
    journal: list[str] = []

    def named(name: str) -> Any:
        async def middleware(call: OutgoingRequest, call_next: CallNext) -> Any:
            journal.append(f"{name}> {call.method} {call.revision} {call.era}")
            result = await call_next()
            journal.append(f"<{name} {type(result).__name__}")
            return result

        return middleware

    client = Client(build([]).memory_transport(), protocol_version=version)
    client.add_outgoing_middleware(named("inner"))
    client.add_outgoing_middleware(named("outer"), outermost=True)
    async with client:
        client.add_outgoing_middleware(named("last"))  # joins the running session's chain
        assert (await client.call_tool("echo", {"text": "hi"})).content[0].text == "hi"
    era = "stateless" if version == STATELESS else "handshake"
    call = f"tools/call {version} {era}"
    assert journal[-6:] == [
        f"outer> {call}",
        f"inner> {call}",
        f"last> {call}",
        "<last CallToolResult",
        "<inner CallToolResult",
        "<outer CallToolResult",
    ]


@pytest.mark.parametrize("version", ["2025-11-25", STATELESS])
async def test_a_middleware_changes_meta(version: str) -> None:
    seen: list[Any] = []
    given = {"text": "hi", "note": "the caller's"}

    async def tag(call: OutgoingRequest, call_next: CallNext) -> Any:
        if call.method == "tools/call":
            params = dict(call.params or {})
            params["_meta"] = {**params.get("_meta", {}), "io.example/tag": "x"}
            call.params = params
        return await call_next()

    client = Client(build(seen).memory_transport(), protocol_version=version)
    client.add_outgoing_middleware(tag)
    async with client:
        await client.call_tool("echo", given)
    [meta] = seen
    assert meta["io.example/tag"] == "x"
    if version == STATELESS:
        # The era's own ``_meta`` members are added after the middleware, beside its own.
        assert meta["io.modelcontextprotocol/protocolVersion"] == STATELESS
    assert given == {"text": "hi", "note": "the caller's"}


async def test_a_raising_middleware_is_the_callers_error() -> None:
    seen: list[Any] = []

    async def refuse(call: OutgoingRequest, call_next: CallNext) -> Any:
        if call.method == "tools/call" and (call.params or {}).get("name") == "echo":
            arguments = (call.params or {}).get("arguments") or {}
            if arguments.get("text") == "mcp":
                raise McpError(-32001, "refused by the middleware")
            if arguments.get("text") == "bug":
                raise RuntimeError("the middleware broke")
        return await call_next()

    client = Client(build(seen).memory_transport())
    client.add_outgoing_middleware(refuse)
    async with client:
        with pytest.raises(McpError) as refused:
            await client.call_tool("echo", {"text": "mcp"})
        with pytest.raises(RuntimeError, match="the middleware broke"):
            await client.call_tool("echo", {"text": "bug"})
        assert (await client.call_tool("echo", {"text": "ok"})).content[0].text == "ok"
    assert (refused.value.code, refused.value.message) == (-32001, "refused by the middleware")
    assert seen == [None]  # only the last one was sent


async def test_a_servers_requests_to_the_client() -> None:
    sent: list[tuple[str, Any]] = []
    metas: list[Any] = []
    app = build([])

    async def tag(call: OutgoingRequest, call_next: CallNext) -> Any:
        sent.append((call.method, call.related_id))
        call.params = {**(call.params or {}), "_meta": {"io.example/from": "server"}}
        return await call_next()

    app.server.add_outgoing_middleware(tag)
    client = Client(app.memory_transport())

    @client.handler(v2025_11_25.methods.SAMPLING_CREATEMESSAGE)
    async def sample(params: Any, context: RequestContext) -> Any:
        metas.append(dump_meta(params))
        return v2025_11_25.types.CreateMessageResult(
            role="assistant", model="m", content=v2025_11_25.types.TextContent(text="Paris")
        )

    async with client:
        asked = await client.call_tool("ask", {})
    assert asked.content[0].text == "the model said: Paris"
    [(method, related_id)] = sent
    assert method == "sampling/createMessage" and related_id is not None
    assert metas == [{"io.example/from": "server"}]


def dump_meta(params: Any) -> Any:
    meta = params.meta
    return meta.model_dump(by_alias=True, exclude_unset=True) if meta is not None else None


async def test_no_seam_without_outgoing_middleware() -> None:
    """A session of an endpoint without outgoing middleware runs ``Session.send_request``
    itself; the first middleware puts the seam on the running sessions, both sides'."""
    app = build([])
    client = Client(app.memory_transport())
    assert "_outgoing" not in vars(client) and client.outgoing_middleware == ()
    async with client:
        session = client.session
        assert "send_request" not in vars(session)
        [served] = app.server.sessions
        assert "send_request" not in vars(served)
        await client.ping()

        async def passthrough(call: OutgoingRequest, call_next: CallNext) -> Any:
            return await call_next()

        client.add_outgoing_middleware(passthrough)
        app.server.add_outgoing_middleware(passthrough)
        assert "send_request" in vars(session) and "send_request" in vars(served)
        assert client.outgoing_middleware == [passthrough]
        assert (await client.call_tool("echo", {"text": "a"})).content[0].text == "a"
    with pytest.raises(TypeError):
        client.add_outgoing_middleware("not callable")  # type: ignore[arg-type]


@pytest.mark.parametrize("version", ["2025-11-25", STATELESS])
async def test_every_request_passes_once(version: str) -> None:
    """The lifecycle's own request (``initialize``, ``server/discover``), sent untyped, passes
    too, its result as JSON data; a stateless-era call that takes two rounds passes once."""
    seen: list[tuple[str, bool, str]] = []

    async def note(call: OutgoingRequest, call_next: CallNext) -> Any:
        result = await call_next()
        seen.append((call.method, call.raw, type(result).__name__))
        return result

    client = Client(build([]).memory_transport(), protocol_version=version)

    @client.handler(v2025_11_25.methods.SAMPLING_CREATEMESSAGE)
    async def sample(params: Any, context: RequestContext) -> Any:
        return v2025_11_25.types.CreateMessageResult(
            role="assistant", model="m", content=v2025_11_25.types.TextContent(text="Paris")
        )

    client.add_outgoing_middleware(note)
    async with client:
        asked = await client.call_tool("ask", {})
    assert asked.content[0].text == "the model said: Paris"
    opening = "server/discover" if version == STATELESS else "initialize"
    assert seen == [(opening, True, "dict"), ("tools/call", False, "CallToolResult")]
