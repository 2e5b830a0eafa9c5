"""Run-time changes and lists: list_changed notifications when tools, prompts or resources are
added or removed (both eras), pagination of every list, capabilities from what is registered."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from app_helpers import STATELESS, wire
from mcpbind.generated import v2025_11_25, v2026_07_28
from mcpbind.runtime import Client, Session
from mcpbind.runtime.app import App

pytestmark = pytest.mark.anyio


def constant(value: str) -> Any:
    return lambda: value


def numbered_app(count: int, page_size: int | None) -> App:
    app = App("many", page_size=page_size)
    for i in range(count):
        app.add_tool(constant(f"{i}"), name=f"tool{i:02d}")
        app.add_prompt(constant(f"prompt {i}"), name=f"prompt{i:02d}")
        app.add_resource(constant(f"r{i}"), f"r://{i:02d}")
        app.add_resource(lambda x: x, f"t{i:02d}://{{x}}")
    return app


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-11-25", STATELESS])
async def test_every_list_is_paginated(revision: str) -> None:
    app = numbered_app(7, page_size=3)
    lists = {
        "tools/list": ("tools", "name"),
        "prompts/list": ("prompts", "name"),
        "resources/list": ("resources", "uri"),
        "resources/templates/list": ("resourceTemplates", "uriTemplate"),
    }
    async with wire(app, revision) as peer:
        for method, (key, member) in lists.items():
            names: list[str] = []
            pages = 0
            cursor = None
            while True:
                page = await peer.result(method, {"cursor": cursor} if cursor else {})
                pages += 1
                assert len(page[key]) <= 3
                names.extend(item[member] for item in page[key])
                cursor = page.get("nextCursor")
                if cursor is None:
                    break
            assert pages == 3, method
            assert len(names) == len(set(names)) == 7, method
        bad = await peer.request("tools/list", {"cursor": "not-ours"})
    assert bad["error"]["code"] == -32602


async def test_one_page_without_a_page_size() -> None:
    async with wire(numbered_app(30, page_size=None), "2025-11-25") as peer:
        page = await peer.result("tools/list")
    assert len(page["tools"]) == 30 and "nextCursor" not in page


async def test_our_client_follows_the_pages() -> None:
    app = numbered_app(5, page_size=2)
    async with Client(app.memory_transport(), protocol_version="2025-11-25") as client:
        tools = await client.list_all(v2025_11_25.methods.TOOLS_LIST)
    assert [tool.name for tool in tools] == [f"tool{i:02d}" for i in range(5)]


#: The change notifications are made where the change is (``app/_changes.py``): on trio too.
BACKENDS = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])


@BACKENDS
async def test_list_changed_when_tools_prompts_resources_change_at_run_time() -> None:
    app = App("changing")

    @app.tool()
    def first() -> str:
        return "1"

    @app.tool()
    def grow() -> str:
        """A sync tool (in a worker thread) that adds a tool."""
        app.add_tool(lambda: "grown", name="grown")
        return "grew"

    app.add_prompt(lambda: "p", name="p")
    app.add_resource(lambda: "r", "r://r")

    heard: list[str] = []
    client = Client(app.memory_transport(), protocol_version="2025-11-25")
    methods = v2025_11_25.methods
    for spec in (
        methods.NOTIFICATIONS_TOOLS_LIST_CHANGED,
        methods.NOTIFICATIONS_PROMPTS_LIST_CHANGED,
        methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    ):

        async def on_change(params: Any, session: Session, method: str = spec.method) -> None:
            heard.append(method)

        client.add_notification_handler(spec, on_change)

    types = v2025_11_25.types
    async with client:
        caps = client.server_capabilities
        assert caps["tools"] == {"listChanged": True}
        assert caps["prompts"] == {"listChanged": True}
        # Answered, so the server has read ``notifications/initialized`` before it: it tells
        # only initialized sessions (trio, which shuffles its tasks, would show the race).
        await client.ping()

        @app.tool()
        def second() -> str:
            return "2"

        await wait_for(heard, 1)
        app.remove_tool("first")
        await wait_for(heard, 2)
        await client.stub.call_tool(types.CallToolRequestParams(name="grow"))
        await wait_for(heard, 3)
        app.remove_prompt("p")
        await wait_for(heard, 4)
        app.remove_resource("r://r")
        await wait_for(heard, 5)
        app.disable(names="second")
        await wait_for(heard, 6)
        names = [tool.name for tool in (await client.stub.list_tools()).tools]
        app.enable(names="second")
        await wait_for(heard, 7)
    assert names == ["grow", "grown"]
    assert heard == [
        "notifications/tools/list_changed",
        "notifications/tools/list_changed",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/tools/list_changed",
        "notifications/tools/list_changed",
    ]


async def wait_for(heard: list[str], count: int) -> None:
    with anyio.fail_after(5):
        while len(heard) < count:
            await anyio.sleep(0.01)


@BACKENDS
async def test_stateless_listeners_hear_of_changes() -> None:
    app = App("changing")
    app.add_tool(lambda: "1", name="one")
    async with Client(app.memory_transport(), protocol_version=STATELESS) as client:
        async with client.listen(tools_list_changed=True) as subscription:
            app.add_tool(lambda: "2", name="two")
            with anyio.fail_after(5):
                async for notification in subscription:
                    assert notification.method == "notifications/tools/list_changed"
                    break
        tools = await client.list_all(v2026_07_28.methods.TOOLS_LIST)
    assert [tool.name for tool in tools] == ["one", "two"]


async def test_capabilities_follow_what_is_registered() -> None:
    empty = App("empty")
    async with Client(empty.memory_transport(), protocol_version="2025-11-25") as client:
        assert client.server_capabilities == {"logging": {}}
    tools_only = App("tools")
    tools_only.add_tool(lambda: 1, name="one")
    async with Client(tools_only.memory_transport(), protocol_version=STATELESS) as client:
        assert client.server_capabilities == {"logging": {}, "tools": {"listChanged": True}}
    given = App("given", capabilities={"tools": {"listChanged": False}})
    async with Client(given.memory_transport(), protocol_version="2025-11-25") as client:
        assert client.server_capabilities["tools"] == {"listChanged": False}
