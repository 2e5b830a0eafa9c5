"""The client's response cache (2026-07-28 ``ttlMs``/``cacheScope``, caching.md), in memory and
over Streamable HTTP on uvicorn. The server counts what it is asked, so each test sees whether
a call reached it or was answered from the cache."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcpbind.generated.v2026_07_28 import methods, types
from mcpbind.runtime import Client, McpError, RequestContext, Server
from mcpbind.runtime.app import App, Context
from mcpbind.runtime.http import StreamableHTTPServer, serving

pytestmark = pytest.mark.anyio

STATELESS = "2026-07-28"
TRANSPORTS = ["memory", "http"]


class Counted:
    """A low-level server whose list pages and reads say ``ttl_ms`` and ``scope``."""

    def __init__(self, ttl_ms: int = 60_000, scope: str = "public") -> None:
        self.ttl_ms = ttl_ms
        self.scope = scope
        self.asked: Counter[str] = Counter()
        self.gate: anyio.Event | None = None
        self.server = server = Server("counted")
        server.extra_capabilities["tools"] = {"listChanged": True}
        server.extra_capabilities["resources"] = {"subscribe": True, "listChanged": True}

        @server.handler(methods.TOOLS_LIST)
        async def tools(
            params: types.PaginatedRequestParams, context: RequestContext
        ) -> types.ListToolsResult:
            cursor = params.cursor if params is not None else None
            self.asked[f"tools/list {cursor}"] += 1
            schema = types.ToolInputSchema(type="object")
            if cursor is None:
                return types.ListToolsResult(
                    tools=[types.Tool(name="first", inputSchema=schema)],
                    nextCursor="p2",
                    ttlMs=self.ttl_ms,
                    cacheScope=self.scope,  # type: ignore[arg-type]
                )
            if cursor != "p2":
                raise McpError(-32602, "Invalid cursor")
            return types.ListToolsResult(
                tools=[types.Tool(name="second", inputSchema=schema)],
                ttlMs=self.ttl_ms,
                cacheScope=self.scope,  # type: ignore[arg-type]
            )

        @server.handler(methods.TOOLS_CALL)
        async def call(
            params: types.CallToolRequestParams, context: RequestContext
        ) -> types.CallToolResult:
            raise McpError(-32602, f"Unknown tool: {params.name}")

        @server.handler(methods.RESOURCES_READ)
        async def read(
            params: types.ReadResourceRequestParams, context: RequestContext
        ) -> types.ReadResourceResult:
            self.asked[params.uri] += 1
            if self.gate is not None:
                await self.gate.wait()
            text = f"{params.uri} #{self.asked[params.uri]}"
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=params.uri, text=text)],
                ttlMs=self.ttl_ms,
                cacheScope=self.scope,  # type: ignore[arg-type]
            )


@asynccontextmanager
async def client_of(
    server: Server, transport: str, revision: str = STATELESS, **options: Any
) -> AsyncIterator[Client[Any, Any, Any]]:
    if transport == "memory":
        async with Client(server, protocol_version=revision, **options) as client:
            yield client
        return
    async with (
        serving(StreamableHTTPServer(server.serve)) as base,
        Client(f"{base}/mcp", protocol_version=revision, **options) as client,
    ):
        yield client


async def text_of(client: Client[Any, Any, Any], uri: str) -> str:
    result = await client.read_resource(uri)
    text: str = result.contents[0].text
    return text


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_fresh_result_is_served_from_the_cache(transport: str) -> None:
    counted = Counted()
    async with client_of(counted.server, transport) as client:
        first = [tool.name for tool in await client.list_tools()]
        again = [tool.name for tool in await client.list_tools()]
        assert first == again == ["first", "second"]
        assert await text_of(client, "a://1") == await text_of(client, "a://1") == "a://1 #1"
        assert await text_of(client, "a://2") == "a://2 #1"  # another URI: its own entry
        assert len(client.cache) == 4  # two pages (each by its cursor), two reads
        client.cache.clear()
        assert len(client.cache) == 0
        assert await text_of(client, "a://1") == "a://1 #2"
    assert counted.asked == {"tools/list None": 1, "tools/list p2": 1, "a://1": 2, "a://2": 1}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_entry_expires_after_ttl_ms(transport: str) -> None:
    counted = Counted(ttl_ms=300)
    async with client_of(counted.server, transport) as client:
        assert await text_of(client, "a://1") == "a://1 #1"
        assert await text_of(client, "a://1") == "a://1 #1"
        await anyio.sleep(0.4)
        assert await text_of(client, "a://1") == "a://1 #2"
        assert await text_of(client, "a://1") == "a://1 #2"
    assert counted.asked["a://1"] == 2


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_ttl_ms_zero_is_never_cached(transport: str) -> None:
    counted = Counted(ttl_ms=0)
    async with client_of(counted.server, transport) as client:
        assert await text_of(client, "a://1") == "a://1 #1"
        assert await text_of(client, "a://1") == "a://1 #2"
        await client.list_tools()
        await client.list_tools()
        assert len(client.cache) == 0
    assert counted.asked["tools/list None"] == 2


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_cache_false_turns_it_off(transport: str) -> None:
    counted = Counted()
    async with client_of(counted.server, transport, cache=False) as client:
        assert await text_of(client, "a://1") == "a://1 #1"
        assert await text_of(client, "a://1") == "a://1 #2"
        assert len(client.cache) == 0


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_notifications_through_listen_invalidate(transport: str) -> None:
    counted = Counted()
    async with client_of(counted.server, transport) as client:
        await client.list_tools()
        await text_of(client, "a://1")
        await text_of(client, "a://2")
        async with client.listen(tools_list_changed=True, resource_subscriptions=["a://1"]) as sub:
            assert sub.acknowledged == {
                "toolsListChanged": True,
                "resourceSubscriptions": ["a://1"],
            }
            await counted.server.notify_resource_updated("a://1")
            await counted.server.notify_tools_changed()
            methods_seen = []
            async for notification in sub:
                methods_seen.append(notification.method)
                if len(methods_seen) == 2:
                    break
        assert await text_of(client, "a://1") == "a://1 #2"  # updated: fetched again
        assert await text_of(client, "a://2") == "a://2 #1"  # another URI: still cached
        await client.list_tools()
    assert counted.asked == {"tools/list None": 2, "tools/list p2": 2, "a://1": 2, "a://2": 1}


async def test_handshake_era_results_are_never_cached() -> None:
    """The handshake era has no caching hints: nothing is kept, even if a server adds them."""
    counted = Counted()
    async with client_of(counted.server, "memory", revision="2025-11-25") as client:
        assert client.revision == "2025-11-25"
        first = await client.read_resource("a://1")
        assert getattr(first, "ttlMs", None) == 60_000  # sent, as an unknown member
        assert await text_of(client, "a://1") == "a://1 #2"
        assert len(client.cache) == 0


@pytest.mark.parametrize("revision", ["2025-11-25", STATELESS])
async def test_an_app_says_what_is_cached(revision: str) -> None:
    app = App("hints", ttl_ms=60_000, cache_scope="private")
    reads: list[int] = []

    @app.resource("note://today")
    def today() -> str:
        reads.append(1)
        return f"read {len(reads)}"

    client = Client(app, protocol_version=revision)

    async with client:
        assert await text_of(client, "note://today") == "read 1"
        cached = revision == STATELESS
        assert await text_of(client, "note://today") == ("read 1" if cached else "read 2")
        if cached:
            assert client.cache.scope_of("resources/read", {"uri": "note://today"}) == "private"
        else:
            assert len(client.cache) == 0


async def test_both_scopes_are_kept_and_recorded() -> None:
    for scope in ("public", "private"):
        counted = Counted(scope=scope)
        async with client_of(counted.server, "memory") as client:
            await text_of(client, "a://1")
            await text_of(client, "a://1")
            assert client.cache.scope_of("resources/read", {"uri": "a://1"}) == scope
            assert client.cache.scope_of("resources/read", {"uri": "a://other"}) is None
        assert counted.asked["a://1"] == 1


async def test_a_notification_during_a_request_keeps_its_answer_out() -> None:
    """An answer requested before an invalidation may predate the change: not stored."""
    counted = Counted()
    counted.gate = anyio.Event()
    async with client_of(counted.server, "memory") as client:
        async with (
            client.listen(resource_subscriptions=["a://1"]) as sub,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(text_of, client, "a://1")
            with anyio.fail_after(5):
                while counted.asked["a://1"] == 0:
                    await anyio.sleep(0.01)
            await counted.server.notify_resource_updated("a://1")
            async for _ in sub:  # the notification is in before the answer
                break
            counted.gate.set()
        counted.gate = None
        assert await text_of(client, "a://1") == "a://1 #2"
        assert await text_of(client, "a://1") == "a://1 #2"


async def test_errors_that_show_a_list_is_old_drop_it() -> None:
    counted = Counted()
    async with client_of(counted.server, "memory") as client:
        await client.list_tools()
        with pytest.raises(McpError, match="Unknown tool"):
            await client.call_tool("gone")
        await client.list_tools()
        with pytest.raises(McpError, match="Invalid cursor"):
            await client.send_request(methods.TOOLS_LIST, {"cursor": "stale"})
        await client.list_tools()
    assert counted.asked["tools/list None"] == 3


async def test_a_multi_round_result_is_not_cached() -> None:
    """A result that took an input round depends on the answers given: never kept."""
    app = App("asks", ttl_ms=60_000)
    reads: list[int] = []

    @app.resource("who://me")
    async def me(ctx: Context) -> str:
        roots = await ctx.list_roots()
        reads.append(1)
        return roots[0].uri

    client = Client(app, protocol_version=STATELESS)

    @client.handler(methods.ROOTS_LIST)
    async def roots(params: Any, context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///home")])

    async with client:
        assert await text_of(client, "who://me") == "file:///home"
        assert await text_of(client, "who://me") == "file:///home"
        assert len(client.cache) == 0
    assert len(reads) == 2
