"""The handshake lifecycle, capabilities, typed stubs and pagination, in memory."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcpbind import generated
from mcpbind.generated import v2024_11_05, v2025_11_25
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import (
    HANDSHAKE_REVISIONS,
    CapabilityError,
    Client,
    ConnectionClosedError,
    HandshakeClient,
    HandshakeServer,
    OutgoingCall,
    ProtocolVersionError,
    RequestContext,
    Server,
    StatelessClient,
    StatelessServer,
    memory_pair,
)
from runtime_helpers import RawPeer, given, raw_client_of

from examples.server import server as example_server

pytestmark = pytest.mark.anyio


def test_handshake_revisions_are_the_generated_ones() -> None:
    assert (
        tuple(r for r in generated.REVISIONS if generated.ERAS[r] == "handshake")
        == HANDSHAKE_REVISIONS
    )
    assert "2026-07-28" not in HANDSHAKE_REVISIONS


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
async def test_every_revision_negotiates_and_types_results(revision: str) -> None:
    bindings = generated.load(revision)
    async with Client(example_server.memory_transport(), protocol_version=revision) as client:
        assert client.revision == revision
        assert isinstance(client.stub, bindings.client.ClientStub)
        result = await client.stub.call_tool(
            bindings.types.CallToolRequestParams(name="echo", arguments={"text": "hi"})
        )
        assert type(result) is bindings.types.CallToolResult
        assert result.content[0].text == "hi"
        prompt = await client.stub.get_prompt(
            bindings.types.GetPromptRequestParams(name="greet", arguments={"name": "Ada"})
        )
        assert "Ada" in prompt.messages[0].content.text
        assert client.server_info.name == "mcpbind-example"
        assert client.instructions is not None


async def test_server_answers_its_newest_when_it_lacks_the_requested() -> None:
    server = Server("old", revisions=["2024-11-05", "2025-03-26"])
    async with Client(server.memory_transport(), protocol_version="2025-11-25") as client:
        assert client.revision == "2025-03-26"


async def test_client_disconnects_on_a_revision_it_does_not_have() -> None:
    async with memory_pair() as (near, far):
        peer = RawPeer(far)

        async def answer() -> None:
            request = await peer.receive()
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {
                        "protocolVersion": "1999-01-01",
                        "capabilities": {},
                        "serverInfo": {"name": "x", "version": "0"},
                    },
                }
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(answer)
            client = Client(given(near))
            with pytest.raises(ProtocolVersionError, match="1999-01-01"):
                await client.__aenter__()
        with pytest.raises(ConnectionClosedError):
            await client.ping()


async def test_client_restricted_to_one_revision() -> None:
    server = Server("new", revisions=["2025-11-25"])
    with pytest.raises(ProtocolVersionError):
        async with Client(
            server.memory_transport(), protocol_version="2024-11-05", revisions=["2024-11-05"]
        ):
            pass


async def test_requests_before_initialize_are_refused_but_ping_is_answered() -> None:
    async with raw_client_of(example_server, initialize=None) as peer:
        reply = await peer.request({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert reply["error"]["code"] == -32600
        assert "initialize" in reply["error"]["message"]
        reply = await peer.request({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert reply["result"] == {}


async def test_second_initialize_is_refused() -> None:
    async with raw_client_of(example_server) as peer:
        reply = await peer.request(
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "x", "version": "0"},
                },
            }
        )
        assert reply["error"]["code"] == -32600


async def test_unknown_requested_revision_gets_the_newest() -> None:
    async with raw_client_of(example_server, initialize=None) as peer:
        reply = await peer.request(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2099-01-01",
                    "capabilities": {},
                    "clientInfo": {"name": "x", "version": "0"},
                },
            }
        )
        assert reply["result"]["protocolVersion"] == HANDSHAKE_REVISIONS[-1]


def tools_only_server() -> Server:
    server = Server("tools-only")

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        try:
            await context.peer.create_message(
                types.CreateMessageRequestParams(
                    messages=[
                        types.SamplingMessage(role="user", content=types.TextContent(text="q"))
                    ],
                    maxTokens=5,
                )
            )
        except CapabilityError as exc:
            return types.CallToolResult(
                content=[types.TextContent(text=f"refused: {exc}")], isError=True
            )
        return types.CallToolResult(content=[types.TextContent(text="sampled")])

    return server


async def test_capabilities_are_checked_locally_on_both_sides() -> None:
    async with Client(tools_only_server().memory_transport()) as client:
        assert client.server_capabilities == {"tools": {}}
        with pytest.raises(CapabilityError, match="completions"):
            await client.stub.complete(
                types.CompleteRequestParams(
                    ref=types.PromptReference(name="p", type="ref/prompt"),
                    argument=types.CompleteRequestParamsArgument(name="a", value="b"),
                )
            )
        result = await client.stub.call_tool(types.CallToolRequestParams(name="t"))
        assert result.isError is True
        assert "sampling" in result.content[0].text


async def test_client_capabilities_follow_its_handlers() -> None:
    server = tools_only_server()
    client = Client(server.memory_transport())

    @client.handler(methods.SAMPLING_CREATEMESSAGE)
    async def sample(
        params: types.CreateMessageRequestParams, context: RequestContext
    ) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", model="m", content=types.TextContent(text="a")
        )

    async with client:
        session = next(iter(server.sessions))
        assert session.peer.capabilities == {"sampling": {}}
        result = await client.stub.call_tool(types.CallToolRequestParams(name="t"))
        assert result.content[0].text == "sampled"


def test_server_capabilities_follow_handlers_and_schema_shapes() -> None:
    from mcpbind.generated.support import Direction
    from mcpbind.runtime.core.bindings import Bindings

    server = Server("caps", capabilities={"resources": {"listChanged": True}})

    async def nothing(params: Any, context: RequestContext) -> Any:
        return {}

    server.add_handler(methods.RESOURCES_SUBSCRIBE, nothing)
    server.add_handler(methods.RESOURCES_READ, nothing)
    server.add_handler(methods.TASKS_LIST, nothing)
    server.add_handler(methods.LOGGING_SETLEVEL, nothing)
    caps = server.capabilities_for(Bindings.load("2025-11-25", Direction.SERVER_TO_CLIENT))
    assert caps == {
        "resources": {"subscribe": True, "listChanged": True},
        "tasks": {"list": {}},
        "logging": {},
    }


def test_a_handler_for_the_wrong_side_is_refused() -> None:
    server = Server("wrong")

    async def nothing(params: Any, context: RequestContext) -> Any:
        return {}

    with pytest.raises(ValueError, match="sampling/createMessage"):
        server.add_handler(methods.SAMPLING_CREATEMESSAGE, nothing)


async def test_list_helpers_walk_every_page() -> None:
    async with Client(example_server.memory_transport()) as client:
        pages = [page async for page in client.pages(methods.TOOLS_LIST)]
        assert len(pages) == 2
        names = [tool.name for tool in await client.list_all(methods.TOOLS_LIST)]
        assert names[:3] == ["echo", "add", "slow"] and "roots" in names


async def test_stub_as_checks_the_revision() -> None:
    async with Client(example_server.memory_transport(), protocol_version="2024-11-05") as client:
        stub = client.stub_as(v2024_11_05.client.ClientStub)
        assert (await stub.list_prompts()).prompts[0].name == "greet"
        with pytest.raises(TypeError):
            client.stub_as(v2025_11_25.client.ClientStub)


async def test_handlers_from_a_protocol_object() -> None:
    class Handlers:
        async def list_prompts(
            self, params: types.PaginatedRequestParams | None, context: RequestContext
        ) -> types.ListPromptsResult:
            return types.ListPromptsResult(prompts=[types.Prompt(name="from-object")])

    server = Server("protocol")
    assert server.register(Handlers(), "2025-11-25") == ["prompts/list"]
    async with Client(server.memory_transport()) as client:
        assert client.server_capabilities == {"prompts": {}}
        assert (await client.stub.list_prompts()).prompts[0].name == "from-object"


class NoHandshakeServer:
    """A lifecycle with no opening exchange at all: every request is served under one revision.

    Stands in for the stateless era, to show a lifecycle is an addition to the runtime.
    """

    def gate(self, server: Server, session: Any, method: str, params: dict[str, Any] | None) -> Any:
        session.peer.phase = "operating"
        return None

    def assume_initialized(self, session: Any, revision: str) -> None:
        session.peer.phase = "operating"

    def on_notification(
        self, server: Server, session: Any, method: str, params: dict[str, Any] | None
    ) -> None:
        return None

    def prepare_call(self, server: Server, call: OutgoingCall) -> None:
        return None


class NoHandshakeClient:
    protocol_version = "2025-06-18"

    def __init__(self) -> None:
        self.calls: list[tuple[str, OutgoingCall, Any]] = []

    async def open(self, client: Client, session: Any) -> None:
        session.peer.phase = "operating"
        session.peer.capabilities = {"tools": {}}

    def prepare_call(self, client: Client, call: OutgoingCall) -> None:
        self.calls.append(("prepare", call, call.raw))
        call.body = {**(call.body or {}), "_meta": {"io.example/sent-by": "lifecycle"}}

    async def finish_call(self, client: Client, call: OutgoingCall) -> Any:
        self.calls.append(("finish", call, call.raw))
        return {**call.raw, "structuredContent": {"finished": True}}


async def test_a_lifecycle_is_pluggable_on_both_sides() -> None:
    server = Server("plain", lifecycle=NoHandshakeServer(), revisions=["2025-06-18"])
    seen: list[Any] = []

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        seen.append(context.meta)
        return types.CallToolResult(content=[types.TextContent(text=params.name)])

    lifecycle = NoHandshakeClient()
    async with Client(server.memory_transport(), lifecycle=lifecycle) as client:
        assert client.revision == "2025-06-18"
        result = await client.stub.call_tool(
            generated.load("2025-06-18").types.CallToolRequestParams(name="t")
        )
        assert result.content[0].text == "t"
        assert result.structuredContent == {"finished": True}  # what finish_call returned
    assert seen == [{"io.example/sent-by": "lifecycle"}]
    # One object for the whole call: prepared before the answer, finished with it.
    (first, call, before), (second, same, answer) = lifecycle.calls
    assert (first, second) == ("prepare", "finish") and same is call
    assert before is None and answer["content"] == [{"type": "text", "text": "t"}]
    assert call.spec.method == "tools/call" and call.session is client.session
    assert call.body == {"name": "t", "_meta": {"io.example/sent-by": "lifecycle"}}
    assert not hasattr(call, "__dict__")  # slotted: no per-call dict


async def test_server_requests_back_to_the_client_and_notifications() -> None:
    client = Client(example_server.memory_transport())
    logs: list[Any] = []

    @client.handler(methods.ELICITATION_CREATE)
    async def elicit(
        params: types.ElicitRequestParams, context: RequestContext
    ) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    @client.handler(methods.ROOTS_LIST)
    async def roots(params: types.RequestParams, context: RequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(
            roots=[types.Root(uri="file:///a"), types.Root(uri="file:///b")]
        )

    @client.notification_handler(methods.NOTIFICATIONS_MESSAGE)
    async def on_log(params: types.LoggingMessageNotificationParams, session: Any) -> None:
        logs.append((params.level, params.data))

    async with client:
        stub = client.stub_as(v2025_11_25.client.ClientStub)
        asked = await stub.call_tool(types.CallToolRequestParams(name="ask_user"))
        assert asked.content[0].text == "hello, Ada"
        listed = await stub.call_tool(types.CallToolRequestParams(name="roots"))
        assert listed.content[0].text == "file:///a, file:///b"
        await stub.set_level(types.SetLevelRequestParams(level="info"))
        await stub.call_tool(
            types.CallToolRequestParams(name="slow", arguments={"steps": 1, "delay": 0})
        )
        with anyio.fail_after(2):
            while ("info", "slow finished 1 steps") not in logs:
                await anyio.sleep(0.01)
        sampling = await stub.call_tool(types.CallToolRequestParams(name="ask_llm"))
        assert sampling.isError is True
        assert "did not advertise the 'sampling' capability" in sampling.content[0].text


async def test_the_server_can_ping_the_client() -> None:
    server = Server("pinger")

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        await context.peer_as(v2025_11_25.client.ServerStub).ping()
        with pytest.raises(TypeError):
            context.peer_as(v2024_11_05.client.ServerStub)
        return types.CallToolResult(content=[types.TextContent(text="pong")])

    async with Client(server.memory_transport()) as client:
        result = await client.stub.call_tool(types.CallToolRequestParams(name="p"))
        assert result.content[0].text == "pong"


async def test_a_rejected_initialize_can_be_retried() -> None:
    async with raw_client_of(example_server, initialize=None) as peer:
        bad = await peer.request(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": "2025-11-25"},
            }
        )
        assert bad["error"]["code"] == -32602
        good = await peer.request(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "x", "version": "0"},
                },
            }
        )
        assert good["result"]["serverInfo"]["name"] == "mcpbind-example"


def test_each_lifecycle_refuses_revisions_of_the_other_era() -> None:
    with pytest.raises(ProtocolVersionError, match="stateless"):
        HandshakeClient("2026-07-28")
    with pytest.raises(ProtocolVersionError, match="stateless"):
        HandshakeServer(["2025-11-25", "2026-07-28"])
    with pytest.raises(ProtocolVersionError, match="not a stateless-era revision"):
        StatelessClient("2025-11-25")
    with pytest.raises(ProtocolVersionError, match="not a stateless-era revision"):
        StatelessServer(["2025-11-25"])
    with pytest.raises(ProtocolVersionError, match="no bindings"):
        Server("x", revisions=["1999-01-01"])
    both = Server("x", revisions=["2025-11-25", "2026-07-28"])
    assert isinstance(both.lifecycle, StatelessServer)
    assert both.lifecycle.legacy is not None and both.lifecycle.legacy.supported == ("2025-11-25",)
    assert isinstance(Server("y", revisions=["2025-06-18"]).lifecycle, HandshakeServer)
    client = Client(example_server.memory_transport(), protocol_version="2026-07-28")
    assert isinstance(client.lifecycle, StatelessClient) and client.lifecycle.legacy is None
    client = Client(example_server.memory_transport(), protocol_version="2026-07-28", fallback=True)
    assert isinstance(client.lifecycle, StatelessClient) and client.lifecycle.legacy is not None


async def test_broadcast_reaches_every_operating_session() -> None:
    server = Server("broadcaster", capabilities={"tools": {"listChanged": True}})
    heard: list[str] = []

    def listening_client() -> Client:
        client = Client(server.memory_transport())

        @client.notification_handler(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)
        async def changed(params: Any, session: Any) -> None:
            heard.append(session.bindings.revision)

        return client

    async with listening_client(), listening_client():
        await anyio.sleep(0.05)
        assert await server.broadcast(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED) == 2
        with anyio.fail_after(2):
            while len(heard) < 2:
                await anyio.sleep(0.01)
    assert heard == ["2025-11-25", "2025-11-25"]
