"""What ``Client(...)`` connects to: an App or Server (in memory), ``StdioParameters`` (a
subprocess), an ``http(s)://`` URL (Streamable HTTP, with ``headers=`` and ``auth=``), a
transport; and a clear error for anything else. Each in both protocol eras."""

from __future__ import annotations

import sys
from collections.abc import Generator
from typing import Any

import httpx
import pytest
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, RequestContext, Server, StdioParameters
from mcpbind.runtime.app import App
from mcpbind.runtime.http import serving, streamable_http_client

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", "2026-07-28"]

app = App("targets")


@app.tool()
def shout(text: str) -> str:
    """Upper case."""
    return text.upper()


def low_level() -> Server:
    server = Server("low")

    @server.handler(methods.TOOLS_LIST)
    async def tools(
        params: types.PaginatedRequestParams, context: RequestContext
    ) -> types.ListToolsResult:
        tool = types.Tool(name="only", inputSchema=types.ToolInputSchema(type="object"))
        return types.ListToolsResult(tools=[tool])

    return server


@pytest.mark.parametrize("revision", ERAS)
async def test_an_app_in_memory(revision: str) -> None:
    async with Client(app, protocol_version=revision) as client:
        assert client.revision == revision
        result = await client.call_tool("shout", {"text": "hi"})
        assert result.structuredContent == {"result": "HI"}


@pytest.mark.parametrize("revision", ERAS)
async def test_a_low_level_server_in_memory(revision: str) -> None:
    async with Client(low_level(), protocol_version=revision) as client:
        assert client.revision == revision
        assert [tool.name for tool in await client.list_tools()] == ["only"]


@pytest.mark.parametrize("revision", ERAS)
async def test_stdio_parameters_start_a_process(revision: str) -> None:
    target = StdioParameters(sys.executable, ["-m", "examples.app_server"])
    async with Client(target, protocol_version=revision) as client:
        assert client.revision == revision
        assert (await client.call_tool("echo", {"text": "x"})).isError is not True


class Counting(httpx.Auth):
    """An ``httpx.Auth`` that signs each request with a header, and counts them."""

    def __init__(self) -> None:
        self.signed = 0

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        self.signed += 1
        request.headers["x-signed"] = "yes"
        yield request


@pytest.mark.parametrize("revision", ERAS)
async def test_a_url_is_streamable_http_with_headers_and_auth(revision: str) -> None:
    seen: list[dict[str, str]] = []
    inner = app.http_app()

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append({k.decode(): v.decode() for k, v in scope["headers"]})
        await inner(scope, receive, send)

    auth = Counting()
    async with serving(recording) as base:
        url = f"{base}/mcp"
        async with Client(url, protocol_version=revision, headers={"x-team": "qa"}, auth=auth) as c:
            assert c.revision == revision
            assert (await c.call_tool("shout", {"text": "web"})).structuredContent == {
                "result": "WEB"
            }
    posts = [headers for headers in seen if "x-team" in headers]
    assert posts and all(h["x-team"] == "qa" and h["x-signed"] == "yes" for h in posts)
    assert auth.signed >= 2  # the probe or handshake, then the call


async def test_a_transport_as_before() -> None:
    async with (
        serving(app.http_app()) as base,
        Client(streamable_http_client(f"{base}/mcp")) as client,
    ):
        assert (await client.call_tool("shout", {"text": "t"})).structuredContent == {"result": "T"}
    async with Client(app.memory_transport(), protocol_version="2026-07-28") as client:
        assert client.revision == "2026-07-28"


@pytest.mark.parametrize(
    ("target", "error", "words"),
    [
        (42, TypeError, "got int"),
        (None, TypeError, "got NoneType"),
        (b"https://example.com/mcp", TypeError, "got bytes"),
        ("ftp://example.com/mcp", ValueError, "http:// or https://"),
        ("example.com/mcp", ValueError, "http:// or https://"),
        ("https:///mcp", ValueError, "with a host"),
    ],
)
def test_what_cannot_be_connected_to_is_a_clear_error(
    target: Any, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        Client(target)


def test_http_options_without_a_url_are_refused() -> None:
    with pytest.raises(TypeError, match="apply to a URL only"):
        Client(app, headers={"a": "b"})  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="apply to a URL only"):
        Client(StdioParameters("true"), auth=Counting())  # type: ignore[call-overload]
