"""``subscriptions/listen`` (``basic/patterns/subscriptions.md``) and change notifications that
reach both eras: in memory with a hand-driven client, and over stdio with a real subprocess."""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp
import pytest
from anyio.abc import Process
from listen_server import make_server
from mcp import StdioServerParameters, stdio_client as sdk_stdio_client
from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged
from mcpbind.generated import v2026_07_28
from mcpbind.runtime import Envelope, Server, SessionOptions, memory_pair
from mcpbind.runtime.eras.stateless import CLIENT_CAPABILITIES, PROTOCOL_VERSION
from runtime_helpers import RawPeer, raw_client_of

pytestmark = pytest.mark.anyio

LISTEN_SERVER = str(Path(__file__).with_name("listen_server.py"))
META = {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}}
SUB = "io.modelcontextprotocol/subscriptionId"
ACK = "notifications/subscriptions/acknowledged"


def listen(request_id: Any, **notifications: Any) -> dict[str, Any]:
    params = {"_meta": META, "notifications": notifications}
    return {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params}


def change(request_id: Any, what: str, meta: Any = META) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "change", "arguments": {"what": what}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def until(peer: RawPeer | StdioPeer, predicate: Any) -> list[Any]:
    """Messages up to and including the first that matches."""
    seen = []
    while True:
        message = await peer.receive()
        seen.append(message)
        if predicate(message):
            return seen


async def test_the_acknowledgement_comes_first_with_the_honoured_filter() -> None:
    async with raw_client_of(make_server(), initialize=None) as peer:
        requested = {
            "toolsListChanged": True,
            "promptsListChanged": True,  # the server has no prompt list changes: left out
            "resourcesListChanged": False,
            "resourceSubscriptions": ["memo://a"],
        }
        await peer.send(listen("s1", **requested))
        ack = await peer.receive()
        assert ack["method"] == ACK
        assert ack["params"] == {
            "_meta": {SUB: "s1"},
            "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["memo://a"]},
        }
        v2026_07_28.types.SubscriptionsAcknowledgedNotificationParams.model_validate(ack["params"])
        await peer.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "s1"}}
        )


async def test_notifications_follow_their_filters_on_each_stream() -> None:
    server = make_server()
    async with raw_client_of(server, initialize=None) as peer:
        await peer.send(listen(1, toolsListChanged=True))
        assert (await peer.receive())["method"] == ACK
        await peer.send(listen(2, resourceSubscriptions=["memo://a"], resourcesListChanged=True))
        assert (await peer.receive())["params"]["_meta"] == {SUB: 2}

        for what in ("tools", "prompts", "memo://b", "memo://a", "resources"):
            await peer.send(change(10, what))
            messages = await until(peer, lambda m: m.get("id") == 10)
            notes = [(m["method"], m["params"]["_meta"][SUB]) for m in messages if "method" in m]
            result = messages[-1]["result"]["content"][0]["text"]
            expected = {
                "tools": [("notifications/tools/list_changed", 1)],
                "prompts": [],
                "memo://b": [],
                "memo://a": [("notifications/resources/updated", 2)],
                "resources": [("notifications/resources/list_changed", 2)],
            }[what]
            assert notes == expected, what
            assert result == f"sent {len(expected)}"
            if what == "memo://a":
                assert messages[0]["params"]["uri"] == "memo://a"


async def test_notifications_travel_on_the_listen_requests_stream() -> None:
    server = make_server()
    async with memory_pair() as (near, far), anyio.create_task_group() as tg:
        tg.start_soon(server.serve, far)
        await near.outgoing.send(Envelope(listen("L", toolsListChanged=True)))
        ack = await near.incoming.receive()
        assert ack.message["method"] == ACK and ack.related_id == "L"
        await server.notify_tools_changed()
        note = await near.incoming.receive()
        assert note.message["params"]["_meta"] == {SUB: "L"} and note.related_id == "L"
        tg.cancel_scope.cancel()


async def test_a_cancelled_stream_gets_nothing_more_and_shutdown_completes_the_rest() -> None:
    server = make_server()
    async with raw_client_of(server, initialize=None) as peer:
        await peer.send(listen(1, toolsListChanged=True))
        await peer.send(listen(2, toolsListChanged=True))
        await until(peer, lambda m: m["params"]["_meta"][SUB] == 2)
        await peer.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        )
        await peer.send(change(10, "tools"))
        messages = await until(peer, lambda m: m.get("id") == 10)
        assert [m["params"]["_meta"][SUB] for m in messages if "method" in m] == [2]
        assert messages[-1]["result"]["content"][0]["text"] == "sent 1"
        assert server.subscriptions.listening == 1

        await server.close_subscriptions()
        closing = await peer.receive()
        assert closing == {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {"resultType": "complete", "_meta": {SUB: 2}},
        }
        assert server.subscriptions.listening == 0
        # A stream opened after shutdown began is acknowledged and completed at once.
        await peer.send(listen(3, toolsListChanged=True))
        assert (await peer.receive())["method"] == ACK
        assert (await peer.receive())["result"]["_meta"] == {SUB: 3}


async def test_one_call_reaches_handshake_sessions_and_listeners_alike() -> None:
    server = make_server()
    async with (
        raw_client_of(server) as legacy,
        raw_client_of(server) as subscriber,
        raw_client_of(server, initialize=None) as modern,
    ):
        subscribe = {"jsonrpc": "2.0", "id": 5, "method": "resources/subscribe"}
        reply = await subscriber.request({**subscribe, "params": {"uri": "memo://a"}})
        assert reply["result"] == {}
        await modern.send(listen(1, toolsListChanged=True, resourceSubscriptions=["memo://a"]))
        assert (await modern.receive())["method"] == ACK

        assert await server.notify_tools_changed() == 3
        for peer in (legacy, subscriber):
            note = await peer.receive()
            assert note == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        assert (await modern.receive())["params"] == {"_meta": {SUB: 1}}

        # resources/updated honours resources/subscribe in the handshake era.
        assert await server.notify_resource_updated("memo://a") == 2
        assert (await subscriber.receive())["params"] == {"uri": "memo://a"}
        assert (await modern.receive())["params"]["uri"] == "memo://a"
        assert await legacy.nothing_within(0.05)
        unsubscribe = {"jsonrpc": "2.0", "id": 6, "method": "resources/unsubscribe"}
        await subscriber.request({**unsubscribe, "params": {"uri": "memo://a"}})
        assert await server.notify_resource_updated("memo://a") == 1


async def test_without_resources_subscribe_offered_subscribe_stays_unknown() -> None:
    server = Server("plain")
    async with raw_client_of(server) as peer:
        request = {"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe"}
        reply = await peer.request({**request, "params": {"uri": "memo://a"}})
        assert reply["error"]["code"] == -32601


class StdioPeer:
    """A subprocess spoken to in raw JSON lines."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.buffer = b""

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(json.dumps(message).encode() + b"\n")

    async def receive(self) -> Any:
        assert self.process.stdout is not None
        with anyio.fail_after(10):
            while b"\n" not in self.buffer:
                self.buffer += await self.process.stdout.receive()
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)


@asynccontextmanager
async def stdio_listen_server() -> AsyncIterator[StdioPeer]:
    process = await anyio.open_process([sys.executable, LISTEN_SERVER], stderr=None)
    async with process:
        try:
            yield StdioPeer(process)
        finally:
            if process.returncode is None:
                process.kill()


async def test_listen_over_stdio_until_cancelled_then_sigterm_completes_it() -> None:
    async with stdio_listen_server() as peer:
        await peer.send(listen(1, toolsListChanged=True))
        first = await peer.receive()
        assert first["method"] == ACK and first["params"]["_meta"] == {SUB: 1}
        await peer.send(change(2, "tools"))
        messages = await until(peer, lambda m: m.get("id") == 2)
        assert [m["params"] for m in messages if "method" in m] == [{"_meta": {SUB: 1}}]

        await peer.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        )
        await peer.send(listen(3, resourceSubscriptions=["memo://x"]))
        assert (await peer.receive())["params"]["_meta"] == {SUB: 3}
        await peer.send(change(4, "tools"))
        messages = await until(peer, lambda m: m.get("id") == 4)
        assert messages == [
            {
                "jsonrpc": "2.0",
                "id": 4,
                "result": {
                    "content": [{"type": "text", "text": "sent 0"}],
                    "resultType": "complete",
                },
            }
        ]
        await peer.send(change(5, "memo://x"))
        messages = await until(peer, lambda m: m.get("id") == 5)
        assert messages[0]["params"] == {"uri": "memo://x", "_meta": {SUB: 3}}

        peer.process.send_signal(signal.SIGTERM)
        closing = await peer.receive()
        assert closing == {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {"resultType": "complete", "_meta": {SUB: 3}},
        }
        with anyio.fail_after(10):
            assert await peer.process.wait() == 0


async def test_end_of_input_ends_the_streams_with_their_response_over_stdio() -> None:
    # Without this the stream would hold the server for its drain time, then vanish unanswered.
    async with stdio_listen_server() as peer:
        await peer.send(listen(1, toolsListChanged=True))
        assert (await peer.receive())["method"] == ACK
        assert peer.process.stdin is not None
        await peer.process.stdin.aclose()
        closing = await peer.receive()
        assert closing["id"] == 1 and closing["result"]["resultType"] == "complete"
        with anyio.fail_after(10):
            assert await peer.process.wait() == 0


async def test_a_session_keeps_half_its_handler_slots_for_requests() -> None:
    server = make_server()
    server.options = SessionOptions(max_concurrent_handlers=4)
    async with raw_client_of(server, initialize=None) as peer:
        for stream in (1, 2):
            await peer.send(listen(stream, toolsListChanged=True))
            assert (await peer.receive())["method"] == ACK
        refused = await peer.request(listen(3, toolsListChanged=True))
        assert refused["error"]["code"] == -32600
        assert "2 subscriptions/listen streams" in refused["error"]["message"]
        reply = await peer.request(change(4, "tools"))  # requests still have their slots
        assert reply["result"]["content"][0]["text"] == "sent 2"


async def test_the_sdk_client_listens_to_our_server_over_stdio() -> None:
    params = StdioServerParameters(command=sys.executable, args=[LISTEN_SERVER])
    async with mcp.Client(sdk_stdio_client(params)) as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(
            tools_list_changed=True, prompts_list_changed=True, resource_subscriptions=["memo://a"]
        ) as sub:
            # No prompt list changes on this server: the acknowledgement leaves them out.
            assert sub.honored.tools_list_changed is True
            assert sub.honored.prompts_list_changed is None
            assert sub.honored.resource_subscriptions == ["memo://a"]
            await client.call_tool("change", {"what": "tools"})
            await client.call_tool("change", {"what": "memo://a"})
            events = [await sub.__anext__(), await sub.__anext__()]
            assert events == [ToolsListChanged(), ResourceUpdated(uri="memo://a")]
            # A graceful end (what shutdown does) ends the SDK's loop, not as a lost stream.
            await client.call_tool("change", {"what": "close"})
            assert [event async for event in sub] == []
