"""A client bound to one revision's ``BINDINGS``: its classes at run time, and clear errors when
the session is not on that revision. (What the type checkers make of it: ``test_typing.py``.)"""

from __future__ import annotations

from types import ModuleType

import pytest
from mcpbind.generated import v2024_11_05, v2025_06_18, v2025_11_25, v2026_07_28
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, ProtocolVersionError, RequestContext, Server

from examples.server import server as example_server

pytestmark = pytest.mark.anyio


async def test_a_bound_client_speaks_its_revision_with_its_classes() -> None:
    async with Client(example_server.memory_transport(), bindings=v2025_11_25.BINDINGS) as client:
        assert client.revision == "2025-11-25"
        assert type(client.stub) is v2025_11_25.client.ClientStub
        assert type(client.server_info) is types.Implementation
        assert client.server_info.name == "mcpbind-example"
        capabilities = client.server_capabilities_model
        assert type(capabilities) is types.ServerCapabilities
        assert capabilities.tools is not None
        tools = await client.list_all(methods.TOOLS_LIST)
        assert tools and all(type(tool) is types.Tool for tool in tools)
        assert [t.name for t in await client.list_tools()] == [t.name for t in tools]


async def test_the_conveniences_call_by_name() -> None:
    async with Client(example_server.memory_transport(), bindings=v2025_11_25.BINDINGS) as client:
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert type(result) is types.CallToolResult
        assert result.content[0].text == "5"
        failed = await client.call_tool("fail")
        assert failed.isError is True
        read = await client.read_resource("square://7")
        assert type(read) is types.ReadResourceResult
        assert read.contents[0].text == "49"
        prompt = await client.get_prompt("greet", {"name": "Ada"})
        assert type(prompt) is types.GetPromptResult
        assert "Ada" in prompt.messages[0].content.text


@pytest.mark.parametrize("revision", [v2024_11_05, v2026_07_28])
async def test_an_unbound_client_gets_the_negotiated_revisions_classes(
    revision: ModuleType,
) -> None:
    bindings = revision.BINDINGS
    async with Client(example_server.memory_transport(), protocol_version=bindings.name) as client:
        result = await client.call_tool("echo", {"text": "hi"})
        assert type(result) is revision.types.CallToolResult
        tools = await client.list_tools()
        assert all(type(tool) is revision.types.Tool for tool in tools)


async def test_a_bound_stateless_client_lists_with_its_classes() -> None:
    async with Client(example_server.memory_transport(), bindings=v2026_07_28.BINDINGS) as client:
        assert client.revision == "2026-07-28"
        tools = await client.list_all(v2026_07_28.methods.TOOLS_LIST)
        assert tools and all(type(tool) is v2026_07_28.types.Tool for tool in tools)
        assert type(client.server_info) is v2026_07_28.types.Implementation


async def test_a_session_on_another_revision_is_a_clear_error() -> None:
    newest_only = Server("newest", revisions=["2025-11-25"])
    client = Client(
        newest_only.memory_transport(),
        bindings=v2025_06_18.BINDINGS,
        revisions=["2025-06-18", "2025-11-25"],
    )
    with pytest.raises(
        ProtocolVersionError, match=r"bound to revision 2025-06-18.*speaks 2025-11-25"
    ):
        async with client:
            pass


async def test_a_bound_client_offers_only_its_revision() -> None:
    newest_only = Server("newest", revisions=["2025-11-25"])
    with pytest.raises(ProtocolVersionError, match="2025-11-25"):
        async with Client(newest_only.memory_transport(), bindings=v2025_06_18.BINDINGS):
            pass


def test_contradicting_arguments_are_refused() -> None:
    transport = example_server.memory_transport()
    with pytest.raises(ValueError, match="contradicts bindings"):
        Client(transport, bindings=v2025_11_25.BINDINGS, protocol_version="2025-06-18")
    with pytest.raises(ValueError, match="leave out the bound revision"):
        Client(transport, bindings=v2025_11_25.BINDINGS, revisions=["2025-06-18"])
    with pytest.raises(ValueError, match="cannot fall back"):
        Client(transport, bindings=v2026_07_28.BINDINGS, fallback=True)


async def test_a_typed_context_gives_the_same_peer() -> None:
    server = Server("peer")
    seen: list[object] = []

    @server.handler(methods.TOOLS_CALL)
    async def call(
        params: types.CallToolRequestParams, context: RequestContext[v2025_11_25.client.ServerStub]
    ) -> types.CallToolResult:
        seen.append(type(context.peer))
        seen.append(type(context.peer_as(v2025_11_25.client.ServerStub)))
        return types.CallToolResult(content=[])

    async with Client(server.memory_transport(), bindings=v2025_11_25.BINDINGS) as client:
        await client.call_tool("any")
    assert seen == [v2025_11_25.client.ServerStub, v2025_11_25.client.ServerStub]
