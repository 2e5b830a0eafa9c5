"""N workers behind a real haproxy, started with the project's own command, for the tests.

``running_cluster`` runs ``python -m mcpbind.runtime.cluster serve cluster_app:build
--port 0 --run-haproxy ...`` (the documented command, free ports) as a subprocess and reads what
it prints: each worker's pid and URL, then the balancer's. Tests talk to the balancer, or to
one worker on its own port; ``kill`` ends one worker outright (SIGKILL, as a crash would).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
from haproxykit import ensure_haproxy
from httpkit import ACCEPT_BOTH, INITIALIZE

INITIALIZED = "notifications/initialized"
HERE = Path(__file__).resolve().parent
START_TIMEOUT = 60.0


@dataclass
class Worker:
    name: str
    pid: int
    url: str  # .../mcp

    @property
    def base(self) -> str:
        return self.url.removesuffix("/mcp")

    def stats(self) -> dict[str, int]:
        """The worker's own counters (``StreamableHTTPServer.stats``), from ``/_stats``."""
        answer = httpx.get(f"{self.base}/_stats", timeout=5.0)
        answer.raise_for_status()
        stats: dict[str, int] = answer.json()["stats"]
        return stats


@dataclass
class Cluster:
    process: subprocess.Popen[str]
    workers: list[Worker] = field(default_factory=list)
    url: str = ""  # the balancer's .../mcp
    lines: list[str] = field(default_factory=list)
    stderr_path: Path | None = None
    output: queue.Queue[str | None] = field(default_factory=queue.Queue)

    def next_line(self, timeout: float = START_TIMEOUT) -> str:
        """The supervisor's next line on stdout (e.g. a restarted worker's)."""
        try:
            line = self.output.get(timeout=timeout)
        except queue.Empty:
            raise RuntimeError(f"the supervisor printed nothing:\n{self.stderr()}") from None
        if line is None:
            raise RuntimeError(f"the supervisor exited:\n{self.stderr()}")
        self.lines.append(line)
        return line

    def kill(self, index: int) -> Worker:
        """SIGKILL worker ``index`` (0-based): it dies with whatever it had in flight."""
        worker = self.workers[index]
        os.kill(worker.pid, signal.SIGKILL)
        return worker

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace") if self.stderr_path else ""


def _pump(stream: IO[str], into: queue.Queue[str | None]) -> None:
    for line in stream:
        into.put(line.rstrip("\n"))
    into.put(None)


@contextmanager
def running_cluster(
    tmp: Path,
    redis_url: str | None,
    workers: int = 3,
    target: str = "cluster_app:build",
    app_dir: Path = HERE,
    check_ms: int = 200,
    extra: tuple[str, ...] = (),
) -> Iterator[Cluster]:
    """The cluster, up and balanced; every process it started is stopped on exit (SIGTERM
    to the supervisor, which stops the rest)."""
    command = [sys.executable, "-m", "mcpbind.runtime.cluster", "serve", target,
               "--workers", str(workers), "--port", "0", "--app-dir", str(app_dir),
               "--haproxy", str(tmp / "haproxy.cfg"), "--run-haproxy",
               "--haproxy-bin", ensure_haproxy(), "--check-ms", str(check_ms)]  # fmt: skip
    if redis_url is not None:
        command += ["--redis", redis_url]
    command += extra
    stderr_path = tmp / "cluster.stderr"
    with open(stderr_path, "w") as errors:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True)
    assert process.stdout is not None
    cluster = Cluster(process, stderr_path=stderr_path)
    threading.Thread(target=_pump, args=(process.stdout, cluster.output), daemon=True).start()
    try:
        while True:
            words = cluster.next_line().split()
            if words[0] == "worker":
                cluster.workers.append(Worker(words[1], int(words[3]), words[4]))
            elif words[0] == "balancer":
                cluster.url = words[3]
            elif words[0] == "ready":
                break
        yield cluster
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def sse_events(response: httpx.Response) -> AsyncIterator[tuple[str | None, Any]]:
    """Each SSE event of a streamed response as it comes: (its id, its JSON message or
    ``None`` for a priming event without data)."""
    event_id: str | None = None
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "":
            if event_id is not None or data:
                joined = "\n".join(data).strip()
                yield event_id, json.loads(joined) if joined else None
            event_id, data = None, []


HANDSHAKE = "2025-11-25"


async def open_session(
    http: httpx.AsyncClient, url: str, capabilities: dict[str, Any] | None = None
) -> dict[str, str]:
    """A handshake-era session opened (and initialised) at ``url``, the client advertising
    ``capabilities``: the headers its later requests carry."""
    params = {**INITIALIZE["params"], "capabilities": capabilities or {}}
    opened = await http.post(url, json={**INITIALIZE, "params": params}, headers=ACCEPT_BOTH)
    assert opened.status_code == 200, opened.text
    headers = {**ACCEPT_BOTH, "mcp-session-id": opened.headers["mcp-session-id"],
               "mcp-protocol-version": HANDSHAKE}  # fmt: skip
    done = await http.post(url, json={"jsonrpc": "2.0", "method": INITIALIZED}, headers=headers)
    assert done.status_code == 202, done.text
    return headers
