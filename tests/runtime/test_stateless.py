"""The stateless era (2026-07-28): per-request ``_meta``, ``server/discover``, input-required
results, and both eras on one server; in memory, over stdio, and with the official Python SDK."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp
import pytest
from mcp import StdioServerParameters, stdio_client as sdk_stdio_client
from mcpbind.generated import v2025_11_25, v2026_07_28
from mcpbind.runtime import (
    ASSUME_INITIALIZED,
    UNSUPPORTED_PROTOCOL_VERSION,
    CapabilityError,
    Client,
    HandshakeClient,
    ProtocolVersionError,
    RequestContext,
    Server,
    StatelessClient,
    StdioParameters,
    memory_pair,
)
from mcpbind.runtime.eras.stateless import CLIENT_CAPABILITIES, PROTOCOL_VERSION, SERVER_INFO
from runtime_helpers import RawPeer, given, raw_client_of

pytestmark = pytest.mark.anyio

types = v2026_07_28.types
ERAS_SERVER = str(Path(__file__).with_name("eras_server.py"))
SDK_SERVER = str(Path(__file__).with_name("sdk_server.py"))
META = {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}}


def echo_server(revisions: list[str] | None = None) -> Server:
    server = Server("stateless-test", "2.0", revisions=revisions, instructions="be brief")

    @server.handler(v2025_11_25.methods.TOOLS_CALL)
    async def call_tool(params: Any, context: RequestContext) -> Any:
        text = str((params.arguments or {}).get("text", ""))
        return v2025_11_25.types.CallToolResult(content=[v2025_11_25.types.TextContent(text=text)])

    return server


def call(request_id: int, meta: Any = META, **params: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": "echo", "arguments": {"text": "hi"}, **params}
    if meta is not None:
        body["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": body}


async def test_a_request_with_the_per_request_fields_is_served_and_stamped_complete() -> None:
    async with raw_client_of(echo_server(), initialize=None) as peer:
        reply = await peer.request(call(1))
        assert reply["result"] == {
            "content": [{"type": "text", "text": "hi"}],
            "resultType": "complete",
        }


@pytest.mark.parametrize(
    "meta",
    [None, {}, {PROTOCOL_VERSION: "2026-07-28"}, {CLIENT_CAPABILITIES: {}, "x": 1}],
    ids=["no-meta", "empty", "no-capabilities", "no-version"],
)
async def test_a_request_missing_a_required_field_gets_invalid_params(meta: Any) -> None:
    # Without any version, a dual-era server cannot tell a legacy client's early request from a
    # malformed modern one; a stateless-only server must answer -32602.
    async with raw_client_of(echo_server(["2026-07-28"]), initialize=None) as peer:
        reply = await peer.request(call(1, meta))
        assert reply["error"]["code"] == -32602
        assert "_meta" in reply["error"]["message"]


async def test_an_unknown_version_gets_unsupported_protocol_version() -> None:
    async with raw_client_of(echo_server(), initialize=None) as peer:
        reply = await peer.request(call(1, {**META, PROTOCOL_VERSION: "1900-01-01"}))
        error = reply["error"]
        assert error["code"] == UNSUPPORTED_PROTOCOL_VERSION == -32022
        assert error["data"]["requested"] == "1900-01-01"
        assert error["data"]["supported"][:2] == ["2026-07-28", "2025-11-25"]


async def test_a_stateless_only_server_refuses_initialize_naming_its_versions() -> None:
    async with raw_client_of(echo_server(["2026-07-28"]), initialize=None) as peer:
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}}
        reply = await peer.request(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        )
        assert reply["error"]["code"] == -32601
        assert "2026-07-28" in reply["error"]["message"]
        assert reply["error"]["data"] == {"method": "initialize", "supported": ["2026-07-28"]}


async def test_server_discover_reports_versions_capabilities_and_identity() -> None:
    async with raw_client_of(echo_server(), initialize=None) as peer:
        reply = await peer.request(
            {"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": {"_meta": META}}
        )
        result = reply["result"]
        assert result["resultType"] == "complete"
        assert result["supportedVersions"][0] == "2026-07-28"
        assert "2024-11-05" in result["supportedVersions"]
        assert result["capabilities"] == {"tools": {}}
        assert result["_meta"][SERVER_INFO] == {"name": "stateless-test", "version": "2.0"}
        assert result["instructions"] == "be brief"
        assert types.DiscoverResult.model_validate(result).ttlMs == 0


async def test_a_handshake_era_handler_serves_with_neutral_cache_fields() -> None:
    server = echo_server()

    @server.handler(v2025_11_25.methods.TOOLS_LIST)
    async def list_tools(params: Any, context: RequestContext) -> Any:
        return v2025_11_25.types.ListToolsResult(tools=[])

    async with raw_client_of(server, initialize=None) as peer:
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
        reply = await peer.request(request)
        # ttlMs 0 is what the spec assumes when it is absent: immediately stale.
        assert reply["result"] == {
            "tools": [],
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
        }
        call_reply = await peer.request(call(2))
        assert "ttlMs" not in call_reply["result"]


async def test_a_handshake_era_result_invalid_under_the_served_revision_is_an_error() -> None:
    server = echo_server()

    @server.handler(v2025_11_25.methods.TOOLS_LIST)
    async def list_tools(params: Any, context: RequestContext) -> Any:
        return v2025_11_25.types.ListToolsResult.model_construct()  # no tools: invalid anywhere

    async with raw_client_of(server, initialize=None) as peer:
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
        reply = await peer.request(request)
        assert reply["error"]["code"] == -32603


async def test_a_handshake_era_result_valid_there_but_not_here_is_an_error() -> None:
    """Valid for 2025-11-25 (an open model: any extra member), refused by 2026-07-28 (its
    ``resultType``, and 2026-07-28's own ``ttlMs``): the proven check catches both, while the
    same handler's plain results pass."""
    server = echo_server()
    results = iter(
        [
            v2025_11_25.types.ListToolsResult(tools=[], resultType="bogus"),
            v2025_11_25.types.ListToolsResult(tools=[], ttlMs="soon"),
            v2025_11_25.types.ListToolsResult(tools=[], _meta={"k": 1}),
        ]
    )

    @server.handler(v2025_11_25.methods.TOOLS_LIST)
    async def list_tools(params: Any, context: RequestContext) -> Any:
        return next(results)

    async with raw_client_of(server, initialize=None) as peer:
        codes = []
        for index in range(3):
            request = {
                "jsonrpc": "2.0",
                "id": index,
                "method": "tools/list",
                "params": {"_meta": META},
            }
            reply = await peer.request(request)
            codes.append(reply["error"]["code"] if "error" in reply else reply["result"]["_meta"])
        assert codes == [-32603, -32603, {"k": 1}]


async def test_one_server_serves_both_eras_at_once() -> None:
    server = echo_server()
    async with raw_client_of(server) as legacy, raw_client_of(server, initialize=None) as modern:
        old = await legacy.request(call(1, meta=None))
        new = await modern.request(call(1))
        assert "resultType" not in old["result"]
        assert new["result"]["resultType"] == "complete"


async def test_our_client_goes_stateless_in_memory_and_adds_the_fields() -> None:
    server = echo_server()
    seen: list[Any] = []

    @server.handler(v2026_07_28.methods.TOOLS_LIST)
    async def list_tools(params: Any, context: RequestContext) -> Any:
        seen.append(context.meta)
        return types.ListToolsResult(tools=[], resultType="complete", ttlMs=0, cacheScope="private")

    async with Client(server.memory_transport(), protocol_version="2026-07-28") as client:
        assert client.revision == "2026-07-28"
        assert client.server_info == types.Implementation(name="stateless-test", version="2.0")
        assert client.instructions == "be brief"
        result = await client.stub.call_tool(
            types.CallToolRequestParams(name="echo", arguments={"text": "typed"})
        )
        assert isinstance(result, types.CallToolResult)
        assert result.content[0].text == "typed" and result.resultType == "complete"
        assert await client.list_all(v2026_07_28.methods.TOOLS_LIST) == []
        assert seen[0][PROTOCOL_VERSION] == "2026-07-28"
        assert seen[0]["io.modelcontextprotocol/clientInfo"]["name"] == "mcpbind-client"
        with pytest.raises(CapabilityError, match="has no ping"):
            await client.ping()
        with pytest.raises(CapabilityError, match="prompts"):
            await client.stub.get_prompt(types.GetPromptRequestParams(name="x"))


async def test_a_stateless_server_sends_no_requests() -> None:
    # tools/list may not answer InputRequiredResult, so its handler cannot ask the client at all
    # (tools/call, prompts/get and resources/read can: tests/runtime/test_input_required.py).
    server = Server("no-requests", revisions=["2026-07-28"])
    refused: list[str] = []

    @server.handler(v2026_07_28.methods.TOOLS_LIST)
    async def list_tools(params: Any, context: RequestContext) -> Any:
        try:
            await context.peer.list_roots(types.ListRootsRequestParams())
        except CapabilityError as exc:
            refused.append(str(exc))
        return types.ListToolsResult(tools=[], resultType="complete", ttlMs=0, cacheScope="private")

    async with Client(server.memory_transport(), protocol_version="2026-07-28") as client:
        await client.list_all(v2026_07_28.methods.TOOLS_LIST)
    assert refused and "InputRequiredResult" in refused[0]


async def test_input_required_results_are_answered_by_the_clients_handlers() -> None:
    stderr: list[str] = []
    client = Client(
        StdioParameters(sys.executable, [ERAS_SERVER], stderr=stderr.append),
        protocol_version="2026-07-28",
    )
    asked: list[str] = []

    @client.handler(v2026_07_28.methods.ELICITATION_CREATE)
    async def elicit(params: Any, context: RequestContext) -> Any:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async with client:
        assert client.session.peer.era == "stateless"
        result = await client.stub.call_tool(types.CallToolRequestParams(name="whoami"))
        assert result.content[0].text == "hello Ada (state s1)"
        assert asked == ["Your name?"]
        echo = await client.stub.call_tool(
            types.CallToolRequestParams(name="echo", arguments={"text": "over stdio"})
        )
        assert echo.content[0].text == "over stdio"


async def test_input_required_without_a_handler_is_a_clear_error() -> None:
    params = StdioParameters(sys.executable, [ERAS_SERVER], stderr="devnull")
    async with Client(params, protocol_version="2026-07-28") as client:
        with pytest.raises(CapabilityError, match="elicitation/create"):
            await client.stub.call_tool(types.CallToolRequestParams(name="whoami"))


async def test_the_client_falls_back_to_initialize_with_a_legacy_server() -> None:
    params = StdioParameters(sys.executable, [ERAS_SERVER, "2025-06-18"], stderr="devnull")
    async with Client(params, protocol_version="2026-07-28", fallback=True) as client:
        assert client.revision == "2025-06-18"
        assert client.session.peer.era == "handshake"
        echo = await client.stub.call_tool(
            v2025_11_25.types.CallToolRequestParams(name="echo", arguments={"text": "legacy"})
        )
        assert echo.content[0].text == "legacy"


async def test_without_a_fallback_a_legacy_server_is_refused() -> None:
    params = StdioParameters(sys.executable, [ERAS_SERVER, "2025-11-25"], stderr="devnull")
    client = Client(params, lifecycle=StatelessClient("2026-07-28"))
    with pytest.raises(ProtocolVersionError, match="not a stateless-era server"):
        async with client:
            raise AssertionError("connected")


async def test_unsupported_version_is_retried_with_one_from_the_list() -> None:
    async with memory_pair() as (near, far), anyio.create_task_group() as tg:
        peer = RawPeer(far)
        requested: list[str] = []

        async def fake_server() -> None:
            while True:
                message = await peer.receive()
                version = message["params"]["_meta"][PROTOCOL_VERSION]
                requested.append(version)
                if len(requested) == 1:
                    error = {
                        "code": -32022,
                        "message": "Unsupported protocol version",
                        "data": {"supported": ["2026-07-28"], "requested": version},
                    }
                    await peer.send({"jsonrpc": "2.0", "id": message["id"], "error": error})
                    continue
                result = {
                    "resultType": "complete",
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": {},
                    "ttlMs": 0,
                    "cacheScope": "public",
                }
                await peer.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
                return

        tg.start_soon(fake_server)
        lifecycle = StatelessClient("2026-07-28", legacy=HandshakeClient())
        async with Client(given(near), lifecycle=lifecycle) as client:
            assert client.revision == "2026-07-28"
        assert requested == ["2026-07-28", "2026-07-28"]


async def test_the_sdk_dual_era_client_goes_stateless_with_our_server() -> None:
    params = StdioServerParameters(command=sys.executable, args=[ERAS_SERVER])
    async with mcp.Client(sdk_stdio_client(params)) as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("echo", {"text": "modern"})
        assert result.content[0].text == "modern"


async def test_the_sdk_dual_era_client_falls_back_to_initialize_with_a_legacy_server() -> None:
    params = StdioServerParameters(command=sys.executable, args=[ERAS_SERVER, "2025-11-25"])
    async with mcp.Client(sdk_stdio_client(params)) as client:
        assert client.protocol_version == "2025-11-25"
        result = await client.call_tool("echo", {"text": "legacy"})
        assert result.content[0].text == "legacy"


async def test_our_stateless_client_with_the_sdk_server() -> None:
    params = StdioParameters(sys.executable, [SDK_SERVER], stderr="devnull")
    async with Client(params, protocol_version="2026-07-28") as client:
        assert client.revision == "2026-07-28"
        assert client.server_info.name == "sdk-peer"
        echo = await client.stub.call_tool(
            types.CallToolRequestParams(name="echo", arguments={"text": "to the SDK"})
        )
        assert echo.content[0].text == "to the SDK"
        tools = await client.list_all(v2026_07_28.methods.TOOLS_LIST)
        assert {tool.name for tool in tools} == {"echo", "slow"}
        prompt = await client.stub.get_prompt(
            types.GetPromptRequestParams(name="greet", arguments={"name": "Ada"})
        )
        assert "Ada" in prompt.messages[0].content.text


DISCOVERED = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "ttlMs": 0,
    "cacheScope": "private",
}


async def test_a_result_without_result_type_is_complete() -> None:
    async with memory_pair() as (near, far), anyio.create_task_group() as tg:
        peer = RawPeer(far)

        async def fake_server() -> None:
            discover = await peer.receive()
            await peer.send({"jsonrpc": "2.0", "id": discover["id"], "result": DISCOVERED})
            call = await peer.receive()
            content = [{"type": "text", "text": "no resultType"}]
            await peer.send({"jsonrpc": "2.0", "id": call["id"], "result": {"content": content}})

        tg.start_soon(fake_server)
        async with Client(given(near), protocol_version="2026-07-28") as client:
            result = await client.stub.call_tool(types.CallToolRequestParams(name="any"))
            assert result.resultType == "complete"
            assert result.content[0].text == "no resultType"


@pytest.mark.parametrize("fallback", [False, True])
async def test_a_server_of_handshake_revisions_only_is_served_only_with_fallback(
    fallback: bool,
) -> None:
    """-32022 listing only handshake revisions: a dual-era server lacking ours."""
    async with memory_pair() as (near, far), anyio.create_task_group() as tg:
        peer = RawPeer(far)
        seen: list[str] = []

        async def fake_server() -> None:
            while True:
                message = await peer.receive()
                seen.append(message["method"])
                if message["method"] == "server/discover":
                    data = {"supported": ["2025-11-25", "2025-06-18"], "requested": "2026-07-28"}
                    error = {"code": -32022, "message": "Unsupported", "data": data}
                    await peer.send({"jsonrpc": "2.0", "id": message["id"], "error": error})
                elif message["method"] == "initialize":
                    result = {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "serverInfo": {"name": "old", "version": "1"},
                    }
                    await peer.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

        tg.start_soon(fake_server)
        client = Client(given(near), protocol_version="2026-07-28", fallback=fallback)
        if fallback:
            async with client:
                assert client.revision == "2025-11-25"
                assert client.session.peer.era == "handshake"
        else:
            with pytest.raises(ProtocolVersionError, match="none of which"):
                async with client:
                    raise AssertionError("connected")
        tg.cancel_scope.cancel()
    expected = ["server/discover", "initialize", "notifications/initialized"]
    assert seen == (expected if fallback else expected[:1])


async def test_a_pinned_revision_is_the_only_one_offered() -> None:
    client = Client(echo_server().memory_transport(), protocol_version="2026-07-28")
    assert isinstance(client.lifecycle, StatelessClient)
    assert client.lifecycle.supported == ("2026-07-28",)
    assert client.lifecycle.legacy is None
    allowed = Client(
        echo_server().memory_transport(),
        protocol_version="2026-07-28",
        revisions=["2025-06-18"],
        fallback=True,
    )
    assert isinstance(allowed.lifecycle, StatelessClient)
    assert allowed.lifecycle.legacy is not None
    assert allowed.lifecycle.legacy.supported == ("2025-06-18",)


async def test_a_session_started_in_the_stateless_era_refuses_a_request_without_meta() -> None:
    """A transport that knows the era (``ASSUME_INITIALIZED`` at 2026-07-28, as Streamable HTTP
    does for a stateless POST) gets -32602 from the core for a request lacking the fields, even
    on a dual-era server, never a handshake-era answer."""
    server = echo_server()
    async with memory_pair() as (near, far), anyio.create_task_group() as tg:
        far.extra[ASSUME_INITIALIZED] = "2026-07-28"
        tg.start_soon(server.serve, far)
        peer = RawPeer(near)
        reply = await peer.request(call(1, None))
        assert reply["error"]["code"] == -32602
        reply = await peer.request(call(2))
        assert reply["result"]["resultType"] == "complete"
        tg.cancel_scope.cancel()


async def test_a_stateless_era_handler_may_return_a_dict_without_result_type() -> None:
    """The runtime knows a complete result's ``resultType``; a handler written for 2026-07-28
    that returns plain data need not repeat it (the model requires it)."""
    server = Server("dict-results")

    @server.handler(v2026_07_28.methods.TOOLS_CALL)
    async def call_tool(params: Any, context: RequestContext) -> Any:
        return {"content": [{"type": "text", "text": "plain"}]}

    async with raw_client_of(server, initialize=None) as peer:
        reply = await peer.request(call(1))
        assert reply["result"] == {
            "content": [{"type": "text", "text": "plain"}],
            "resultType": "complete",
        }
