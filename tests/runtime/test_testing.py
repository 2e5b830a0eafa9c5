"""``mcpbind.runtime.testing``: ``connect(app)`` in one line, a tool's exception raised in the test
with its own traceback (``raise_exceptions``), and the pytest plugin's ``mcp_client`` fixture,
on asyncio and trio, in both protocol eras."""

from __future__ import annotations

import subprocess
import sys
import traceback
from pathlib import Path

import pytest
from mcpbind.generated import v2025_11_25
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import McpError, RequestContext, Server
from mcpbind.runtime.app import App, Context, ToolError
from mcpbind.runtime.testing import connect

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", "2026-07-28"]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


app = App("under-test")


@app.tool()
def add(a: int, b: int) -> int:
    return a + b


@app.tool()
def divide(a: int, b: int) -> float:
    return a / b


@app.tool()
def refuse() -> str:
    raise ToolError("not today")


@pytest.mark.parametrize("revision", ERAS)
async def test_connect_is_one_line(revision: str) -> None:
    async with connect(app, protocol_version=revision) as client:
        assert client.revision == revision
        assert (await client.call_tool("add", {"a": 2, "b": 3})).structuredContent == {"result": 5}


@pytest.mark.parametrize("revision", ERAS)
async def test_a_tools_exception_is_raised_with_its_own_traceback(revision: str) -> None:
    async with connect(app, protocol_version=revision) as client:
        with pytest.raises(ZeroDivisionError) as info:
            await client.call_tool("divide", {"a": 1, "b": 0})
        frames = traceback.extract_tb(info.value.__traceback__)
        assert frames[-1].name == "divide" and frames[-1].line == "return a / b"
        # The session goes on: the next call is answered.
        assert (await client.call_tool("add", {"a": 1, "b": 1})).structuredContent == {"result": 2}
        # A ToolError is the tool's answer, not a bug: still an isError result.
        refused = await client.call_tool("refuse")
        assert refused.isError is True and refused.content[0].text == "not today"
    assert app.on_tool_exception is None  # the hook is the app's again


@pytest.mark.parametrize("revision", ERAS)
async def test_raise_exceptions_false_keeps_the_apps_answer(revision: str) -> None:
    async with connect(app, protocol_version=revision, raise_exceptions=False) as client:
        result = await client.call_tool("divide", {"a": 1, "b": 0})
        assert result.isError is True
        assert "ZeroDivisionError" in result.content[0].text


async def test_an_exception_no_call_raised_is_raised_on_leaving() -> None:
    with pytest.raises(ZeroDivisionError):
        async with connect(app) as client:
            # Past the client's own send_request: the session answers -32603, nothing raises it.
            spec = methods.TOOLS_CALL
            with pytest.raises(McpError, match="Internal error"):
                await client.session.send_request(
                    spec, {"name": "divide", "arguments": {"a": 1, "b": 0}}
                )
            # Another call is not blamed for it: each call raises only what its own request did.
            result = await client.call_tool("add", {"a": 1, "b": 1})
            assert result.structuredContent == {"result": 2}


@pytest.mark.parametrize("revision", ERAS)
async def test_a_low_level_server(revision: str) -> None:
    server = Server("low")

    @server.handler(methods.TOOLS_LIST)
    async def tools(
        params: types.PaginatedRequestParams, context: RequestContext
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])

    async with connect(server, protocol_version=revision) as client:
        assert await client.list_tools() == []


@pytest.mark.parametrize("revision", ERAS)
async def test_handlers_answer_what_the_server_asks(revision: str) -> None:
    asking = App("asking")

    @asking.tool()
    async def where(ctx: Context) -> str:
        roots = await ctx.list_roots()
        return roots[0].uri

    async def roots(params: object, context: RequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///work")])

    async with connect(
        asking, protocol_version=revision, handlers={methods.ROOTS_LIST: roots}
    ) as client:
        result = await client.call_tool("where")
        assert result.structuredContent == {"result": "file:///work"}


async def test_a_bound_client_is_typed_by_its_bindings() -> None:
    async with connect(app, bindings=v2025_11_25.BINDINGS) as client:
        assert client.revision == "2025-11-25"
        result = await client.call_tool("add", {"a": 1, "b": 2})
        assert type(result) is types.CallToolResult


async def test_a_servers_handler_exception_fails_the_call_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("low")

    @server.handler(methods.TOOLS_LIST)
    async def tools(
        params: types.PaginatedRequestParams, context: RequestContext
    ) -> types.ListToolsResult:
        raise KeyError("lost")

    async with connect(server) as client:
        with pytest.raises(McpError, match="Internal error"):
            await client.list_tools()
    failed = [r for r in caplog.records if r.exc_info and r.exc_info[0] is KeyError]
    assert failed, caplog.text


@pytest.mark.parametrize("target", [42, "https://example.com/mcp", None])
async def test_what_is_not_a_server_is_refused(target: object) -> None:
    with pytest.raises(TypeError, match="takes an App or a Server"):
        async with connect(target):
            pass


CONFTEST = """
import pytest

pytest_plugins = ["mcpbind.runtime.testing.pytest_plugin"]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param
"""

TESTS = """
import pytest

from mcpbind.runtime.app import App

app = App("plugged")


@app.tool()
def double(n: int) -> int:
    return n * 2


@app.tool()
def broken() -> int:
    return {}["missing"]


@pytest.fixture
def mcp_server():
    return app


@pytest.fixture(params=["2025-11-25", "2026-07-28"])
def mcp_protocol_version(request):
    return request.param


@pytest.mark.anyio
async def test_double(mcp_client, mcp_protocol_version):
    assert mcp_client.revision == mcp_protocol_version
    result = await mcp_client.call_tool("double", {"n": 21})
    assert result.structuredContent == {"result": 42}


@pytest.mark.anyio
async def test_broken(mcp_client):
    await mcp_client.call_tool("broken")
"""


DEFAULT_REVISION = """
import pytest

from test_plugged import app


@pytest.fixture
def mcp_server():
    return app


@pytest.mark.anyio
async def test_the_newest_handshake_revision_by_default(mcp_client):
    assert mcp_client.revision == "2025-11-25"
"""


def test_the_pytest_plugin(tmp_path: Path) -> None:
    """A project that enables the plugin gets ``mcp_client`` on asyncio and trio, in both eras
    (the newest handshake revision unless ``mcp_protocol_version`` says otherwise); a tool's bug
    fails its test with the tool's own line in the report."""
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_plugged.py").write_text(TESTS)
    (tmp_path / "test_default.py").write_text(DEFAULT_REVISION)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rf", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    report = run.stdout + run.stderr
    assert "4 failed, 6 passed" in report, report
    for backend in ("asyncio", "trio"):
        for revision in ERAS:
            assert (
                f"test_double[{backend}-{revision}] PASSED" not in report
            )  # -q: no per-test lines
            assert f"FAILED test_plugged.py::test_broken[{backend}-{revision}] - KeyError" in report
    assert 'return {}["missing"]' in report  # the tool's own line, in its traceback


def test_without_mcp_server_the_fixture_says_what_to_define(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_forgot.py").write_text(
        "import pytest\n\n@pytest.mark.anyio\nasync def test_x(mcp_client):\n    pass\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert "define a fixture named 'mcp_server'" in run.stdout + run.stderr
    assert run.returncode != 0
