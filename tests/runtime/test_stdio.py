"""stdio with real subprocesses: our client and server, bad input, crashes and shutdown."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from mcpbind import generated
from mcpbind.generated.v2025_11_25 import types
from mcpbind.runtime import (
    HANDSHAKE_REVISIONS,
    Client,
    ConnectionClosedError,
    RequestContext,
    StdioParameters,
    stdio_client,
)
from runtime_helpers import EXAMPLE_SERVER, REPO_ROOT
from stdio_raw import RawServer, call, raw_example, raw_saturation

pytestmark = pytest.mark.anyio

MISBEHAVING = str(Path(__file__).with_name("stdio_servers.py"))


def example(**overrides: Any) -> StdioParameters:
    return StdioParameters(EXAMPLE_SERVER[0], EXAMPLE_SERVER[1:], cwd=REPO_ROOT, **overrides)


def misbehaving(mode: str, **overrides: Any) -> StdioParameters:
    return StdioParameters(sys.executable, [MISBEHAVING, mode], **overrides)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split()[2] == "Z")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
async def test_our_client_and_server_over_stdio(revision: str) -> None:
    bindings = generated.load(revision)
    t = bindings.types
    client = Client(stdio_client(example()), protocol_version=revision)

    @client.handler(bindings.methods.SAMPLING_CREATEMESSAGE)
    async def sample(params: Any, context: RequestContext) -> Any:
        return t.CreateMessageResult(
            role="assistant", model="m", content=t.TextContent(text="sampled")
        )

    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with client:
        assert client.revision == revision
        names = [tool.name for tool in await client.list_all(bindings.methods.TOOLS_LIST)]
        assert "echo" in names and "roots" in names
        echo = await client.stub.call_tool(
            t.CallToolRequestParams(name="echo", arguments={"text": "hé\nllo"})
        )
        assert echo.content[0].text == "hé\nllo"
        read = await client.stub.read_resource(t.ReadResourceRequestParams(uri="square://12"))
        assert read.contents[0].text == "144"
        prompt = await client.stub.get_prompt(
            t.GetPromptRequestParams(name="greet", arguments={"name": "Bo"})
        )
        assert "Bo" in prompt.messages[0].content.text
        slow = await client.stub.call_tool(
            t.CallToolRequestParams(name="slow", arguments={"steps": 3, "delay": 0.01}),
            {"progress": on_progress},
        )
        assert slow.content[0].text == "done after 3 steps" and progress == [1, 2, 3]
        asked = await client.stub.call_tool(
            t.CallToolRequestParams(name="ask_llm", arguments={"question": "?"})
        )
        assert asked.content[0].text == "the LLM said: sampled"
        await client.ping()


async def test_cancellation_over_stdio() -> None:
    async with Client(example()) as client:
        with anyio.move_on_after(0.3):
            await client.stub.call_tool(
                types.CallToolRequestParams(name="slow", arguments={"steps": 100, "delay": 0.1})
            )
            raise AssertionError("should have been cancelled")
        # The server dropped the cancelled call and still answers.
        echo = await client.stub.call_tool(
            types.CallToolRequestParams(name="echo", arguments={"text": "x"})
        )
        assert echo.content[0].text == "x"


async def test_env_cwd_and_process_group(tmp_path: Path) -> None:
    params = misbehaving("env", env={"MCPBIND_TEST_VALUE": "from-env"}, cwd=tmp_path)
    async with Client(stdio_client(params)) as client:
        assert client.server_info.name == "from-env"
        assert Path(client.server_info.version).resolve() == tmp_path.resolve()
        pid = _pid_of(client)
        assert os.getpgid(pid) == pid != os.getpgid(0)


async def test_a_server_that_cannot_start_is_a_clear_error() -> None:
    with pytest.raises(ConnectionClosedError, match="could not start the server"):
        async with Client(stdio_client(StdioParameters("/nonexistent/mcp-server"))):
            pass


async def test_stderr_is_captured_line_by_line() -> None:
    lines: list[str] = []
    async with Client(stdio_client(misbehaving("chatty", stderr=lines.append))) as client:
        await client.ping()
        await anyio.sleep(0.1)
    assert "stderr line for ping" in lines


async def test_a_server_that_dies_mid_request_fails_it_at_once() -> None:
    async with Client(stdio_client(misbehaving("crash"))) as client:
        start = time.monotonic()
        with pytest.raises(ConnectionClosedError, match="status 3"):
            await client.stub.call_tool(types.CallToolRequestParams(name="any"))
        assert time.monotonic() - start < 2
        with pytest.raises(ConnectionClosedError):
            await client.ping()


async def test_a_dead_server_whose_pipe_stays_open_still_fails_at_once() -> None:
    async with Client(stdio_client(misbehaving("crash-keep-pipe"))) as client:
        start = time.monotonic()
        with pytest.raises(ConnectionClosedError):
            await client.stub.call_tool(types.CallToolRequestParams(name="any"))
        assert time.monotonic() - start < 2


async def test_shutdown_closes_stdin_first() -> None:
    transport = stdio_client(example(close_wait=5, term_wait=5))
    start = time.monotonic()
    async with Client(transport) as client:
        await client.ping()
        pid = _pid_of(client)
    assert time.monotonic() - start < 4
    assert not alive(pid)


def _pid_of(client: Client) -> int:
    return int(client.session.connection.extra["pid"])


@pytest.mark.parametrize(
    ("mode", "needs", "waits"), [("ignore-eof", "SIGTERM", 1), ("ignore-term", "SIGKILL", 2)]
)
async def test_shutdown_escalates(mode: str, needs: str, waits: int) -> None:
    wait = 0.4
    client = Client(stdio_client(misbehaving(mode, close_wait=wait, term_wait=wait)))
    async with client:
        await client.ping()
        pid = _pid_of(client)
        start = time.monotonic()
    took = time.monotonic() - start
    assert not alive(pid)
    # It took the configured waits (one before SIGTERM, one more before SIGKILL), not longer.
    assert waits * wait <= took < waits * wait + 1.0
    # The exit status says which signal it took.
    assert client.session.connection.close_reason() == f"the server process was killed by {needs}"


async def test_server_exits_when_its_parent_dies() -> None:
    launched = subprocess.run(
        [sys.executable, MISBEHAVING, "launcher"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    server_pid, holder_pid = map(int, launched.stdout.split())
    try:
        deadline = time.monotonic() + 5
        while alive(server_pid) and time.monotonic() < deadline:
            await anyio.sleep(0.1)
        assert not alive(server_pid)
    finally:
        os.kill(holder_pid, 9)


async def test_bad_input_to_the_stdio_server() -> None:
    async with await raw_example() as process:
        server = RawServer(process)
        reply = await server.call({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert reply["error"]["code"] == -32600, "requests before initialize are refused"
        assert (await server.call({"jsonrpc": "2.0", "id": 2, "method": "ping"}))["result"] == {}
        await server.initialize()
        await server.send(b"{this is not json\n")
        assert (await server.message())["error"]["code"] == -32700
        reply = await server.call({"jsonrpc": "1.0", "id": 3, "method": "ping"})
        assert (
            reply == {"jsonrpc": "2.0", "id": 3, "error": reply["error"]}
            and reply["error"]["code"] == -32600
        )
        reply = await server.call({"jsonrpc": "2.0", "id": 4})
        assert reply["error"]["code"] == -32600 and reply["id"] == 4
        for bad_id in (None, 1.5):
            reply = await server.call({"jsonrpc": "2.0", "id": bad_id, "method": "ping"})
            assert reply["error"]["code"] == -32600 and reply["id"] is None
        await server.send(b'{"jsonrpc":"2.0","method":"notifications/unheard_of"}\n')
        await server.send(b"\n\n")
        reply = await server.call({"jsonrpc": "2.0", "id": 5, "method": "no/such"})
        assert reply["error"]["code"] == -32601, "unknown notifications and blank lines are ignored"
        reply = await server.call(
            {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": 1}}
        )
        assert reply["error"]["code"] == -32602 and reply["error"]["data"]
        assert process.returncode is None


async def test_a_10_mb_line_and_a_flood() -> None:
    async with await raw_example() as process:
        server = RawServer(process)
        await server.initialize()
        before = rss_kib(process.pid)
        big = "x" * (10 * 1024 * 1024)
        message = {
            "jsonrpc": "2.0",
            "id": "big",
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": big}},
        }
        reply = await server.call(message)
        assert reply["id"] == "big" and len(reply["result"]["content"][0]["text"]) == len(big)
        await server.send(b"x" * (10 * 1024 * 1024) + b"\n")
        assert (await server.message())["error"]["code"] == -32700

        count = 10_000
        flood = b"".join(
            orjson.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": str(i)}},
                }
            )
            + b"\n"
            for i in range(count)
        )
        seen: set[int] = set()
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.send, flood)
            while len(seen) < count:
                reply = await server.message()
                assert reply["result"]["content"][0]["text"] == str(reply["id"])
                seen.add(reply["id"])
        assert seen == set(range(count))
        assert (await server.call({"jsonrpc": "2.0", "id": "after", "method": "ping"}))[
            "result"
        ] == {}
        growth_mib = (rss_kib(process.pid) - before) / 1024
        assert growth_mib < 64, f"server grew by {growth_mib:.0f} MiB"


async def test_stdio_server_exits_on_eof() -> None:
    async with await raw_example() as process:
        server = RawServer(process)
        await server.initialize()
        assert process.stdin is not None
        await process.stdin.aclose()
        with anyio.fail_after(5):
            assert await process.wait() == 0


async def test_stdin_closed_with_requests_in_flight_answers_them_and_exits() -> None:
    bounds = ("max_concurrent_handlers=1", "spare_handlers=0")
    async with await raw_saturation(*bounds) as process:
        server = RawServer(process)
        await server.initialize()
        await server.send_json(call(1, "hang"))  # runs
        await server.send_json(call(2, "hang"))  # waits for the only slot
        assert (await server.call({"jsonrpc": "2.0", "id": "p", "method": "ping"}))["id"] == "p"
        assert process.stdin is not None
        start = time.monotonic()
        await process.stdin.aclose()
        replies = {}
        for _ in range(2):
            reply = await server.message()
            replies[reply["id"]] = reply["error"]
        with anyio.fail_after(5):
            assert await process.wait() == 0
        took = time.monotonic() - start
        print(f"stdin closed with 2 requests in flight: exited after {took:.3f} s")
    assert set(replies) == {1, 2}
    assert all(error["code"] == -31503 for error in replies.values())
    assert all(error["data"] == {"reason": "closing"} for error in replies.values())
    assert "before it finished" in replies[1]["message"]
    assert "before it started" in replies[2]["message"]


async def test_a_server_whose_peer_stops_reading_still_exits_when_stdin_closes() -> None:
    bounds = ("max_concurrent_handlers=2", "spare_handlers=0")
    async with await raw_saturation(*bounds) as process:
        server = RawServer(process)
        await server.initialize()
        big = "x" * (256 * 1024)
        for i in range(12):  # 3 MiB of answers nobody reads: the server's writes back up
            await server.send_json(call(i, "echo", text=big))
        for i in range(100, 110):  # these wait for a handler slot
            await server.send_json(call(i, "hang"))
        assert process.stdin is not None
        await process.stdin.aclose()
        with anyio.fail_after(20):  # the writer gets at most 5 s to flush, the drain 0.3 s
            assert await process.wait() == 0


def test_nothing_but_messages_on_stdout() -> None:
    code = """
import os
import anyio
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Server

print("printed before serving")
server = Server("p")

@server.handler(methods.TOOLS_LIST)
async def tools(params, context):
    print("stray print in a handler")
    os.write(1, b"raw write to descriptor 1\\n")
    return types.ListToolsResult(tools=[])

anyio.run(server.serve_stdio)
"""
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    stdin = b"".join(orjson.dumps(r) + b"\n" for r in requests)
    done = subprocess.run(
        [sys.executable, "-c", code], input=stdin, capture_output=True, timeout=20, check=True
    )
    lines = done.stdout.splitlines()
    assert lines[0] == b"printed before serving"  # before the server took stdout over
    replies = [orjson.loads(line) for line in lines[1:]]
    assert [reply["id"] for reply in replies] == [1, 2]
    assert replies[1]["result"] == {"tools": []}
    assert b"stray print in a handler" in done.stderr
    assert b"raw write to descriptor 1" in done.stderr
