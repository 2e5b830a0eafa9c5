"""Soak benchmark (not a test): ``python bench/soak.py [--duration 600] [--only http|stdio]``.

Long runs under steady load, to see what short benchmarks cannot: memory that creeps, calls
that get lost, latency that drifts. Each server runs in its own process; the same client
drives mcpbind and the official Python SDK in the same run, one after the other.

* **HTTP** (Streamable HTTP, ``bench/soak_servers.py``): 32 concurrent clients, each a loop
  of sessions (``initialize``, 50-200 calls, ``DELETE``). A call is ``echo`` (85 %) or
  ``count`` (15 %: 20 progress notifications, then the answer); half the ``count`` calls are
  cut by the client after a random number of events, and resumed after a random pause (up to
  0.5 s) with ``GET`` + ``Last-Event-ID``. Every notification and every answer must arrive
  exactly once: ``lost`` counts what never came, ``dup`` what came twice. Both servers resume
  from the same bounded event store (mcpbind's), so the transports are compared.
* **stdio**: the example server (``examples/server.py``) and the SDK's
  (``tests/runtime/sdk_server.py``) saturated with ``echo`` calls, 64 always in flight;
  ``lost`` is requests never answered (after a drain at the end).

Reported per ``--interval``: calls/s, p50 and p99 latency of the calls answered in it, and the
server's RSS; then one summary line per server. The client is httpx (HTTP) or a bare pipe
driver (stdio): the same for both servers, and on the same cores, so the figures compare the
servers rather than measure them absolutely. Results from one run are in ``bench/SOAK.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)
import httpx
import orjson

ROOT = Path(__file__).resolve().parents[1]
CLIENTS = 32
STDIO_IN_FLIGHT = 64
STEPS = 20
#: A call not answered by then counts as an error (and what it missed as lost).
CALL_TIMEOUT = 20.0
VERSION = "2025-11-25"


# -- measuring ------------------------------------------------------------------------------


@dataclass
class Stats:
    """What one server's run produced, bucketed by interval."""

    interval: float
    started: float = field(default_factory=time.monotonic)
    latencies: dict[int, list[float]] = field(default_factory=dict)
    rss: dict[int, float] = field(default_factory=dict)
    counts: dict[int, int] = field(default_factory=dict)
    duration: float = 0.0
    calls: int = 0
    lost: int = 0
    dup: int = 0
    errors: int = 0
    cuts: int = 0
    resumes: int = 0
    sessions: int = 0
    samples: list[str] = field(default_factory=list)

    def bucket(self) -> int:
        return int((time.monotonic() - self.started) // self.interval)

    def answered(self, seconds: float | None) -> None:
        """A call answered; its latency if it was not cut and resumed on purpose."""
        self.calls += 1
        done = self.latencies.setdefault(self.bucket(), [])
        if seconds is not None:
            done.append(seconds)
        self.counts[self.bucket()] = self.counts.get(self.bucket(), 0) + 1

    def error(self, what: str) -> None:
        self.errors += 1
        if len(self.samples) < 5:
            self.samples.append(what[:200])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def watch_rss(pid: int, stats: Stats, stop: float) -> None:
    while time.monotonic() < stop:
        try:
            stats.rss[stats.bucket()] = max(stats.rss.get(stats.bucket(), 0.0), rss_mb(pid))
        except FileNotFoundError:
            return
        await asyncio.sleep(1.0)


def p(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def report(name: str, stats: Stats) -> str:
    """A row per interval (the drain after the last one left out), then a summary line."""
    lines = [
        f"\n{name}",
        "  t (s) | calls/s | p50 ms | p99 ms | RSS MB",
        "  ----: | ------: | -----: | -----: | -----:",
    ]
    rows = range(int(stats.duration // stats.interval))
    for bucket in rows:
        done = stats.latencies.get(bucket, [])
        calls = stats.counts.get(bucket, 0)
        lines.append(
            f"  {int((bucket + 1) * stats.interval):5d} | {calls / stats.interval:7.0f} | "
            f"{p(done, 0.5):6.1f} | {p(done, 0.99):6.1f} | {stats.rss.get(bucket, 0.0):6.1f}"
        )
    everything = [x for bucket in rows for x in stats.latencies.get(bucket, [])]
    rss = [stats.rss[b] for b in rows if b in stats.rss]
    lines.append(
        f"  summary: {stats.calls} calls, {stats.calls / stats.duration:.0f}/s, "
        f"p50 {p(everything, 0.5):.1f} ms, p99 {p(everything, 0.99):.1f} ms, "
        f"RSS {rss[0] if rss else 0:.0f} -> {rss[-1] if rss else 0:.0f} MB "
        f"(max {max(rss, default=0):.0f}), lost {stats.lost}, dup {stats.dup}, "
        f"errors {stats.errors}, sessions {stats.sessions}, cuts {stats.cuts}, "
        f"resumes {stats.resumes}"
    )
    lines += [f"  error: {s}" for s in stats.samples]
    return "\n".join(lines)


# -- HTTP ------------------------------------------------------------------------------------


class Call:
    """One tools/call's events as they arrive: progress seen, the answer, the last event id."""

    def __init__(self, request_id: int) -> None:
        self.id = request_id
        self.progress: list[int] = []
        self.answer: Any = None
        self.last_event_id: str | None = None

    def take(self, message: Any, stats: Stats) -> None:
        if message.get("method") == "notifications/progress":
            self.progress.append(int(message["params"]["progress"]))
        elif message.get("id") == self.id and "method" not in message:
            if self.answer is not None:
                stats.dup += 1
            self.answer = message

    async def read_sse(self, response: httpx.Response, stats: Stats, cut_after: int | None) -> bool:
        """Read events until the answer (True) or the cut (False) or the end (False)."""
        data: list[str] = []
        event_id: str | None = None
        seen = 0
        async for line in response.aiter_lines():
            if line.startswith("id:"):
                event_id = line[3:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
            elif line == "":
                if event_id is not None:
                    self.last_event_id = event_id
                if data and data[0]:
                    self.take(orjson.loads("\n".join(data)), stats)
                    seen += 1
                data, event_id = [], None
                if self.answer is not None:
                    return True
                if cut_after is not None and seen >= cut_after:
                    return False
        return self.answer is not None


class HttpWorker:
    """One client: sessions one after another, calls one after another."""

    def __init__(self, url: str, stats: Stats, stop: float, seed: int) -> None:
        self.url = url
        self.stats = stats
        self.stop = stop
        self.rng = random.Random(seed)
        # Request ids unique across clients: the SDK keys the streams of its one event store
        # (shared by all sessions) by request id, so ids that repeat across sessions, as
        # every client's do, mix their replays (see SOAK.md).
        self.next_id = seed * 10_000_000
        self.headers: dict[str, str] = {}

    async def run(self) -> None:
        limits = httpx.Limits(max_connections=4, max_keepalive_connections=4)
        async with httpx.AsyncClient(timeout=30, limits=limits) as http:
            while time.monotonic() < self.stop:
                try:
                    await self.session(http)
                except (httpx.HTTPError, ValueError, KeyError) as exc:
                    self.stats.error(f"{type(exc).__name__}: {exc}")
                    await asyncio.sleep(0.1)

    async def session(self, http: httpx.AsyncClient) -> None:
        base = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": VERSION,
                "capabilities": {},
                "clientInfo": {"name": "soak", "version": "0"},
            },
        }
        async with http.stream("POST", self.url, json=init, headers=base) as response:
            call = Call(0)
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                await call.read_sse(response, self.stats, None)
            else:
                call.answer = json.loads(await response.aread())
            session_id = response.headers["mcp-session-id"]
        self.headers = {**base, "mcp-session-id": session_id, "mcp-protocol-version": VERSION}
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await http.post(self.url, json=done, headers=self.headers)
        self.stats.sessions += 1
        for _ in range(self.rng.randint(50, 200)):
            if time.monotonic() >= self.stop:
                break
            if self.rng.random() < 0.85:
                await self.call(http, "echo", {"text": "soak"}, None)
            else:
                cut = self.rng.randint(1, STEPS) if self.rng.random() < 0.5 else None
                await self.call(http, "count", {"steps": STEPS, "delay": 0.002}, cut)
        await http.delete(self.url, headers=self.headers)

    async def call(
        self, http: httpx.AsyncClient, tool: str, arguments: dict[str, Any], cut: int | None
    ) -> None:
        self.next_id += 1
        call = Call(self.next_id)
        message = {
            "jsonrpc": "2.0",
            "id": call.id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": {"progressToken": call.id}},
        }
        started = time.monotonic()
        try:
            async with asyncio.timeout(CALL_TIMEOUT):
                await self.exchange(http, call, tool, message, cut)
        except TimeoutError:
            self.stats.error(f"{tool}: no answer within {CALL_TIMEOUT} s")
        self.check(call, tool, started)

    async def exchange(
        self, http: httpx.AsyncClient, call: Call, tool: str, message: Any, cut: int | None
    ) -> None:
        async with http.stream("POST", self.url, json=message, headers=self.headers) as response:
            if response.status_code != 200:
                self.stats.error(
                    f"POST {tool}: HTTP {response.status_code} {(await response.aread())[:100]!r}"
                )
                return
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                finished = await call.read_sse(response, self.stats, cut)
            else:
                call.take(json.loads(await response.aread()), self.stats)
                finished = True
        if not finished:
            self.stats.cuts += cut is not None
            await asyncio.sleep(self.rng.uniform(0, 0.5))
            await self.resume(http, call)

    async def resume(self, http: httpx.AsyncClient, call: Call) -> None:
        """Reconnect with Last-Event-ID until the answer has come (a stream may be cut again)."""
        for _ in range(5):
            if call.last_event_id is None:
                self.stats.error("a cut stream had no event id to resume from")
                return
            headers = {
                **self.headers,
                "accept": "text/event-stream",
                "last-event-id": call.last_event_id,
            }
            async with http.stream("GET", self.url, headers=headers) as response:
                self.stats.resumes += 1
                if response.status_code != 200:
                    self.stats.error(
                        f"resume: HTTP {response.status_code} {(await response.aread())[:100]!r}"
                    )
                    return
                if await call.read_sse(response, self.stats, None):
                    return

    def check(self, call: Call, tool: str, started: float) -> None:
        expected = list(range(1, STEPS + 1)) if tool == "count" else []
        unique = set(call.progress)
        self.stats.dup += len(call.progress) - len(unique)
        self.stats.lost += len(set(expected) - unique) + (call.answer is None)
        if call.answer is None:
            return
        if "error" in call.answer:
            self.stats.error(f"{tool}: {call.answer['error']}")
            return
        self.stats.answered(None if tool == "count" else time.monotonic() - started)


async def soak_http(name: str, duration: float, interval: float) -> Stats:
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "soak_servers.py"), name],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    while not url.startswith("http://"):  # the SDK prints a line of its own first
        url = process.stdout.readline().strip()
    stats = Stats(interval, duration=duration)
    stop = time.monotonic() + duration
    try:
        workers = [HttpWorker(url, stats, stop, seed).run() for seed in range(CLIENTS)]
        await asyncio.gather(watch_rss(process.pid, stats, stop), *workers)
    finally:
        process.kill()
        process.wait()
    return stats


# -- stdio -----------------------------------------------------------------------------------


async def soak_stdio(name: str, duration: float, interval: float) -> Stats:
    argv = {
        "mcpbind": [sys.executable, "-m", "examples.server"],
        "python-sdk": [sys.executable, str(ROOT / "tests" / "runtime" / "sdk_server.py")],
    }[name]
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=ROOT,
        limit=2**24,
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    stats = Stats(interval, duration=duration)
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "soak", "version": "0"},
        },
    }
    stdin.write(orjson.dumps(init) + b"\n")
    await stdin.drain()
    await stdout.readline()
    stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    pending: dict[int, float] = {}
    slots = asyncio.Semaphore(STDIO_IN_FLIGHT)
    stop = time.monotonic() + duration

    async def write() -> None:
        n = 0
        while time.monotonic() < stop:
            await slots.acquire()
            n += 1
            pending[n] = time.monotonic()
            call = {
                "jsonrpc": "2.0",
                "id": n,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "soak"}},
            }
            stdin.write(orjson.dumps(call) + b"\n")
            await stdin.drain()

    async def read() -> None:
        while True:
            line = await stdout.readline()
            if not line:
                return
            message = orjson.loads(line)
            sent = pending.pop(message.get("id"), None)
            if sent is None:
                continue
            slots.release()
            if "error" in message or message.get("result", {}).get("isError"):
                stats.error(str(message)[:200])
            else:
                stats.answered(time.monotonic() - sent)

    reader = asyncio.create_task(read())
    try:
        await asyncio.gather(write(), watch_rss(process.pid, stats, stop))
        deadline = time.monotonic() + 10
        while pending and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        stats.lost = len(pending)
    finally:
        reader.cancel()
        process.kill()
        await process.wait()
    return stats


async def main(duration: float, interval: float, only: str | None, servers: list[str]) -> None:
    out: list[str] = []
    for kind, soak in (("http", soak_http), ("stdio", soak_stdio)):
        if only not in (None, kind):
            continue
        for name in servers:
            stats = await soak(name, duration, interval)
            text = report(f"{kind} {name} ({duration:.0f} s)", stats)
            print(text, flush=True)
            out.append(text)
    print("\n".join(out))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration", type=float, default=600.0, help="seconds per server")
    parser.add_argument("--interval", type=float, default=30.0, help="seconds per report row")
    parser.add_argument("--only", choices=["http", "stdio"])
    parser.add_argument(
        "--servers", default="mcpbind,python-sdk", help="comma-separated: mcpbind, python-sdk"
    )
    args = parser.parse_args()
    asyncio.run(main(args.duration, args.interval, args.only, args.servers.split(",")))
