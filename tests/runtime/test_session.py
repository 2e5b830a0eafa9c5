"""Session behaviour in memory: correlation, timeouts, cancellation, progress, errors, limits."""

from __future__ import annotations

import gc
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import (
    Client,
    ConnectionClosedError,
    Malformed,
    McpError,
    RequestContext,
    RequestTimeoutError,
    Server,
    SessionOptions,
    memory_pair,
)
from runtime_helpers import RawPeer, given, raw_client_of

pytestmark = pytest.mark.anyio


class Probe:
    """What the test server's handlers saw."""

    def __init__(self) -> None:
        self.cancelled = anyio.Event()
        self.running = 0
        self.max_running = 0
        self.release = anyio.Event()


def make_server(probe: Probe, options: SessionOptions | None = None) -> Server:
    server = Server("session-test", options=options)

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        args = params.arguments or {}
        if params.name == "echo":
            return types.CallToolResult(content=[types.TextContent(text=str(args.get("text")))])
        if params.name == "sleep":
            try:
                await anyio.sleep(float(args.get("seconds", 10)))
            except anyio.get_cancelled_exc_class():
                probe.cancelled.set()
                raise
            return types.CallToolResult(content=[types.TextContent(text="slept")])
        if params.name == "progress":
            for step in range(int(args["steps"])):
                await anyio.sleep(float(args["every"]))
                await context.report_progress(step + 1, args["steps"], f"step {step + 1}")
            return types.CallToolResult(content=[types.TextContent(text="done")])
        if params.name == "block":
            probe.running += 1
            probe.max_running = max(probe.max_running, probe.running)
            await probe.release.wait()
            probe.running -= 1
            return types.CallToolResult(content=[types.TextContent(text="released")])
        if params.name == "boom":
            raise RuntimeError("secret internal detail")
        if params.name == "custom":
            raise McpError(-32042, "custom failure", {"why": "because"})
        raise McpError(-32602, "unknown tool")

    return server


def call(name: str, **arguments: Any) -> types.CallToolRequestParams:
    return types.CallToolRequestParams(name=name, arguments=arguments)


async def test_concurrent_requests_are_correlated() -> None:
    server = make_server(Probe())
    async with Client(server.memory_transport()) as client:
        results: dict[int, str] = {}

        async def one(i: int) -> None:
            result = await client.stub.call_tool(call("echo", text=f"n{i}"))
            results[i] = result.content[0].text

        async with anyio.create_task_group() as tg:
            for i in range(50):
                tg.start_soon(one, i)
    assert results == {i: f"n{i}" for i in range(50)}


async def test_timeout_cancels_on_both_sides() -> None:
    probe = Probe()
    server = make_server(probe)
    async with Client(server.memory_transport()) as client:
        start = anyio.current_time()
        with pytest.raises(RequestTimeoutError) as caught:
            await client.stub.call_tool(call("sleep", seconds=10), {"timeout": 0.2})
        assert anyio.current_time() - start < 2
        assert "tools/call" in str(caught.value)
        with anyio.fail_after(2):
            await probe.cancelled.wait()
        assert (await client.stub.call_tool(call("echo", text="still up"))).content[
            0
        ].text == "still up"


async def test_session_default_timeout_applies() -> None:
    server = make_server(Probe())
    client = Client(server.memory_transport(), options=SessionOptions(request_timeout=0.2))
    async with client:
        with pytest.raises(RequestTimeoutError):
            await client.stub.call_tool(call("sleep", seconds=5))


async def test_progress_resets_the_timeout_and_reaches_the_callback() -> None:
    server = make_server(Probe())
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with Client(server.memory_transport()) as client:
        result = await client.stub.call_tool(
            call("progress", steps=6, every=0.1), {"timeout": 0.35, "progress": on_progress}
        )
    assert result.content[0].text == "done"
    assert [s[0] for s in seen] == [1, 2, 3, 4, 5, 6]
    assert seen[0][1:] == (6, "step 1")


async def test_progress_cannot_extend_past_the_maximum() -> None:
    server = make_server(Probe())

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        return None

    options = SessionOptions(max_request_timeout=0.5)
    async with Client(server.memory_transport(), options=options) as client:
        with pytest.raises(RequestTimeoutError):
            await client.stub.call_tool(
                call("progress", steps=20, every=0.1), {"timeout": 0.3, "progress": on_progress}
            )


async def test_cancelling_the_caller_cancels_the_handler() -> None:
    probe = Probe()
    server = make_server(probe)
    async with Client(server.memory_transport()) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.stub.call_tool, call("sleep", seconds=10))
            await anyio.sleep(0.1)
            tg.cancel_scope.cancel()
        with anyio.fail_after(2):
            await probe.cancelled.wait()


async def test_incoming_cancel_stops_the_handler_and_sends_no_response() -> None:
    probe = Probe()
    async with raw_client_of(make_server(probe)) as peer:
        await peer.send(
            {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "sleep"}}
        )
        await anyio.sleep(0.05)
        await peer.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
        )
        with anyio.fail_after(2):
            await probe.cancelled.wait()
        assert await peer.nothing_within(0.3)
        reply = await peer.request({"jsonrpc": "2.0", "id": 8, "method": "ping"})
        assert reply == {"jsonrpc": "2.0", "id": 8, "result": {}}


async def test_slow_handler_does_not_block_ping() -> None:
    async with raw_client_of(make_server(Probe())) as peer:
        await peer.send(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "sleep"}}
        )
        start = anyio.current_time()
        reply = await peer.request({"jsonrpc": "2.0", "id": 2, "method": "ping"}, timeout=1)
        assert reply["result"] == {}
        assert anyio.current_time() - start < 0.5


async def test_handlers_in_flight_are_bounded() -> None:
    probe = Probe()
    server = make_server(probe, SessionOptions(max_concurrent_handlers=2))
    async with Client(server.memory_transport()) as client, anyio.create_task_group() as tg:
        for _ in range(6):
            tg.start_soon(client.stub.call_tool, call("block"))
        await anyio.sleep(0.2)
        assert probe.max_running == 2
        probe.release.set()
    assert probe.running == 0


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, -32600),
        ({"jsonrpc": "2.0", "id": 1}, -32600),
        ({"jsonrpc": "2.0", "id": 1, "method": "no/such/method"}, -32601),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}}, -32602),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": [1, 2]}, -32602),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}, -32602),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "boom"}}, -32603),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "custom"}}, -32042),
    ],
)
async def test_error_codes(message: dict[str, Any], code: int) -> None:
    async with raw_client_of(make_server(Probe())) as peer:
        reply = await peer.request(message)
        assert reply["jsonrpc"] == "2.0"
        assert reply["error"]["code"] == code
        if code == -32603:
            assert "secret" not in str(reply) and "Traceback" not in str(reply)
        if code == -32042:
            assert reply["error"] == {
                "code": -32042,
                "message": "custom failure",
                "data": {"why": "because"},
            }


async def test_validation_errors_are_in_data() -> None:
    async with raw_client_of(make_server(Probe())) as peer:
        reply = await peer.request(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}}
        )
    errors = reply["error"]["data"]
    assert reply["error"]["code"] == -32602
    assert any(error["loc"] == ["name"] or error["loc"] == ("name",) for error in errors)


async def test_parse_error_and_null_ids() -> None:
    async with raw_client_of(make_server(Probe())) as peer:
        await peer.send(Malformed("not json"))
        reply = await peer.receive()
        assert reply["error"]["code"] == -32700 and reply["id"] is None
        reply = await peer.request({"jsonrpc": "2.0", "id": None, "method": "ping"})
        assert reply["error"]["code"] == -32600 and reply["id"] is None
        await peer.send({"jsonrpc": "2.0", "id": 1.5, "method": "ping"})
        reply = await peer.receive()
        assert reply["error"]["code"] == -32600 and reply["id"] is None


async def test_unknown_notifications_are_ignored() -> None:
    async with raw_client_of(make_server(Probe())) as peer:
        await peer.send({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {"x": 1}})
        await peer.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}
        )
        assert await peer.nothing_within(0.2)
        assert (await peer.request({"jsonrpc": "2.0", "id": 3, "method": "ping"}))["result"] == {}


@asynccontextmanager
async def client_with_raw_server(
    options: SessionOptions | None = None,
) -> AsyncIterator[tuple[Client, RawPeer]]:
    """Our client against a hand-driven server that answers ``initialize`` and nothing else."""
    async with memory_pair() as (near, far):
        peer = RawPeer(far)

        async def answer_initialize() -> None:
            request = await peer.receive()
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {
                        "protocolVersion": request["params"]["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "raw", "version": "0"},
                    },
                }
            )
            assert (await peer.receive())["method"] == "notifications/initialized"

        async with anyio.create_task_group() as tg:
            tg.start_soon(answer_initialize)
            async with Client(given(near), options=options) as client:
                yield client, peer


async def test_unknown_response_id_is_logged_and_dropped(caplog: pytest.LogCaptureFixture) -> None:
    async with client_with_raw_server() as (client, peer):
        with caplog.at_level(logging.WARNING, logger="mcpbind.runtime"):
            await peer.send({"jsonrpc": "2.0", "id": 12345, "result": {}})
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.ping)
                request = await peer.receive()
                await peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {}})
        assert any("unknown id 12345" in record.getMessage() for record in caplog.records)


async def test_request_ids_are_unique() -> None:
    async with client_with_raw_server() as (client, peer):
        ids = []
        async with anyio.create_task_group() as tg:
            for _ in range(20):
                tg.start_soon(client.ping)
            for _ in range(20):
                request = await peer.receive()
                ids.append(request["id"])
            for request_id in ids:
                await peer.send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        assert len(set(ids)) == 20


async def test_timeout_sends_cancelled_to_the_peer(caplog: pytest.LogCaptureFixture) -> None:
    async with client_with_raw_server() as (client, peer):
        with pytest.raises(RequestTimeoutError):
            await client.stub.call_tool(call("x"), {"timeout": 0.1})
        request = await peer.receive()
        cancel = await peer.receive()
        assert cancel["method"] == "notifications/cancelled"
        assert cancel["params"]["requestId"] == request["id"]
        with caplog.at_level(logging.WARNING, logger="mcpbind.runtime"):
            # A late answer to the cancelled request is expected: dropped without a warning.
            await peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"content": []}})
            await anyio.sleep(0.05)
        assert not [r for r in caplog.records if "unknown id" in r.getMessage()]


async def test_unanswered_keepalive_fails_the_session() -> None:
    options = SessionOptions(keepalive_interval=0.1, keepalive_timeout=0.2)
    async with client_with_raw_server(options) as (client, peer):
        with pytest.raises(ConnectionClosedError, match="keep-alive"):
            with anyio.fail_after(3):
                await client.stub.call_tool(call("never answered"))
        assert (await peer.receive())["method"] == "tools/call"


async def test_server_ends_when_connection_closes() -> None:
    server = make_server(Probe())
    async with memory_pair() as (near, far):
        with anyio.fail_after(2):
            async with anyio.create_task_group() as tg:
                tg.start_soon(server.serve, far)
                await anyio.sleep(0.05)
                assert len(server.sessions) == 1
                near.outgoing.close()
    assert server.sessions == set()


async def test_connection_lost_during_a_keepalive_ping_ends_the_session_cleanly() -> None:
    options = SessionOptions(keepalive_interval=0.05, keepalive_timeout=5)
    async with client_with_raw_server(options) as (client, peer):
        assert (await peer.receive())["method"] == "ping"
        peer.connection.outgoing.close()
        with anyio.fail_after(2):
            await client.session.wait_closed()
        with pytest.raises(ConnectionClosedError):
            await client.ping()


async def test_a_request_cancelled_while_waiting_for_a_slot_frees_nothing_it_never_had() -> None:
    probe = Probe()
    server = make_server(probe, SessionOptions(max_concurrent_handlers=1))
    async with raw_client_of(server) as peer:
        block = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "block"}}
        await peer.send({**block, "id": 1})
        await peer.send({**block, "id": 2})  # waits for the only slot
        await peer.send({**block, "id": 3})  # waits behind it
        await anyio.sleep(0.1)
        assert probe.running == 1
        await peer.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
        )
        await anyio.sleep(0.05)
        probe.release.set()
        replies = [await peer.receive(), await peer.receive()]
        assert sorted(reply["id"] for reply in replies) == [1, 3]
        assert probe.max_running == 1
        assert await peer.nothing_within(0.2)


async def test_deadlines_of_answered_requests_do_not_pile_up() -> None:
    server = make_server(Probe())
    async with Client(server.memory_transport()) as client:
        for _ in range(500):
            await client.ping()
        assert len(client.session._deadlines) <= 2 + 64
        with pytest.raises(RequestTimeoutError):
            await client.stub.call_tool(call("sleep", seconds=5), {"timeout": 0.1})


async def test_past_the_pending_bound_requests_are_refused_at_once() -> None:
    probe = Probe()
    server = make_server(probe, SessionOptions(max_concurrent_handlers=2, max_pending_requests=4))
    async with raw_client_of(server) as peer:
        for i in range(10):
            await peer.send(
                {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "block"}}
            )
        refused = [await peer.receive() for _ in range(6)]
        assert [reply["id"] for reply in refused] == list(range(4, 10))
        assert {reply["error"]["code"] for reply in refused} == {-31503}
        assert refused[0]["error"]["data"] == {"reason": "busy"}
        session = next(iter(server.sessions))
        assert session.handling == 4
        assert probe.max_running == 2
        probe.release.set()
        ids = {(await peer.receive())["id"] for _ in range(4)}
        assert ids == set(range(4))


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_an_idle_session_holds_no_message_it_has_answered() -> None:
    # A session left idle after a large request must not keep it: once answered it is no
    # longer charged to the memory budget. (A dict takes no weak reference: count instead.)
    async with raw_client_of(make_server(Probe())) as peer:
        message = {"jsonrpc": "2.0", "id": "big", "method": "ping", "params": {}}
        alone = sys.getrefcount(message)
        await peer.send(message)
        assert (await peer.receive())["id"] == "big"
        await anyio.sleep(0.05)  # the session is back waiting for its next message
        gc.collect()
        assert sys.getrefcount(message) == alone, gc.get_referrers(message)
