"""``Depends``: dependencies of tools, resources and prompts, over memory and a stdio subprocess,
for a 2025-11-25 client and a 2026-07-28 one. The app (``depends_app``) records what its
dependencies did; its ``events`` tool hands the record over, in process or not."""

from __future__ import annotations

import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import anyio
import pytest
from app_helpers import STATELESS
from depends_app import app
from mcpbind.generated import v2025_11_25, v2026_07_28
from mcpbind.runtime import INTERNAL_ERROR, Client, McpError, StdioParameters
from mcpbind.runtime.app import App, Context, Depends

pytestmark = pytest.mark.anyio

DEPENDS_APP = str(Path(__file__).with_name("depends_app.py"))
VERSIONS = ["2025-11-25", STATELESS]
MODULES: dict[str, Any] = {"2025-11-25": v2025_11_25, STATELESS: v2026_07_28}
TRANSPORTS = ["memory", "stdio"]


@asynccontextmanager
async def connected(transport: str, version: str) -> AsyncIterator[Client]:
    source: Any = (
        app.memory_transport()
        if transport == "memory"
        else StdioParameters(sys.executable, [DEPENDS_APP])
    )
    async with Client(source, protocol_version=version) as client:
        await events(client)  # a clean record: the in-process app is shared by the tests
        yield client


async def events(client: Client) -> list[str]:
    result = await client.call_tool("events")
    found: list[str] = result.structuredContent["result"]
    return found


def text(result: Any) -> str:
    value: str = result.content[0].text
    return value


both = pytest.mark.parametrize("version", VERSIONS)
everywhere = pytest.mark.parametrize("transport", TRANSPORTS)


@both
async def test_dependencies_are_hidden_from_schemas_arguments_and_variables(version: str) -> None:
    async with connected("memory", version) as client:
        methods = MODULES[version].methods
        tools = {tool.name: tool for tool in await client.list_all(methods.TOOLS_LIST)}
        templates = await client.list_all(methods.RESOURCES_TEMPLATES_LIST)
        prompts = {p.name: p for p in await client.list_all(methods.PROMPTS_LIST)}
    assert tools["query"].inputSchema.properties == {"sql": {"title": "Sql", "type": "string"}}
    assert tools["query"].inputSchema.required == ["sql"]
    assert tools["broken"].inputSchema.properties == {}
    assert [t.uriTemplate for t in templates] == ["rows://{table}"]
    assert [a.name for a in prompts["ask"].arguments or []] == ["topic"]
    assert prompts["broken_prompt"].arguments is None


@everywhere
@both
async def test_each_request_resolves_once_and_cleans_up_after(transport: str, version: str) -> None:
    async with connected(transport, version) as client:
        first = await client.call_tool("query", {"sql": "select 1"})
        second = await client.call_tool("query", {"sql": "select 2"})
        seen = await events(client)
    db1 = text(first).split(" on ")[1].split(" ")[0]
    db2 = text(second).split(" on ")[1].split(" ")[0]
    assert db1 != db2  # per request
    assert text(first) == f"select 1 on {db1} by hello from {db1} (audited)"
    for sql, db in (("select 1", db1), ("select 2", db2)):
        mine = seen[seen.index(f"open {db}") : seen.index(f"close {db}") + 1]
        # get_db wanted twice (by the tool and by current_user): opened once; cleanups last.
        assert mine == [f"open {db}", "settings", "audit start", f"query {sql}", "audit end",
                        f"close {db}"], seen  # fmt: skip
    assert seen.count(f"open {db1}") == 1 and len(seen) == 12


@everywhere
@both
async def test_use_cache_false_calls_again(transport: str, version: str) -> None:
    async with connected(transport, version) as client:
        answer = await client.call_tool("tickets")
    assert answer.structuredContent == {"result": [1, 0]}


@everywhere
@both
async def test_a_failing_call_is_seen_by_the_cleanup(transport: str, version: str) -> None:
    async with connected(transport, version) as client:
        failed = await client.call_tool("failing")
        seen = await events(client)
    assert (
        failed.isError
        and text(failed) == "Error executing tool 'failing': ValueError: query failed"
    )
    assert len(seen) == 3 and seen[0].startswith("open ")
    db = seen[0].removeprefix("open ")
    assert seen[1:] == [f"rollback {db} ValueError", f"close {db}"]


@everywhere
@both
async def test_a_cancelled_call_still_cleans_up(transport: str, version: str) -> None:
    async with connected(transport, version) as client:
        seen: list[str] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "slow")
            with anyio.fail_after(10):
                while "slow started" not in seen:
                    seen += await events(client)
            tg.cancel_scope.cancel()
        with anyio.fail_after(10):
            while not any(line.startswith("close ") for line in seen):
                seen += await events(client)
        after = await client.call_tool("query", {"sql": "still serving"})
    db = seen[0].removeprefix("open ")
    assert seen[:2] == [f"open {db}", "slow started"], seen
    assert seen[2:4] == [f"rollback {db} CancelledError", f"close {db}"], seen
    assert not after.isError


@everywhere
@both
async def test_resources_and_prompts_get_their_dependencies(transport: str, version: str) -> None:
    async with connected(transport, version) as client:
        read = await client.read_resource("rows://users")
        prompt = await client.get_prompt("ask", {"topic": "tides"})
        seen = await events(client)
    assert read.contents[0].text.startswith("users via db")
    said = prompt.messages[0].content.text
    assert said.startswith("hello from db") and said.endswith(": tell me about tides")
    opened = [line for line in seen if line.startswith("open ")]
    closed = [line for line in seen if line.startswith("close ")]
    assert len(opened) == 2 and [c.replace("close", "open") for c in closed] == opened


@everywhere
@both
async def test_a_failing_dependency_is_a_clear_error(transport: str, version: str) -> None:
    async with connected(transport, version) as client:
        broken = await client.call_tool("broken")
        refused = await client.call_tool("refused")
        with pytest.raises(McpError) as resource:
            await client.read_resource("config://broken")
        with pytest.raises(McpError) as prompt:
            await client.get_prompt("broken_prompt", {})
        fine = await client.call_tool("query", {"sql": "after"})
    assert broken.isError
    assert text(broken) == "Error executing tool 'broken': ConnectionError: database unreachable"
    assert refused.isError and text(refused) == "not allowed today"
    assert resource.value.code == INTERNAL_ERROR
    assert resource.value.message == (
        "Error reading resource config://broken: ConnectionError: database unreachable"
    )
    assert prompt.value.code == INTERNAL_ERROR
    assert prompt.value.message == (
        "Error getting prompt 'broken_prompt': ConnectionError: database unreachable"
    )
    assert not fine.isError


def unreachable() -> str:
    raise ConnectionError("secret host db.internal unreachable")


@both
async def test_masked_errors_hide_a_dependency_failure(version: str) -> None:
    masked = App("masked", mask_errors=True)

    @masked.tool()
    def tool(db: Annotated[str, Depends(unreachable)]) -> str:
        return db

    @masked.resource("data://x")
    def resource(db: Annotated[str, Depends(unreachable)]) -> str:
        return db

    @masked.prompt()
    def prompt(db: Annotated[str, Depends(unreachable)]) -> str:
        return db

    async with Client(masked.memory_transport(), protocol_version=version) as client:
        result = await client.call_tool("tool")
        with pytest.raises(McpError) as read:
            await client.read_resource("data://x")
        with pytest.raises(McpError) as got:
            await client.get_prompt("prompt", {})
    assert result.isError and text(result) == "Error executing tool 'tool'"
    assert read.value.message == "Error reading resource data://x"
    assert got.value.message == "Error getting prompt 'prompt'"


async def sync_generator_counting(ctx: Context) -> int:
    return int(ctx.request_id)


@both
async def test_the_default_form_and_a_context_in_a_dependency(version: str) -> None:
    small = App("small")

    @small.tool()
    async def whoami(ctx: Context, asked: int = Depends(sync_generator_counting)) -> bool:
        return asked == ctx.request_id

    async with Client(small.memory_transport(), protocol_version=version) as client:
        tools = await client.list_all(MODULES[version].methods.TOOLS_LIST)
        answer = await client.call_tool("whoami")
    assert tools[0].inputSchema.properties == {}
    assert answer.structuredContent == {"result": True}


def needs_a_value(value: int) -> int:
    return value


def first_of_a_loop(x: Annotated[int, Depends(second_of_a_loop)]) -> int:
    return x


def second_of_a_loop(x: Annotated[int, Depends(first_of_a_loop)]) -> int:
    return x


def test_a_dependency_that_cannot_be_resolved_is_refused_at_registration() -> None:
    refusing = App("refusing")

    def plain(x: Annotated[int, Depends(needs_a_value)]) -> int:
        return x

    def looping(x: Annotated[int, Depends(first_of_a_loop)]) -> int:
        return x

    with pytest.raises(TypeError, match=r"parameter 'value' must be a Context, a Depends"):
        refusing.add_tool(plain)
    with pytest.raises(TypeError, match="'first_of_a_loop' depends on itself"):
        refusing.add_tool(looping)
    with pytest.raises(TypeError, match="Depends\\(\\) takes a function, not int"):
        Depends(3)  # type: ignore[call-overload]
    assert refusing.tools == {}


def thread_of_a_function() -> int:
    return threading.get_ident()


def thread_of_a_generator() -> Iterator[int]:
    yield threading.get_ident()
    CLEANED_IN.append(threading.get_ident())


CLEANED_IN: list[int] = []


async def test_sync_dependencies_and_their_cleanups_run_in_worker_threads() -> None:
    threads = App("threads")

    @threads.tool()
    async def where(
        plain: Annotated[int, Depends(thread_of_a_function)],
        generator: Annotated[int, Depends(thread_of_a_generator)],
    ) -> list[int]:
        return [plain, generator]

    async with Client(threads.memory_transport()) as client:
        answer = await client.call_tool("where")
    loop_thread = threading.get_ident()
    plain, generator = answer.structuredContent["result"]
    assert loop_thread not in (plain, generator, *CLEANED_IN) and len(CLEANED_IN) == 1


class AsyncCallable:
    """A dependency that is an object with an ``async __call__``."""

    async def __call__(self) -> str:
        return "from an object"


async def test_an_object_with_an_async_call_is_awaited() -> None:
    objects = App("objects")

    @objects.tool()
    def value(given: Annotated[str, Depends(AsyncCallable())]) -> str:
        return given

    async with Client(objects.memory_transport()) as client:
        answer = await client.call_tool("value")
    assert answer.structuredContent == {"result": "from an object"}
