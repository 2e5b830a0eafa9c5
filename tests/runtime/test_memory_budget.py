"""The process-wide memory budget over real server processes (``budget_server.py``), measured.

Each server runs with a 32 MiB budget and its sessions' own byte bound lifted, so the budget is
what stops requests: 100 ``tools/call`` of 3 MiB each (held by the tool until released) would
hold 300 MiB; the server keeps a few and answers the rest "busy" at once, answers pings
meanwhile, and serves everything again after the release. Peak RSS (``VmHWM``) and RSS are read
from the server process.

The bound is the issue's: peak RSS at most base plus the budget, nothing allowed over it. The
base is the server's RSS once it has served one call of the same shape (a 3 MiB ``tools/call``)
and released it: what that first call leaves behind for good (imported code paths, validators,
allocator arenas) is the process's, not something a peer holds, and is the same whatever the
budget. ``BUDGET_TRACE=1`` in the server's environment adds ``tracemalloc``'s figures to what
the ``budget`` tool answers.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import pytest
from anyio.abc import Process
from mcpbind.runtime import MemoryBudget
from mcpbind.runtime.core.budget import REQUEST_BYTES
from starlette.types import Receive, Scope, Send
from stdio_raw import RawServer

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
SERVER = str(HERE / "budget_server.py")
REPO_ROOT = HERE.parent.parent
MIB = 1024 * 1024
BUDGET_MIB = 32
SIZE = 3 * MIB
CALLS = 100
BUSY = -31503
DATA = b"x" * SIZE
MODERN = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
BOTH = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
PING = {"jsonrpc": "2.0", "id": "ping", "method": "ping"}
#: The fewest calls a server must hold (of the ten that would fit): a message being read is
#: held at three times its bytes (``READ_FACTOR``), and over HTTP several bodies are read at
#: once, each held so from its first byte: four to six there, eight on stdio (measured).
MIN_HELD = 3
#: The servers run with glibc's mmap threshold fixed (docs/security.md, "Memory budget"):
#: with its default, sliding threshold, freed blocks of a few MiB stay in the heap.
SERVER_ENV = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"}


# -- the accounting object --------------------------------------------------------------------


def test_reserve_is_all_or_nothing_and_charge_goes_beyond() -> None:
    budget = MemoryBudget(100)
    assert budget.reserve(60) and budget.used == 60
    assert not budget.reserve(41) and budget.used == 60, "a refused reserve holds nothing"
    assert "60 of 100 bytes in use; 41 more" in budget.refusal(41)
    budget.charge(50)
    assert budget.used == 110 and budget.exceeded and budget.peak == 110
    budget.release(110)
    assert budget.used == 0 and not budget.exceeded and budget.peak == 110
    with pytest.raises(ValueError, match="number of bytes"):
        MemoryBudget(-1)


def test_resident_size_counts_what_a_parsed_value_takes() -> None:
    from mcpbind.runtime.core.budget import resident_size

    text = orjson.loads(b'{"a":"' + b"x" * 100_000 + b'"}')
    assert 100_000 < resident_size(text) < 101_000  # an ASCII string: about its JSON length
    emoji = orjson.loads(('{"a":"' + "x" * 100_000 + '\U0001f600"}').encode())
    assert resident_size(emoji) > 400_000  # one astral character: 4 bytes a character
    dense = b"[" + b"{}," * 30_000 + b"{}]"
    assert resident_size(orjson.loads(dense)) > 20 * len(dense)  # 64 bytes an empty object


async def test_a_stdio_line_is_held_as_it_streams_in_and_dropped_beyond_the_budget() -> None:
    from mcpbind.runtime import Malformed
    from mcpbind.runtime.transports._pipes import PipeReader

    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    budget = MemoryBudget(300_000)
    reader = PipeReader(read_fd, 1 << 20, True, budget=budget)
    big = b"x" * 200_000  # held at twice that while read: more than the budget
    lines = [
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"a":"' + big + b'"}}',
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"a":"' + big + b'"}}',
        b'{"jsonrpc":"2.0","id":8,"result":{"a":"' + big + b'"}}',
        b'{"jsonrpc":"2.0","id":9,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"a":"' + big[:100_000] + b'"}}',
    ]

    def write() -> None:
        with os.fdopen(write_fd, "wb") as out:
            out.write(b"\n".join(lines) + b"\n")

    async with anyio.create_task_group() as tg:
        tg.start_soon(anyio.to_thread.run_sync, write)
        refused = (await reader.receive()).message
        assert isinstance(refused, Malformed) and refused.code == BUSY
        assert refused.request_id == 7 and "memory budget" in refused.reason
        assert budget.peak <= budget.limit, "dropped as it came, never held beyond"
        response = (await reader.receive()).message  # the notification was dropped unsaid
        assert response["id"] == 8 and budget.peak > budget.limit, "a response is never refused"
        assert (await reader.receive()).message["id"] == 9
        admitted = await reader.receive()
        assert admitted.message["id"] == 10 and admitted.size > 100_000  # its parsed size
    assert budget.used == 0, "what the reader held is given back as each line ends"
    reader.close()
    os.close(read_fd)


def test_the_documented_budget_defaults() -> None:
    from mcpbind.runtime import DEFAULT_MEMORY_BUDGET, process_budget
    from mcpbind.runtime.transports.stdio import stdio_server

    assert DEFAULT_MEMORY_BUDGET == 256 * MIB
    assert process_budget().limit == DEFAULT_MEMORY_BUDGET  # nothing here changed it
    assert inspect.signature(stdio_server).parameters["max_message"].default == 16 * MIB
    page = (REPO_ROOT / "docs" / "security.md").read_text()
    for stated in (
        "together hold 256 MiB",
        "reads lines up to 16 MiB",
        "(`process_budget()`, 256 MiB",
    ):
        assert stated in page, stated


# -- helpers ----------------------------------------------------------------------------------


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    raise AssertionError(f"no {field}")


def peak_kib(pid: int) -> int:
    """The process's peak resident set (``VmHWM``), in KiB."""
    return _status_kib(pid, "VmHWM:")


def rss_mib(pid: int) -> float:
    """The process's resident set now (``VmRSS``), in MiB."""
    return _status_kib(pid, "VmRSS:") / 1024


def within_budget(pid: int, base: float, what: str, budget_mib: float = BUDGET_MIB) -> float:
    """The peak RSS over ``base`` (MiB), asserted to be at most the budget."""
    growth = peak_kib(pid) / 1024 - base
    print(f"{what}: peak RSS +{growth:.1f} MiB over a base of {base:.1f} MiB")
    assert growth <= budget_mib, f"{what}: peak RSS +{growth:.2f} MiB, budget {budget_mib} MiB"
    return growth


def call_head(request_id: int | str, name: str, modern: bool = False) -> bytes:
    meta = b',"_meta":' + orjson.dumps(MODERN_META) if modern else b""
    return (
        b'{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s"%s,'
        b'"arguments":{"data":"' % (orjson.dumps(request_id), name.encode(), meta)
    )


TAIL = b'"}}}'


def big_call(request_id: int | str, name: str = "hold", modern: bool = False) -> list[bytes]:
    """A ``tools/call`` whose ``data`` argument is 3 MiB, as parts (the big one shared)."""
    return [call_head(request_id, name, modern), DATA, TAIL]


def small_call(request_id: int | str, name: str, modern: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if modern:
        params["_meta"] = MODERN_META
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def is_busy(message: Any) -> bool:
    error = message.get("error") if type(message) is dict else None
    return (
        type(error) is dict
        and error.get("code") == BUSY
        and error.get("data") == {"reason": "busy"}
    )


def tool_text(message: dict[str, Any]) -> str:
    assert "result" in message, message
    return str(message["result"]["content"][0]["text"])


@asynccontextmanager
async def server_process(
    kind: str, budget_mib: int = BUDGET_MIB
) -> AsyncIterator[tuple[Process, str]]:
    """``budget_server.py`` with a 32 MiB budget; its base URL ("" for stdio)."""
    async with await anyio.open_process(
        [sys.executable, SERVER, kind, str(budget_mib)],
        cwd=REPO_ROOT,
        stderr=subprocess.DEVNULL,
        env=SERVER_ENV,
    ) as process:
        base = ""
        if kind != "stdio":
            assert process.stdout is not None
            with anyio.fail_after(20):
                line = b""
                while not line.endswith(b"\n"):
                    line += await process.stdout.receive(1)
            base = line.decode().strip()
        try:
            yield process, base
        finally:
            process.kill()


async def wait_for(condition: Callable[[], Awaitable[bool]], seconds: float = 60) -> None:
    with anyio.fail_after(seconds):
        while not await condition():
            await anyio.sleep(0.1)


# -- stdio ------------------------------------------------------------------------------------


async def test_stdio_100_calls_of_3_mib_stay_within_the_budget() -> None:
    async with server_process("stdio") as (process, _):
        server = RawServer(process)
        await server.initialize()
        await server.send(b"".join(big_call("warm", "budget")) + b"\n")  # the base's call
        assert "used" in tool_text(await server.message(30))
        base = rss_mib(process.pid)
        for n in range(CALLS):
            await server.send(b"".join(big_call(n)) + b"\n")
        await server.send_json(PING)
        refused = []
        while (message := await server.message(30))["id"] != "ping":
            refused.append(message)
        assert message["result"] == {}, "ping answered while calls are held"
        assert all(is_busy(m) for m in refused), refused[:1]
        held = CALLS - len(refused)
        assert MIN_HELD <= held <= BUDGET_MIB * MIB // SIZE, held
        assert [m["id"] for m in refused] == list(range(held, CALLS)), "in order, at once"
        # 100 calls would hold 300 MiB; the line being read is held in the budget too.
        within_budget(process.pid, base, f"stdio, {held} calls held")
        # Released, the held calls answer, the budget is empty, and a big call is served.
        assert tool_text(await server.call(small_call("r", "release"))) == "released"
        answered = [await server.message() for _ in range(held)]
        assert sorted(m["id"] for m in answered) == list(range(held))
        assert {tool_text(m) for m in answered} == {f"held {SIZE}"}
        used = json.loads(tool_text(await server.call(small_call("b", "budget"))))
        assert used["used"] < 1024, used  # the asking call's own bytes
        await server.send(b"".join(big_call("again", "budget")) + b"\n")
        assert "used" in tool_text(await server.message())


async def test_cancelled_and_refused_calls_give_their_bytes_back() -> None:
    async with server_process("stdio") as (process, _):
        server = RawServer(process)
        await server.initialize()

        async def used() -> int:
            answer = await server.call(small_call("b", "budget"))
            return int(json.loads(tool_text(answer))["used"])

        for n in range(15):  # some held, the rest refused
            await server.send(b"".join(big_call(n)) + b"\n")
        await server.send_json(PING)
        refused = []
        while (message := await server.message(30))["id"] != "ping":
            refused.append(message)
        assert refused and all(is_busy(m) for m in refused)
        held = 15 - len(refused)
        assert await used() >= held * SIZE
        for n in range(held):
            cancel = {"requestId": n, "reason": "test"}
            await server.send_json(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
            )
        assert await used() < 1024, "cancelled calls hold nothing (the asking call is held)"
        # Room for as many again, less one: with all of them back, what is left may be under
        # what the asking call's line is held at while read, and the question is refused busy.
        for n in range(held - 1):
            await server.send(b"".join(big_call(100 + n)) + b"\n")
        assert await used() >= (held - 1) * SIZE


async def test_stdio_line_beyond_the_budget_is_refused_as_it_streams_in() -> None:
    async with server_process("stdio") as (process, _):
        server = RawServer(process)
        await server.initialize()

        async def used() -> int:
            answer = await server.call(small_call("b", "budget"))
            return int(json.loads(tool_text(answer))["used"])

        await server.send(b"".join(big_call("warm", "budget")) + b"\n")  # the base's call
        assert "used" in tool_text(await server.message(30))
        for n in range(4):  # 12 MiB held of the 32
            await server.send(b"".join(big_call(n)) + b"\n")
        assert await used() >= 4 * SIZE
        base = rss_mib(process.pid)  # with the 12 MiB held: 20 left
        # 15 MiB, within the line limit (16 MiB), but held at three times that while read: refused
        # once it no longer fits, its bytes dropped as they come, answered busy with its id.
        big = b"z" * (15 * MIB)
        await server.send(call_head("huge", "budget") + big + TAIL + b"\n")
        refused = await server.message(30)
        assert refused["id"] == "huge" and is_busy(refused), refused
        assert "memory budget" in refused["error"]["message"]
        # Never read whole: within what was left of the budget.
        within_budget(process.pid, base, "stdio, a huge line refused", BUDGET_MIB - 12)
        # A huge response (no method: it ends a request of ours) is never refused; dropped by
        # the session as unknown. A huge notification is dropped without an answer.
        response = b'{"jsonrpc":"2.0","id":"nobody","result":{"x":"' + big + b'"}}\n'
        await server.send(response)
        note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"x":"'
        await server.send(note + big + b'"}}\n')
        assert (await server.call(PING))["result"] == {}
        assert await used() >= 4 * SIZE
        assert tool_text(await server.call(small_call("r", "release"))) == "released"
        assert sorted([(await server.message())["id"] for _ in range(4)]) == [0, 1, 2, 3]
        assert await used() < 1024, "everything given back but the asking call"


# -- Streamable HTTP --------------------------------------------------------------------------


async def body(parts: list[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def post_parts(
    http: httpx.AsyncClient, base: str, parts: list[bytes], headers: dict[str, str]
) -> httpx.Response:
    size = str(sum(len(p) for p in parts))
    return await http.post(
        f"{base}/mcp", content=body(parts), headers={**headers, "content-length": size}
    )


def answer_of(response: httpx.Response) -> Any:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[6:] for line in response.text.splitlines() if line.startswith("data: {")]
        return json.loads(data[-1])
    return response.json()


def busy_answer(response: httpx.Response) -> bool:
    """Refused at once: 503 with ``Retry-After`` and -31503, or (handshake era, a request
    that reached its session) the JSON-RPC busy error in a 200 answer."""
    if response.status_code == 503:
        return "retry-after" in response.headers and is_busy(response.json())
    return response.status_code == 200 and is_busy(answer_of(response))


async def open_session(http: httpx.AsyncClient, base: str) -> dict[str, str]:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    response = await http.post(f"{base}/mcp", json=init, headers=BOTH)
    assert response.status_code == 200, response.text
    headers = {
        **BOTH,
        "mcp-session-id": response.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(f"{base}/mcp", json=done, headers=headers)).status_code == 202
    return headers


def modern_headers(name: str) -> dict[str, str]:
    return {
        **BOTH,
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": name,
    }


async def small(
    http: httpx.AsyncClient, base: str, headers: dict[str, str], message: dict[str, Any]
) -> Any:
    if "mcp-name" in headers:  # stateless era: the header names the tool called
        headers = {**headers, "mcp-name": message["params"]["name"]}
    response = await http.post(f"{base}/mcp", json=message, headers=headers)
    assert response.status_code == 200, response.text
    return answer_of(response)


@pytest.mark.parametrize(
    "layout",
    ["one handshake session", "100 handshake sessions", "100 stateless-era requests"],
)
async def test_http_100_calls_of_3_mib_stay_within_the_budget(layout: str) -> None:
    modern = layout.startswith("100 stateless")
    limits = httpx.Limits(max_connections=CALLS + 20, max_keepalive_connections=CALLS + 20)
    async with (
        server_process("http") as (process, base),
        httpx.AsyncClient(timeout=120, limits=limits) as http,
    ):
        if modern:
            sessions = [modern_headers("hold")] * CALLS
            control = modern_headers("budget")
        elif layout == "one handshake session":
            sessions = [await open_session(http, base)] * CALLS
            control = sessions[0]
        else:
            sessions = [await open_session(http, base) for _ in range(CALLS)]
            control = sessions[0]

        async def budget_use() -> dict[str, int]:
            answer = await small(http, base, control, small_call("b", "budget", modern))
            return dict(json.loads(tool_text(answer)))

        async def budget_used() -> int:
            return (await budget_use())["used"]

        warm = await post_parts(http, base, big_call("warm", "budget", modern), control)
        assert "used" in tool_text(answer_of(warm))  # the base's call
        base_mib = rss_mib(process.pid)
        responses: dict[int, httpx.Response] = {}

        async def one(n: int) -> None:
            responses[n] = await post_parts(http, base, big_call(n, modern=modern), sessions[n])

        async def settled() -> bool:  # every call answered busy or waiting in the tool
            # The query is new work too: while bodies still stream in and are held, it may be
            # answered busy itself; ask again.
            headers = control
            message = small_call("b", "budget", modern)
            if "mcp-name" in headers:
                headers = {**headers, "mcp-name": "budget"}
            response = await http.post(f"{base}/mcp", json=message, headers=headers)
            if busy_answer(response):
                return False
            held = int(json.loads(tool_text(answer_of(response)))["held"])
            return len(responses) + held >= CALLS

        async with anyio.create_task_group() as tg:
            for n in range(CALLS):
                tg.start_soon(one, n)
            await wait_for(settled)
            held = CALLS - len(responses)
            refused = list(responses.values())
            assert all(busy_answer(r) for r in refused), [(r.status_code, r.text) for r in refused]
            assert any(r.status_code == 503 for r in refused)
            assert MIN_HELD <= held <= BUDGET_MIB * MIB // SIZE, held
            # 100 calls would hold 300 MiB; the bodies being read (from their first byte) and
            # what uvicorn reads of them ahead of the app are held in the budget too.
            within_budget(process.pid, base_mib, f"{layout}, {held} held")
            # Pings go on, on every session, while the budget is spent.
            if not modern:
                for headers in {id(h): h for h in sessions}.values():
                    assert (await small(http, base, headers, PING))["result"] == {}
            released = await small(http, base, control, small_call("r", "release", modern))
            assert tool_text(released) == "released"
        done = [n for n, r in responses.items() if r.status_code == 200 and not busy_answer(r)]
        assert len(done) == held
        assert {tool_text(answer_of(responses[n])) for n in done} == {f"held {SIZE}"}
        # What is left: the event store's answers, and the asking request itself.
        assert await budget_used() < REQUEST_BYTES + 64 * 1024
        # Everything recovers: every session takes a 3 MiB call again.
        again = await post_parts(http, base, big_call("again", "budget", modern), control)
        assert "used" in tool_text(answer_of(again))
        for headers in {id(h): h for h in sessions}.values():
            if not modern:
                assert "used" in tool_text(
                    await small(http, base, headers, small_call("s", "budget"))
                )
                assert (await http.delete(f"{base}/mcp", headers=headers)).status_code == 200
        # The sessions gone (their event stores with them), the budget holds nothing but the
        # asking call.
        final = await small(http, base, modern_headers("budget"), small_call("b", "budget", True))
        assert json.loads(tool_text(final))["used"] < REQUEST_BYTES + 1024  # the asking one


# -- legacy HTTP+SSE --------------------------------------------------------------------------


class SseReader:
    """The legacy SSE stream on a raw socket: its endpoint, then every message, parsed."""

    def __init__(self, stream: anyio.abc.SocketStream) -> None:
        self.stream = stream
        self.buffer = b""
        self.messages: list[Any] = []
        self.endpoint = ""

    async def read(self) -> None:
        while True:
            try:
                self.buffer += await self.stream.receive(1 << 20)
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return
            while b"\r\n\r\n" in self.buffer or b"\n\n" in self.buffer:
                cut = self.buffer.find(b"\n\n")
                event, self.buffer = self.buffer[:cut], self.buffer[cut + 2 :]
                for line in event.split(b"\n"):
                    if line.startswith(b"data: /"):
                        self.endpoint = line[6:].strip().decode()
                    elif line.startswith(b"data: {"):
                        self.messages.append(orjson.loads(line[6:]))

    def answer(self, request_id: Any) -> Any:
        return next((m for m in self.messages if m.get("id") == request_id), None)


async def test_legacy_sse_posts_beyond_the_budget_get_429_and_pings_go_on() -> None:
    async with (
        server_process("legacy") as (process, base),
        httpx.AsyncClient(timeout=60) as http,
        anyio.create_task_group() as tg,
    ):
        host, port = base.removeprefix("http://").split(":")
        stream = await anyio.connect_tcp(host, int(port))
        await stream.send(
            b"GET /sse HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n\r\n"
        )
        sse = SseReader(stream)
        tg.start_soon(sse.read)

        async def answered(request_id: Any) -> Any:
            with anyio.fail_after(30):
                while (found := sse.answer(request_id)) is None:
                    await anyio.sleep(0.02)
            return found

        with anyio.fail_after(10):
            while not sse.endpoint:
                await anyio.sleep(0.02)
        url = f"{base}{sse.endpoint}"
        json_headers = {"content-type": "application/json"}

        async def post(message: dict[str, Any]) -> int:
            return (await http.post(url, json=message, headers=json_headers)).status_code

        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
        assert await post(init) == 202
        await answered(0)
        assert await post({"jsonrpc": "2.0", "method": "notifications/initialized"}) == 202
        parts = big_call("warm", "budget")
        size = str(sum(len(p) for p in parts))
        warm = await http.post(
            url, content=body(parts), headers={**json_headers, "content-length": size}
        )
        assert warm.status_code == 202
        assert "used" in tool_text(await answered("warm"))  # the base's call
        base_mib = rss_mib(process.pid)
        statuses = []
        for n in range(1, 21):
            parts = big_call(n)
            size = str(sum(len(p) for p in parts))
            response = await http.post(
                url, content=body(parts), headers={**json_headers, "content-length": size}
            )
            statuses.append(response.status_code)
            if response.status_code == 429:
                assert response.headers["retry-after"] == "1"
                assert "Too Many Requests" in response.json()["error"]["message"]
        held = statuses.count(202)
        assert statuses == [202] * held + [429] * (20 - held), statuses
        assert MIN_HELD <= held <= BUDGET_MIB * MIB // SIZE, held
        within_budget(process.pid, base_mib, f"legacy, {held} held")
        assert await post(PING) == 202, "a ping is taken with the budget spent"
        assert (await answered("ping"))["result"] == {}
        assert await post(small_call("r", "release")) == 202
        for n in range(1, held + 1):
            assert tool_text(await answered(n)) == f"held {SIZE}"
        parts = big_call("again", "budget")
        size = str(sum(len(p) for p in parts))
        again = await http.post(
            url, content=body(parts), headers={**json_headers, "content-length": size}
        )
        assert again.status_code == 202
        assert "used" in tool_text(await answered("again"))
        tg.cancel_scope.cancel()


# -- the stdio line limit ---------------------------------------------------------------------


async def test_stdio_line_over_16_mib_is_a_parse_error_and_the_session_goes_on() -> None:
    # A budget with room for a 16 MiB line read (three times its bytes): the line limit is
    # what stops this one.
    async with server_process("stdio", 64) as (process, _):
        server = RawServer(process)
        await server.initialize()
        await server.send(call_head(1, "budget") + b"y" * (17 * MIB) + TAIL + b"\n")
        reply = await server.message(30)
        assert reply["id"] is None and reply["error"]["code"] == -32700, reply
        assert "larger than 16777216 bytes" in reply["error"]["message"] + str(
            reply["error"].get("data")
        )
        assert (await server.call(PING))["result"] == {}
        # A message under the limit is served.
        await server.send(call_head(2, "budget") + b"z" * (15 * MIB) + TAIL + b"\n")
        assert "used" in tool_text(await server.message(30))


# -- event stores -----------------------------------------------------------------------------


async def test_event_stores_hold_their_events_in_the_budget_and_give_way_first() -> None:
    from mcpbind.runtime.http import InMemoryEventStore

    budget = MemoryBudget(64 * 1024)
    first, second = InMemoryEventStore(budget=budget), InMemoryEventStore(budget=budget)
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x" * 1000}}
    kept = [await first.store_event("s", note) for _ in range(40)]
    assert budget.used == first.bytes > 40_000
    # The second store's events push the budget over: it drops its own oldest, never the
    # newest (an answer must still be recorded), so the total stays within the budget.
    for _ in range(60):
        await second.store_event("t", note)
    assert budget.used == first.bytes + second.bytes
    assert budget.used <= budget.limit
    assert len(second) < 60 and len(first) == 40
    assert await first.replay_events_after(kept[0]) is not None
    first.close()
    second.close()
    assert budget.used == 0


# -- a spent budget ---------------------------------------------------------------------------


async def test_with_the_budget_spent_http_refuses_new_work_and_serves_pings() -> None:
    from mcpbind.generated.v2025_11_25 import methods, types
    from mcpbind.runtime import RequestContext, Server, SessionOptions
    from mcpbind.runtime.http import StreamableHTTPServer, serving

    budget = MemoryBudget(8 * MIB)
    server = Server(
        "spent", capabilities={"tools": {}}, options=SessionOptions(memory_budget=budget)
    )

    @server.handler(methods.TOOLS_LIST)
    async def list_tools(
        params: types.PaginatedRequestParams, context: RequestContext
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])

    app = StreamableHTTPServer(server.serve, memory_budget=budget)
    async with serving(app) as base, httpx.AsyncClient(timeout=30) as http:
        headers = await open_session(http, base)
        assert budget.reserve(budget.limit - budget.used)  # every byte held elsewhere
        # A body over 64 KiB is refused unread: 503, Retry-After, -31503 busy.
        refused = await post_parts(http, base, [call_head(1, "x"), b"y" * 100_000, TAIL], headers)
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        assert is_busy(refused.json()) and refused.json()["id"] is None
        # A small one is read: a ping is answered, a request refused by its session.
        assert (await small(http, base, headers, PING))["result"] == {}
        listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        assert is_busy(await small(http, base, headers, listed))
        # In the stateless era the busy answer is an HTTP 503 with Retry-After too.
        modern = {**listed, "params": {"_meta": MODERN_META}}
        stateless = {**BOTH, "mcp-protocol-version": MODERN, "mcp-method": "tools/list"}
        busy = await http.post(f"{base}/mcp", json=modern, headers=stateless)
        assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
        assert is_busy(busy.json()) and busy.json()["id"] == 2
        budget.release(budget.limit)
        assert (await small(http, base, headers, listed))["result"] == {"tools": []}
        again = await post_parts(http, base, [call_head(3, "x"), b"y" * 100_000, TAIL], headers)
        assert again.status_code == 200 and not is_busy(answer_of(again))
        assert budget.used < 64 * 1024  # the ping and the answers' events


# -- what uvicorn reads ahead of the app ------------------------------------------------------


@pytest.mark.parametrize("http_impl", ["httptools", "h11"])
@pytest.mark.parametrize("room", [True, False])
async def test_uvicorn_reads_a_body_ahead_only_with_room_in_the_budget(
    room: bool, http_impl: str
) -> None:
    from mcpbind.runtime.transports.http.uvicorn import _READ_AHEAD, serving

    budget = MemoryBudget(8 * MIB)
    if not room:
        assert budget.reserve(budget.limit)  # every byte held elsewhere
    spent = budget.used
    go = anyio.Event()
    waiting = anyio.Event()
    read: list[int] = []
    ahead: list[int] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        waiting.set()
        await go.wait()  # the body streams in meanwhile, read ahead or left in the kernel
        cycle = getattr(receive, "__self__")  # noqa: B009 - uvicorn's request cycle
        ahead.append(len(cycle.body))  # what it buffered of the body
        more = True
        while more:
            message = await receive()
            read.append(len(message.get("body", b"")))
            more = message.get("more_body", False)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"%d" % sum(read)})

    size = 2 * MIB
    async with (
        serving(app, memory_budget=budget, http=http_impl) as base,
        httpx.AsyncClient(timeout=30) as http,
    ):

        async def slow_body() -> AsyncIterator[bytes]:
            yield b"a" * 1024  # with the head, most likely
            await anyio.sleep(0.1)  # the rest once the head is in
            yield b"b" * (size - 1024)

        async def post() -> httpx.Response:
            return await http.post(
                f"{base}/", content=slow_body(), headers={"content-length": str(size)}
            )

        async with anyio.create_task_group() as tg:
            answer: list[httpx.Response] = []
            tg.start_soon(lambda: _append(answer, post()))
            await waiting.wait()
            await anyio.sleep(0.3)
            # With room, what uvicorn may read ahead is held; without, it reads no more of the
            # body until the app asks for it, and what came with the head is held (charged).
            # The open request's own objects are held either way (charged: ``REQUEST_BYTES``).
            if room:
                assert budget.used == spent + REQUEST_BYTES + _READ_AHEAD, budget
            else:
                assert spent + REQUEST_BYTES <= budget.used <= spent + REQUEST_BYTES + 1024
            go.set()
        assert answer[0].status_code == 200 and answer[0].text == str(size)
        if room:  # uvicorn read on to its high-water mark (64 KiB)
            assert 64 * 1024 < ahead[0] <= _READ_AHEAD, ahead
        else:  # paused at the head: what came with it at most
            assert ahead[0] <= 1024, ahead
        assert budget.used == spent, "given back once the body has all come"


async def _append(into: list[httpx.Response], response: Awaitable[httpx.Response]) -> None:
    into.append(await response)


@pytest.mark.parametrize("http_impl", ["httptools", "h11"])
async def test_uvicorn_drops_what_it_read_of_a_body_answered_unread(http_impl: str) -> None:
    # A POST refused unread (503 busy) left what uvicorn had read of its body in the request
    # cycle until the connection's next request, after the budget had given it back: about
    # 100 KiB a refused 3 MiB POST, 10 MiB over the 100 of the tests above.
    from mcpbind.runtime.transports.http.uvicorn import serving

    budget = MemoryBudget(8 * MIB)
    cycles: list[Any] = []
    buffered: list[int] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        cycle = getattr(receive, "__self__")  # noqa: B009 - uvicorn's request cycle
        cycles.append(cycle)
        with anyio.fail_after(10):
            while not cycle.body:  # read ahead of the app meanwhile
                await anyio.sleep(0.01)
        buffered.append(len(cycle.body))
        assert budget.used >= REQUEST_BYTES, budget  # the open request is held
        await send({"type": "http.response.start", "status": 503, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async with (
        serving(app, memory_budget=budget, http=http_impl) as base,
        httpx.AsyncClient(timeout=30) as http,
    ):
        response = await http.post(f"{base}/", content=b"a" * (2 * MIB))
        assert response.status_code == 503
        assert buffered[0] > 0
        assert len(cycles[0].body) == 0, "dropped once answered"
        assert budget.used == 0, "the request and its read-ahead given back"


@pytest.mark.parametrize("http_impl", ["httptools", "h11"])
async def test_uvicorn_keeps_a_pipelined_body_when_an_earlier_answer_completes(
    http_impl: str,
) -> None:
    # httptools makes a pipelined request's cycle the protocol's before the earlier response
    # completes: the body dropped then is the earlier request's, never the one waiting.
    from mcpbind.runtime.transports.http.uvicorn import serving

    budget = MemoryBudget(8 * MIB)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/first":
            await anyio.sleep(0.2)  # the second request has all come meanwhile
            body = b""
        else:
            body = (await receive())["body"]
        headers = [(b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    request = b"POST /%s HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n%s"
    async with serving(app, memory_budget=budget, http=http_impl) as base:
        host, port = base.removeprefix("http://").split(":")
        async with await anyio.connect_tcp(host, int(port)) as stream:
            await stream.send(
                request % (b"first", 5, b"first") + request % (b"second", 5, b"hello")
            )
            answer = b""
            with anyio.fail_after(10):
                while not answer.endswith(b"hello"):
                    answer += await stream.receive()
        assert answer.count(b"HTTP/1.1 200") == 2
    assert budget.used == 0
