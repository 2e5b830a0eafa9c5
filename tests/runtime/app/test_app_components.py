"""App conveniences: bare ``@app.tool`` / ``@app.prompt``, tags with ``enable``/``disable``
(hidden from lists, unreachable as if unknown, clients told), and per-tool time limits
(async tools cancelled, sync tools answered at the limit while their thread runs on).

Served in process (memory) and as a stdio subprocess, in the handshake and stateless eras."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from app_helpers import STATELESS, wire
from mcpbind.generated import v2024_11_05, v2025_11_25, v2026_07_28
from mcpbind.runtime import Client, McpError, Session, StdioParameters
from mcpbind.runtime.app import App

pytestmark = pytest.mark.anyio

SERVER = str(Path(__file__).with_name("components_server.py"))
MODULES = {"2024-11-05": v2024_11_05, "2025-11-25": v2025_11_25, STATELESS: v2026_07_28}
ERAS = ["2025-11-25", STATELESS]


def fresh_app() -> Any:
    """A new copy of the components server module (its ``app`` and ``FINISHED``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("components_server_copy", SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def transports(module: ModuleType) -> dict[str, Any]:
    return {
        "memory": lambda *args: module.app.memory_transport(),
        "stdio": lambda *args: StdioParameters(sys.executable, [SERVER, *args]),
    }


def text(result: Any) -> str:
    return str(result.content[0].text)


async def names(client: Client, module: Any) -> dict[str, list[str]]:
    methods = module.methods
    return {
        "tools": [t.name for t in await client.list_all(methods.TOOLS_LIST)],
        "prompts": [p.name for p in await client.list_all(methods.PROMPTS_LIST)],
        "resources": [str(r.uri) for r in await client.list_all(methods.RESOURCES_LIST)],
        "templates": [
            t.uriTemplate for t in await client.list_all(methods.RESOURCES_TEMPLATES_LIST)
        ],
    }


async def failure(call: Any) -> McpError:
    with pytest.raises(McpError) as caught:
        await call
    return caught.value


def test_bare_decorators_register_and_return_the_function() -> None:
    app = App("bare")

    @app.tool
    def shout(word: str) -> str:
        """Louder."""
        return word.upper()

    @app.prompt
    def ask(topic: str) -> str:
        return f"Tell me about {topic}"

    assert shout("hi") == "HI" and ask("x") == "Tell me about x"
    assert app.tools["shout"].describe()["description"] == "Louder."
    assert app.prompts["ask"].describe()["arguments"][0]["name"] == "topic"


@pytest.mark.parametrize("how", ["memory", "stdio"])
@pytest.mark.parametrize("version", ERAS)
async def test_disabled_components_are_hidden_and_unreachable(how: str, version: str) -> None:
    """``--lock-admin`` disables the admin tag before serving; ``wipe`` was registered
    disabled. Hidden everywhere, and each refused exactly as an unknown name is."""
    server = fresh_app()
    if how == "memory":
        server.app.disable(tags="admin")
    module = MODULES[version]
    types = module.types
    transport = transports(server)[how]("--lock-admin")
    async with Client(transport, protocol_version=version) as client:
        listed = await names(client, module)
        hidden_tool = await failure(
            client.stub.call_tool(types.CallToolRequestParams(name="reset"))
        )
        unknown_tool = await failure(
            client.stub.call_tool(types.CallToolRequestParams(name="nope"))
        )
        hidden_prompt = await failure(
            client.stub.get_prompt(types.GetPromptRequestParams(name="audit", arguments={}))
        )
        hidden_read = await failure(
            client.stub.read_resource(types.ReadResourceRequestParams(uri="config://secret"))
        )
        template_read = await failure(
            client.stub.read_resource(types.ReadResourceRequestParams(uri="logs://monday"))
        )
        unknown_read = await failure(
            client.stub.read_resource(types.ReadResourceRequestParams(uri="config://nope"))
        )
        status = await client.stub.call_tool(types.CallToolRequestParams(name="status"))
    assert listed == {
        "tools": ["status", "sleepy", "blocking", "lock", "unlock"],
        "prompts": ["hello"],
        "resources": ["config://public"],
        "templates": ["pages://docs/{+path}{?v}"],
    }
    assert (hidden_tool.code, hidden_tool.message) == (-32602, "Unknown tool: reset")
    assert unknown_tool.code == -32602
    assert (hidden_prompt.code, hidden_prompt.message) == (-32602, "Unknown prompt: audit")
    not_found = -32002 if version != STATELESS else -32602
    for refused in (hidden_read, template_read, unknown_read):
        assert (refused.code, refused.message) == (not_found, "Resource not found")
    assert text(status) == "ok"


@pytest.mark.parametrize("how", ["memory", "stdio"])
async def test_enable_and_disable_tell_handshake_clients(how: str) -> None:
    """A tool disables and enables a tag during requests: the lists follow, and each
    change that alters a list is announced (a no-op change is not)."""
    server = fresh_app()
    types = v2025_11_25.types
    methods = v2025_11_25.methods
    heard: list[str] = []
    client = Client(transports(server)[how](), protocol_version="2025-11-25")
    for spec in (
        methods.NOTIFICATIONS_TOOLS_LIST_CHANGED,
        methods.NOTIFICATIONS_PROMPTS_LIST_CHANGED,
        methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    ):

        async def on_change(params: Any, session: Session, method: str = spec.method) -> None:
            heard.append(method.split("/")[1])

        client.add_notification_handler(spec, on_change)

    def call(name: str, **arguments: Any) -> Any:
        return client.stub.call_tool(types.CallToolRequestParams(name=name, arguments=arguments))

    async with client:
        before = await names(client, v2025_11_25)
        await call("lock", tag="admin")
        await wait_for(heard, 3)
        locked = await names(client, v2025_11_25)
        await call("lock", tag="admin")  # nothing visible changes: nothing is said
        await call("unlock", tag="danger")  # wipe has "danger" too: the newer rule wins
        await wait_for(heard, 4)
        await call("unlock", tag="admin")
        await wait_for(heard, 7)
        after = await names(client, v2025_11_25)
        wiped = await call("wipe")
    assert "reset" in before["tools"] and "wipe" not in before["tools"]
    assert "reset" not in locked["tools"] and locked["prompts"] == ["hello"]
    assert locked["templates"] == ["pages://docs/{+path}{?v}"]
    assert before["templates"] == ["logs://{day}", "pages://docs/{+path}{?v}"]
    assert sorted(heard[:3]) == ["prompts", "resources", "tools"]
    assert heard[3] == "tools"
    assert sorted(heard[4:]) == ["prompts", "resources", "tools"]
    assert after["tools"] == [*before["tools"][:2], "wipe", *before["tools"][2:]]
    assert text(wiped) == "wiped"


async def wait_for(heard: list[str], count: int) -> None:
    with anyio.fail_after(5):
        while len(heard) < count:
            await anyio.sleep(0.01)
    await anyio.sleep(0.05)  # and nothing more arrives meanwhile
    assert len(heard) == count, heard


async def test_stateless_listeners_hear_of_disabling() -> None:
    server = fresh_app()
    async with Client(server.app.memory_transport(), protocol_version=STATELESS) as client:
        async with client.listen(tools_list_changed=True) as subscription:
            server.app.disable(names="status", components="tool")
            with anyio.fail_after(5):
                async for notification in subscription:
                    assert notification.method == "notifications/tools/list_changed"
                    break
        tools = await client.list_all(v2026_07_28.methods.TOOLS_LIST)
    assert "status" not in [tool.name for tool in tools]


async def test_rules_match_every_criterion_and_the_latest_wins() -> None:
    app = App("rules")
    app.add_tool(lambda: "a", name="shared", tags={"x"})
    app.add_prompt(lambda: "p", name="shared", tags={"x"})
    app.add_resource(lambda: "r", "r://one", tags={"x", "y"})
    app.add_resource(lambda day: day, "t://{day}", tags={"y"})
    app.disable(tags={"x"}, components="tool")  # only the tool, though the prompt is tagged x
    async with wire(app, "2025-11-25") as peer:
        tools = (await peer.result("tools/list"))["tools"]
        prompts = (await peer.result("prompts/list"))["prompts"]
        app.disable(tags="y")
        resources = (await peer.result("resources/list"))["resources"]
        templates = (await peer.result("resources/templates/list"))["resourceTemplates"]
        app.enable(names="t://{day}")
        templates_again = (await peer.result("resources/templates/list"))["resourceTemplates"]
        read = await peer.result("resources/read", {"uri": "t://monday"})
    assert tools == [] and [p["name"] for p in prompts] == ["shared"]
    assert resources == [] and templates == []
    assert [t["uriTemplate"] for t in templates_again] == ["t://{day}"]
    assert read["contents"][0]["text"] == "monday"
    assert "tags" not in str(prompts)  # tags are the server's own labels, never sent


def test_bad_rules_and_limits_are_refused_clearly() -> None:
    app = App("bad")
    with pytest.raises(ValueError, match="names=, tags= or components="):
        app.disable()
    with pytest.raises(ValueError, match="unknown component kinds \\['tools'\\]"):
        app.disable(components="tools")
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        app.add_tool(lambda: 1, name="t", timeout=0)
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        App("bad", tool_timeout=float("nan"))
    assert "t" not in app.tools


@pytest.mark.parametrize("how", ["memory", "stdio"])
@pytest.mark.parametrize("version", ERAS)
async def test_tools_time_out_with_an_error_result(how: str, version: str) -> None:
    server = fresh_app()
    types = MODULES[version].types
    async with Client(transports(server)[how](), protocol_version=version) as client:

        def call(name: str, seconds: float) -> Any:
            params = types.CallToolRequestParams(name=name, arguments={"seconds": seconds})
            return client.stub.call_tool(params)

        fast = await call("sleepy", 0.0)
        started = time.monotonic()
        slow = await call("sleepy", 30)
        slow_took = time.monotonic() - started
        started = time.monotonic()
        blocked = await call("blocking", 1.5)
        blocked_took = time.monotonic() - started
        after = await call("sleepy", 0.0)  # the session goes on serving
    assert text(fast) == "slept" and not fast.isError
    assert slow.isError is True
    assert text(slow) == "Tool 'sleepy' timed out after 0.2 seconds"
    assert blocked.isError is True
    assert text(blocked) == "Tool 'blocking' timed out after 0.2 seconds"
    # The sync tool's thread sleeps 1.5 s; its answer came at the limit all the same.
    assert slow_took < 1.0 and blocked_took < 1.0
    assert text(after) == "slept"
    if how == "memory":
        assert not server.FINISHED.is_set()
        with anyio.fail_after(5):
            while not server.FINISHED.is_set():  # the thread ran on; its result was dropped
                await anyio.sleep(0.05)


async def test_the_app_wide_limit_applies_unless_a_tool_has_its_own() -> None:
    app = App("limits", tool_timeout=0.1)

    @app.tool
    async def default(seconds: float) -> str:
        await anyio.sleep(seconds)
        return "done"

    @app.tool(timeout=5)
    async def patient(seconds: float) -> str:
        await anyio.sleep(seconds)
        return "done"

    async with wire(app, STATELESS) as peer:
        limited = await peer.call("default", seconds=1)
        allowed = await peer.call("patient", seconds=0.3)
    assert limited["isError"] is True and "after 0.1 seconds" in limited["content"][0]["text"]
    assert allowed["content"][0]["text"] == "done" and not allowed.get("isError")


async def test_a_client_cancellation_is_not_taken_for_a_timeout() -> None:
    """The limit's scope catches only its own deadline: a request cancelled by its
    client stays cancelled (no result is sent), and the server goes on."""
    app = App("cancel", tool_timeout=10)
    started = anyio.Event()

    @app.tool
    async def wait() -> str:
        started.set()
        await anyio.sleep(30)
        return "never"

    @app.tool
    def ping() -> str:
        return "pong"

    types = v2025_11_25.types
    async with Client(app.memory_transport(), protocol_version="2025-11-25") as client:
        with anyio.move_on_after(0.3) as scope:
            await client.stub.call_tool(types.CallToolRequestParams(name="wait"))
        pong = await client.stub.call_tool(types.CallToolRequestParams(name="ping"))
    assert scope.cancelled_caught and started.is_set()
    assert text(pong) == "pong"
