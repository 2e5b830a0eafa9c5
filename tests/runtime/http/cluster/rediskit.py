"""A real ``redis-server`` for the cluster tests: a unix socket in a temp dir, no persistence.

``RedisServer`` starts, stops and restarts one ``redis-server`` process (same socket on restart,
so clients reconnect to the same ``unix://`` URL). A unix socket in a directory of its own
cannot be taken by another process, as a TCP port chosen free and bound later can.
``ensure_redis_server()`` finds the binary, or has ``debkit`` install it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from debkit import ensure_binary
from portkit import listening_socket

START_TIMEOUT = 10.0


class RedisUnavailable(RuntimeError):
    """``redis-server`` did not start or answer."""


def ensure_redis_server() -> str:
    """The path of ``redis-server`` (``debkit`` installs it when root and missing)."""
    return ensure_binary("redis-server")


def _ping(path: Path) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            sock.connect(str(path))
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` process; ``url`` stays the same across ``stop()`` / ``start()``."""

    def __init__(self, binary: str | None = None) -> None:
        self.binary = binary or ensure_redis_server()
        self.dir = Path(tempfile.mkdtemp(prefix="mcpbind-redis-"))
        self.socket_path = self.dir / "redis.sock"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return self.db_url(0)

    def db_url(self, db: int) -> str:
        """The URL of database ``db`` on this server."""
        return f"unix://{self.socket_path}?db={db}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        if self.running:
            return
        log = open(self.dir / "redis.log", "ab")  # noqa: SIM115 - handed to the child process
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port", "0",  # no TCP at all
                "--unixsocket", str(self.socket_path),
                "--unixsocketperm", "700",
                "--dir", str(self.dir),
                "--save", "",
                "--appendonly", "no",
                "--protected-mode", "no",
                "--daemonize", "no",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RedisUnavailable(f"redis-server exited: {self.log_tail()}")
            if _ping(self.socket_path):
                return
            time.sleep(0.02)
        self.stop()
        raise RedisUnavailable(f"redis-server did not answer PING in {START_TIMEOUT} s")

    def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL); its data goes with it (no persistence)."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)

    def restart(self) -> None:
        self.stop()
        self.start()

    def log_tail(self, lines: int = 20) -> str:
        path = self.dir / "redis.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@contextmanager
def redis_server() -> Iterator[RedisServer]:
    """A started ``RedisServer``, stopped and removed on exit."""
    server = RedisServer()
    try:
        server.start()
        yield server
    finally:
        server.close()


HERE = Path(__file__).resolve().parent


@dataclass
class Worker:
    """One in-process worker: its ``Server``, its endpoint, its URL and its shared state."""

    server: Any
    app: Any
    url: str
    state: Any


@asynccontextmanager
async def workers(
    redis_url: str,
    count: int,
    prefix: str,
    build: Callable[[], Any] | None = None,
    first: int = 0,
    state: dict[str, Any] | None = None,
    **options: Any,
) -> AsyncIterator[list[Worker]]:
    """``count`` of our servers on uvicorn (127.0.0.1, ephemeral ports) sharing one Redis; each
    has its own ``Server`` (``build``, default ``httpkit.build_server``); worker ids w0, w1...
    (from ``first``); ``state`` goes to each ``RedisState``, ``options`` to each
    ``StreamableHTTPServer``."""
    from httpkit import build_server
    from mcpbind.runtime.cluster import RedisState
    from mcpbind.runtime.http import StreamableHTTPServer, serving

    async with AsyncExitStack() as stack:
        out = []
        for n in range(first, first + count):
            server = (build or build_server)()
            shared = RedisState.from_url(
                redis_url, worker_id=f"w{n}", prefix=prefix, **(state or {})
            )
            stack.push_async_callback(shared.aclose)
            app = StreamableHTTPServer(server.serve, shared=shared, **options)
            base = await stack.enter_async_context(serving(app))
            out.append(Worker(server, app, f"{base}/mcp", shared))
        yield out


class WorkerProcess:
    """One of our servers (``build``, ``module:function`` returning a ``Server`` or an ``App``;
    default ``httpkit.build_server``) on ``RedisState`` in a process of its own, so a test can
    kill it outright (SIGKILL: no goodbye in Redis, as when a machine dies)."""

    def __init__(
        self, redis_url: str, worker_id: str, prefix: str, build: str = "httpkit:build_server"
    ) -> None:
        # Bound here and inherited: no other process can take the port before the worker serves.
        held = listening_socket()
        self.port = held.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                [
                    str(HERE),
                    str(HERE.parent),
                    str(HERE.parents[2]),
                    os.environ.get("PYTHONPATH", ""),
                ]
            ),
        }
        args = [redis_url, worker_id, prefix, str(held.fileno()), build]
        with held:
            self.process = subprocess.Popen(
                [sys.executable, str(Path(__file__)), "worker", *args],
                env=env,
                pass_fds=(held.fileno(),),
            )
        deadline = time.monotonic() + START_TIMEOUT * 2
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"worker {worker_id} exited with {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"worker {worker_id} did not listen in time")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)


def _worker(redis_url: str, worker_id: str, prefix: str, fd: str, build: str) -> None:
    from importlib import import_module

    from mcpbind.runtime.cluster import RedisState
    from mcpbind.runtime.core.run import run
    from mcpbind.runtime.http import StreamableHTTPServer
    from mcpbind.runtime.transports.http.uvicorn import serving

    module, name = build.split(":")
    built = getattr(import_module(module), name)()
    server = getattr(built, "server", built)  # an App's Server
    state = RedisState.from_url(redis_url, worker_id=worker_id, prefix=prefix)
    app = StreamableHTTPServer(server.serve, shared=state)

    async def serve() -> None:
        async with serving(app, sock=socket.socket(fileno=int(fd))):
            await anyio.sleep_forever()

    run(serve)


if __name__ == "__main__" and len(sys.argv) == 7 and sys.argv[1] == "worker":
    _worker(*sys.argv[2:])
