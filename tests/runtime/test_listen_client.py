"""``client.listen()``: ``subscriptions/listen`` as an async iterator, in memory against a
hand-driven server (the acknowledgement, demultiplexing by subscription id, graceful and abrupt
ends, ``notifications/cancelled`` on leaving) and over stdio against the official Python SDK."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcpbind.generated import v2026_07_28
from mcpbind.runtime import CapabilityError, Client, McpError, StdioParameters, memory_pair
from runtime_helpers import RawPeer, given

pytestmark = pytest.mark.anyio

types = v2026_07_28.types
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
SDK_SERVER = str(Path(__file__).parent / "http" / "sdk_http_server.py")
DISCOVERED = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {"listChanged": True}, "resources": {"subscribe": True}},
    "ttlMs": 0,
    "cacheScope": "private",
}


def note(method: str, subscription: Any, **params: Any) -> dict[str, Any]:
    meta = {SUBSCRIPTION_ID: subscription}
    return {"jsonrpc": "2.0", "method": method, "params": {"_meta": meta, **params}}


async def open_listen(peer: RawPeer) -> dict[str, Any]:
    """Answer the probe, then return the listen request."""
    discover = await peer.receive()
    await peer.send({"jsonrpc": "2.0", "id": discover["id"], "result": DISCOVERED})
    listen: dict[str, Any] = await peer.receive()
    assert listen["method"] == "subscriptions/listen"
    return listen


async def test_notifications_are_demultiplexed_and_leaving_cancels() -> None:
    async with memory_pair() as (near, far), anyio.create_task_group() as tg:
        peer = RawPeer(far)
        cancelled: list[Any] = []

        async def server() -> None:
            listen = await open_listen(peer)
            sid = listen["id"]
            assert listen["params"]["notifications"] == {
                "toolsListChanged": True,
                "resourceSubscriptions": ["file:///a"],
            }
            assert listen["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
            agreed = {"toolsListChanged": True}
            await peer.send(
                note("notifications/subscriptions/acknowledged", sid, notifications=agreed)
            )
            # Another subscription's notification: not this one's to deliver.
            await peer.send(note("notifications/resources/updated", sid + 1000, uri="file:///a"))
            await peer.send(note("notifications/tools/list_changed", sid))
            message = await peer.receive()
            cancelled.append((message["method"], message["params"]["requestId"] == sid))

        tg.start_soon(server)
        async with Client(given(near), protocol_version="2026-07-28") as client:
            async with client.listen(
                tools_list_changed=True, resource_subscriptions=["file:///a"]
            ) as subscription:
                assert subscription.acknowledged == {"toolsListChanged": True}
                assert subscription.refused == ["resourceSubscriptions:file:///a"]
                async for notification in subscription:
                    assert notification.method == "notifications/tools/list_changed"
                    assert notification.params.meta is not None
                    break
            with anyio.fail_after(5):
                while not cancelled:
                    await anyio.sleep(0.01)
        assert cancelled == [("notifications/cancelled", True)]


@pytest.mark.parametrize("graceful", [True, False])
async def test_the_server_ending_the_subscription_ends_the_iteration(graceful: bool) -> None:
    async with memory_pair() as (near, far), anyio.create_task_group() as tg:
        peer = RawPeer(far)

        async def server() -> None:
            listen = await open_listen(peer)
            sid = listen["id"]
            agreed = {"promptsListChanged": True}
            await peer.send(
                note("notifications/subscriptions/acknowledged", sid, notifications=agreed)
            )
            await peer.send(note("notifications/prompts/list_changed", sid))
            if graceful:
                done = {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: sid}}
                await peer.send({"jsonrpc": "2.0", "id": sid, "result": done})
            else:
                error = {"code": -32603, "message": "shutting down"}
                await peer.send({"jsonrpc": "2.0", "id": sid, "error": error})

        tg.start_soon(server)
        async with Client(given(near), protocol_version="2026-07-28") as client:
            seen: list[str] = []
            async with client.listen(prompts_list_changed=True) as subscription:
                if graceful:
                    async for notification in subscription:
                        seen.append(notification.method)
                else:
                    with pytest.raises(McpError, match="shutting down"):
                        async for notification in subscription:
                            seen.append(notification.method)
            assert seen == ["notifications/prompts/list_changed"]


async def test_a_refused_listen_raises_its_error() -> None:
    async with memory_pair() as (near, far), anyio.create_task_group() as tg:
        peer = RawPeer(far)

        async def server() -> None:
            listen = await open_listen(peer)
            error = {"code": -32602, "message": "no such filter"}
            await peer.send({"jsonrpc": "2.0", "id": listen["id"], "error": error})

        tg.start_soon(server)
        async with Client(given(near), protocol_version="2026-07-28") as client:
            with pytest.raises(McpError, match="no such filter"):
                async with client.listen(tools_list_changed=True):
                    raise AssertionError("opened")


async def test_a_handshake_era_client_has_no_listen() -> None:
    async with memory_pair() as (near, far), anyio.create_task_group() as tg:
        peer = RawPeer(far)

        async def server() -> None:
            init = await peer.receive()
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "serverInfo": {"name": "old", "version": "1"},
            }
            await peer.send({"jsonrpc": "2.0", "id": init["id"], "result": result})
            await peer.receive()

        tg.start_soon(server)
        async with Client(given(near)) as client:
            with pytest.raises(CapabilityError, match="no subscriptions/listen"):
                async with client.listen(tools_list_changed=True):
                    raise AssertionError("opened")


async def test_listen_over_stdio_with_the_sdk_server() -> None:
    params = StdioParameters(sys.executable, [SDK_SERVER, "--stdio"], stderr="devnull")
    async with Client(params, protocol_version="2026-07-28") as client:
        async with client.listen(resource_subscriptions=["memo://readme"]) as updates:
            assert updates.acknowledged == {"resourceSubscriptions": ["memo://readme"]}
            touched = await client.stub.call_tool(
                types.CallToolRequestParams(name="touch", arguments={"uri": "memo://readme"})
            )
            assert touched.content[0].text == "touched"
            async for notification in updates:
                assert notification.method == "notifications/resources/updated"
                assert notification.params.uri == "memo://readme"
                break
        echo = await client.stub.call_tool(
            types.CallToolRequestParams(name="echo", arguments={"text": "still here"})
        )
        assert echo.content[0].text == "still here"
