"""Starting N workers of one app from one command, each a uvicorn process, behind a load balancer.

``serve`` is the supervisor: it starts ``workers`` processes on ports ``port+1 .. port+N`` (each
``python -m mcpbind.runtime.cluster worker ...`` with its own ``MCPBIND_WORKER_ID`` and, when
given, ``MCPBIND_REDIS_URL``, so ``shared_state_from_env()`` gives each the Redis backend), waits
until each answers its health route, optionally writes and runs an haproxy configuration that
balances ``port`` over them, then watches them: a worker that dies is reported on stderr (and
started again with ``restart``); SIGINT or SIGTERM stops every process it started, gracefully
first. Processes, not threads or a fork of one loaded app: each worker opens its own Redis
connections and event loop, which must not be shared across a fork.

The target ``MODULE:ATTR`` is an ``App``, or a callable returning an ``App``, a
``StreamableHTTPServer`` or any ASGI app; a callable with a ``shared`` parameter is handed the
worker's ``SharedState`` (an ``App`` is always wired to it), one without must wire it itself.
Each worker also answers ``GET /healthz`` (its worker id), for the balancer's health checks.
"""

from __future__ import annotations

import inspect
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final, Protocol, cast, runtime_checkable

import anyio
import httpx
from mcpbind.runtime.eras.input_required import STATE_KEY_ENV
from mcpbind.runtime.transports.http.uvicorn import tcp_listener
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.importer import import_from_string

from ._options import check_module, check_redis_url, check_serve_options, check_target
from ._state import DURABLE_TASKS_ENV, REDIS_URL_ENV, WORKER_ID_ENV

__all__ = [
    "HEALTH_PATH",
    "HealthRoute",
    "Supervisor",
    "WorkerSpec",
    "haproxy_config",
    "load_app",
    "run_worker",
    "serve_cluster",
]

#: The route every worker answers for load-balancer health checks.
HEALTH_PATH: Final = "/healthz"
#: How long a worker may take to answer its first health check.
START_TIMEOUT: Final = 30.0
#: How long stopped processes get to finish before they are killed.
STOP_GRACE: Final = 5.0
#: The key of the balancer's socket among the ones the supervisor holds.
_BALANCER: Final = "balancer"
#: glibc's mmap threshold fixed for the workers unless set: blocks of 128 KiB or more are then
#: mapped and given back when freed, so a worker's RSS follows its memory budget (with the
#: sliding default, freed multi-MiB bodies stayed resident: docs/security.md, "Memory budget").
ALLOCATOR_ENV: Final = {"MALLOC_MMAP_THRESHOLD_": "131072"}


@runtime_checkable
class HttpAppMaker(Protocol):
    """What the launcher asks of an app object (an ``App`` is one): its ASGI app on the
    worker's shared state. Named by what it does, so the cluster needs no app-layer import."""

    def http_app(self, **options: Any) -> ASGIApp: ...


def load_app(target: str | Any, shared: Any) -> ASGIApp:
    """The ASGI app ``target`` (``"module:attr"`` or the object itself) names, on ``shared``."""
    from mcpbind.runtime.transports.http.server import StreamableHTTPServer

    found = import_from_string(target) if isinstance(target, str) else target
    if isinstance(found, HttpAppMaker):
        return found.http_app(shared=shared)
    if isinstance(found, StreamableHTTPServer):
        raise TypeError(
            f"{target!r} is a StreamableHTTPServer already built: name a function that builds "
            "it (taking `shared`), so each worker builds its own on its shared state"
        )
    if not callable(found):
        raise TypeError(f"{target!r} is neither an App nor a callable that builds an ASGI app")
    try:
        takes_shared = "shared" in inspect.signature(found).parameters
    except (TypeError, ValueError):
        takes_shared = False
    built = found(shared=shared) if takes_shared else found()
    if isinstance(built, HttpAppMaker):
        return built.http_app(shared=shared)
    if not callable(built):
        raise TypeError(f"{target!r} returned {type(built).__name__}, not an ASGI app")
    # A factory's callable: what else it is, only calling it can tell.
    return cast("ASGIApp", built)


class HealthRoute:
    """``app``, with ``GET path`` answered 200 and the worker's id (everything else passes).

    A class rather than a closure so that ``close_subscriptions`` still reaches the app:
    ``serving()`` calls it on the way out, giving open listen streams their graceful end.
    """

    def __init__(self, app: ASGIApp, worker_id: str, path: str = HEALTH_PATH) -> None:
        self.app = app
        self.path = path
        self.body = json.dumps({"worker": worker_id}).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["path"] == self.path
            and scope["method"]
            in (
                "GET",
                "HEAD",
            )
        ):
            headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
            headers.append((b"content-length", str(len(self.body)).encode()))
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": self.body})
            return
        await self.app(scope, receive, send)

    async def close_subscriptions(self) -> None:
        closer = getattr(self.app, "close_subscriptions", None)
        if closer is not None:
            await closer()


def run_worker(
    target: str, host: str, port: int, app_dir: str | None = None, fd: int | None = None
) -> None:
    """One worker: build the app on ``shared_state_from_env()`` and serve it until SIGINT,
    SIGTERM, or the supervisor that started it being gone (killed outright). ``fd``: the
    listening socket the supervisor bound for it (then ``port`` only names it)."""
    from mcpbind.runtime.core.lifespan import LifespanStartupError
    from mcpbind.runtime.core.run import run

    if app_dir is not None:
        sys.path.insert(0, app_dir)
    # What can be wrong before serving is one line and status 1: the Redis URL of the
    # environment, the target, the inherited socket, the port (bound here, before any task group).
    url = os.environ.get(REDIS_URL_ENV)
    try:
        if url:
            check_redis_url(url, REDIS_URL_ENV)
        check_target(target)
    except ValueError as exc:
        raise SystemExit(f"mcpbind cluster worker: {exc}") from None
    try:
        sock = tcp_listener(host, port) if fd is None else socket.socket(fileno=fd)
    except (OSError, OverflowError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise SystemExit(f"mcpbind cluster worker: cannot serve on {host}:{port}: {why}") from None
    try:
        run(_serve_worker, target, host, port, os.getppid(), sock)
    except LifespanStartupError as exc:
        raise SystemExit(f"mcpbind: {exc}") from None


async def _serve_worker(
    target: str, host: str, port: int, parent: int, sock: socket.socket
) -> None:
    from mcpbind.runtime.transports.http.lifespan import owner_running
    from mcpbind.runtime.transports.http.uvicorn import serving

    from ._state import default_worker_id, shared_state_from_env

    served = load_app(target, shared_state_from_env())
    app = HealthRoute(served, default_worker_id())
    # The server's lifespan entered first (the app's ASGI lifespan then shares it): a failing
    # startup is one line and status 1, not uvicorn exiting from inside its task.
    async with (
        owner_running(getattr(served, "serve", None)),
        serving(app, host, port, sock=sock),
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(_until_signal, tg.cancel_scope)
        while os.getppid() == parent:
            await anyio.sleep(1.0)
        tg.cancel_scope.cancel()


async def _until_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            scope.cancel()
            return


@dataclass(frozen=True)
class WorkerSpec:
    """One worker the supervisor runs: its name (``MCPBIND_WORKER_ID``) and port."""

    name: str
    port: int


def haproxy_config(
    workers: Sequence[WorkerSpec],
    port: int,
    host: str = "127.0.0.1",
    *,
    check_ms: int = 1000,
    timeout_s: int = 300,
    sticky: bool = False,
    listen_fd: int | None = None,
) -> str:
    """An haproxy configuration: ``host:port`` balanced round robin over ``workers``, each
    checked on ``HEALTH_PATH`` every ``check_ms`` (down after 2 failures, each allowed 2 s: a
    busy worker is not a dead one). A connection refused by a dead worker is retried on
    another (``redispatch``): the request never reached it, so that is safe for any method. The client and server
    timeouts must outlast an idle SSE stream (our keep-alive comments come every 15 s).

    No stickiness by default: any worker serves any request, handshake-era ones forwarded to
    their session's owner. ``sticky`` adds a stick table that learns each ``Mcp-Session-Id``
    from the response that issued it and sends the session's later requests to that worker,
    which saves the forwarding hop; requests without the header stay round robin, and a
    session whose worker is down goes elsewhere (forwarded, or 404 if it died). ``listen_fd``:
    haproxy listens on that inherited socket (``bind fd@N``, bound to ``host:port`` by the
    supervisor that runs it) instead of binding ``host:port`` itself."""
    stick = (
        "    stick-table type string len 128 size 1m expire 30m\n"
        "    stick on req.hdr(mcp-session-id)\n"
        "    stick store-response res.hdr(mcp-session-id)\n"
        if sticky
        else ""
    )
    bind = (
        f"    bind {host}:{port}"
        if listen_fd is None
        else f"    # {host}:{port}, bound by the supervisor and inherited\n    bind fd@{listen_fd}"
    )
    servers = "\n".join(
        f"    server {w.name.replace(':', '_')} 127.0.0.1:{w.port} check" for w in workers
    )
    return f"""\
# Generated by `python -m mcpbind.runtime.cluster serve --haproxy ...`.
global
    maxconn 4096

defaults
    mode http
    option http-keep-alive
    option redispatch
    retries 2
    timeout connect 2s
    timeout client {timeout_s}s
    timeout server {timeout_s}s
    timeout http-request 15s
    timeout http-keep-alive 15s
    timeout check 2s

frontend mcp
{bind}
    default_backend mcp_workers

backend mcp_workers
    balance roundrobin
    option httpchk GET {HEALTH_PATH}
    http-check expect status 200
    default-server inter {check_ms}ms fall 2 rise 2
{stick}{servers}
"""


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now (the kernel's pick)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _healthy(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


@dataclass
class Supervisor:
    """Runs the workers (and haproxy, if asked), reports deaths, stops them all on a signal.

    ``port`` is the balancer's; worker ``i`` (1-based) listens on ``port + i``, or on a free
    port when ``port`` is 0 (the balancer then gets one too). The supervisor binds each port
    itself and hands the socket to the process serving it (``--fd``, ``bind fd@N``): a port
    chosen free and bound later by that process could be taken meanwhile by any other one.
    Every worker gets ``state_key``
    as ``MCPBIND_STATE_KEY`` (drawn here unless set), the default key of every
    ``RequestStateKeeper``: a 2026 ``requestState`` sealed by one worker is then opened by any
    other. ``durable_tasks`` keeps the workers' tasks in that Redis too (``MCPBIND_DURABLE_TASKS``:
    a task outlives the worker running it). ``out`` receives one line per
    process started (``worker NAME pid PID URL``, ``balancer pid PID URL``) and ``ready``.
    """

    target: str
    workers: int = 3
    host: str = "127.0.0.1"
    port: int = 9000
    redis_url: str | None = None
    app_dir: str | None = None
    haproxy_path: Path | None = None
    run_haproxy: bool = False
    haproxy_binary: str = "haproxy"
    restart: bool = False
    sticky: bool = False
    check_ms: int = 1000
    durable_tasks: bool = False
    out: IO[str] = field(default_factory=lambda: sys.stdout)
    state_key: str = field(
        default_factory=lambda: os.environ.get(STATE_KEY_ENV) or secrets.token_urlsafe(32)
    )
    specs: list[WorkerSpec] = field(init=False, default_factory=list[WorkerSpec])
    processes: dict[str, subprocess.Popen[bytes]] = field(
        init=False, default_factory=dict[str, subprocess.Popen[bytes]]
    )
    balancer: subprocess.Popen[bytes] | None = field(init=False, default=None)
    stopping: threading.Event = field(init=False, default_factory=threading.Event)
    #: Sockets bound for the workers and the balancer, held until their process inherits them.
    _sockets: dict[str, socket.socket] = field(init=False, default_factory=dict[str, socket.socket])

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError("at least one worker")
        held: list[socket.socket] = []
        if self.port == 0:
            # The kernel's picks, held from now on (a configuration that haproxy is not run
            # with here only names a port, for whoever runs it).
            if self.run_haproxy:
                self._sockets[_BALANCER] = self._listen(0)
                self.port = self._sockets[_BALANCER].getsockname()[1]
            else:
                self.port = free_port(self.host)
            held = [self._listen(0) for _ in range(self.workers)]
            ports = [sock.getsockname()[1] for sock in held]
        else:
            ports = [self.port + i for i in range(1, self.workers + 1)]
        host_name = socket.gethostname()
        self.specs = [WorkerSpec(f"{host_name}:{p}", p) for p in ports]
        self._sockets.update(zip((spec.name for spec in self.specs), held, strict=False))

    def _listen(self, port: int) -> socket.socket:
        """A socket listening on ``port`` (0: the kernel's pick); ``RuntimeError`` if in use."""
        sock: socket.socket | None = None
        try:
            sock = tcp_listener(self.host, port)
            # Listening: only that keeps a port from processes that reuse addresses too.
            sock.listen(socket.SOMAXCONN)
        except (OSError, OverflowError) as exc:  # Overflow: a port beyond 65535
            if sock is not None:
                sock.close()
            why = getattr(exc, "strerror", None) or exc
            raise RuntimeError(f"cannot listen on {self.host}:{port}: {why}") from None
        return sock

    def _handed(self, name: str, port: int) -> socket.socket:
        """The socket held for ``name`` (bound now if none is: a restart), which the caller
        passes to a process and then closes."""
        sock = self._sockets.pop(name, None)
        return sock if sock is not None else self._listen(port)

    def _say(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()

    def _spawn(self, spec: WorkerSpec) -> subprocess.Popen[bytes]:
        env = {
            **ALLOCATOR_ENV,
            **os.environ,
            WORKER_ID_ENV: spec.name,
            STATE_KEY_ENV: self.state_key,
        }
        if self.redis_url is not None:
            env[REDIS_URL_ENV] = self.redis_url
        if self.durable_tasks:
            env[DURABLE_TASKS_ENV] = "1"
        sock = self._handed(spec.name, spec.port)
        with sock:  # the worker's own copy is its; ours goes, so a dead worker refuses
            command = [sys.executable, "-m", "mcpbind.runtime.cluster", "worker", self.target,
                       "--host", self.host, "--port", str(spec.port),
                       "--fd", str(sock.fileno())]  # fmt: skip
            if self.app_dir is not None:
                command += ["--app-dir", self.app_dir]
            process = subprocess.Popen(command, env=env, pass_fds=(sock.fileno(),))
        self.processes[spec.name] = process
        return process

    def _await_ready(self, spec: WorkerSpec, process: subprocess.Popen[bytes]) -> None:
        url = f"http://{self.host}:{spec.port}{HEALTH_PATH}"
        deadline = time.monotonic() + START_TIMEOUT
        while not _healthy(url):
            if process.poll() is not None:
                raise RuntimeError(f"worker {spec.name} exited with code {process.returncode}")
            if time.monotonic() > deadline or self.stopping.is_set():
                raise RuntimeError(f"worker {spec.name} did not answer {url} in time")
            time.sleep(0.05)
        self._say(f"worker {spec.name} pid {process.pid} http://{self.host}:{spec.port}/mcp")

    def start(self) -> None:
        """Start every worker (all at once), wait for each, then the balancer if asked.
        Every port is bound first: one in use ends the command before anything runs."""
        if self.run_haproxy and _BALANCER not in self._sockets:
            self._sockets[_BALANCER] = self._listen(self.port)
        for spec in self.specs:
            if spec.name not in self._sockets:
                self._sockets[spec.name] = self._listen(spec.port)
        started = [(spec, self._spawn(spec)) for spec in self.specs]
        for spec, process in started:
            self._await_ready(spec, process)
        if self.haproxy_path is not None:
            balancer = self._sockets.pop(_BALANCER, None)
            text = haproxy_config(
                self.specs,
                self.port,
                self.host,
                check_ms=self.check_ms,
                sticky=self.sticky,
                listen_fd=None if balancer is None else balancer.fileno(),
            )
            self.haproxy_path.write_text(text)
            self._say(f"haproxy configuration {self.haproxy_path}")
            if balancer is not None:
                with balancer:
                    self._start_haproxy(self.haproxy_path, balancer)
        self._say("ready")

    def _start_haproxy(self, config: Path, sock: socket.socket) -> None:
        """Run haproxy on ``sock`` (inherited); ready once a health check through it answers."""
        # -db: stay in the foreground (a child we can stop); -W would fork a master.
        self.balancer = subprocess.Popen(
            [self.haproxy_binary, "-db", "-f", str(config)], pass_fds=(sock.fileno(),)
        )
        url = f"http://{self.host}:{self.port}{HEALTH_PATH}"
        deadline = time.monotonic() + START_TIMEOUT
        while not _healthy(url):
            if self.balancer.poll() is not None:
                raise RuntimeError(f"haproxy exited with code {self.balancer.returncode}")
            if time.monotonic() > deadline or self.stopping.is_set():
                raise RuntimeError(f"haproxy did not answer {url} in time")
            time.sleep(0.05)
        self._say(f"balancer pid {self.balancer.pid} http://{self.host}:{self.port}/mcp")

    def watch(self) -> int:
        """Until a signal (or the balancer dies): report dead workers, restart them if asked.
        Returns the exit status: 0 when stopped by a signal."""
        while not self.stopping.wait(0.2):
            if self.balancer is not None and self.balancer.poll() is not None:
                print(f"mcpbind cluster: haproxy exited with code {self.balancer.returncode}; "
                      "stopping", file=sys.stderr, flush=True)  # fmt: skip
                return 1
            for spec in self.specs:
                process = self.processes.get(spec.name)
                if process is None or process.poll() is None:
                    continue
                print(f"mcpbind cluster: worker {spec.name} (pid {process.pid}, port "
                      f"{spec.port}) exited with code {process.returncode}",
                      file=sys.stderr, flush=True)  # fmt: skip
                del self.processes[spec.name]
                if self.restart:
                    self._await_ready(spec, self._spawn(spec))
            if not self.processes and not self.restart:
                print("mcpbind cluster: every worker is gone; stopping", file=sys.stderr)
                return 1
        return 0

    def stop(self) -> None:
        """SIGTERM to the balancer and every worker, SIGKILL to those still there after
        ``STOP_GRACE`` seconds."""
        for sock in self._sockets.values():
            sock.close()
        self._sockets.clear()
        running = list(self.processes.values())
        if self.balancer is not None:
            running.append(self.balancer)
        for process in running:
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + STOP_GRACE
        for process in running:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes.clear()
        self.balancer = None

    def run(self) -> int:
        """Start, watch until SIGINT/SIGTERM, stop: the whole ``serve`` command."""

        def stop_on(signum: int, frame: Any) -> None:
            self.stopping.set()

        previous = {s: signal.signal(s, stop_on) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.start()
            return self.watch()
        except RuntimeError as failure:
            print(f"mcpbind cluster: {failure}", file=sys.stderr, flush=True)
            return 1
        except OSError as failure:  # writing the configuration, starting haproxy
            where = f": {failure.filename}" if failure.filename else ""
            print(f"mcpbind cluster: {failure.strerror or failure}{where}", file=sys.stderr,
                  flush=True)  # fmt: skip
            return 1
        finally:
            self.stop()
            for signum, handler in previous.items():
                signal.signal(signum, handler)


def serve_cluster(
    target: str,
    *,
    workers: int = 3,
    host: str = "127.0.0.1",
    port: int = 9000,
    redis_url: str | None = None,
    app_dir: str | None = None,
    haproxy_path: Path | None = None,
    run_haproxy: bool = False,
    haproxy_binary: str = "haproxy",
    restart: bool = False,
    sticky: bool = False,
    check_ms: int = 1000,
    durable_tasks: bool = False,
    target_check: Callable[[str, str | None], None] = check_module,
) -> int:
    """The ``serve`` command of both command lines (``mcpbind serve`` and ``python -m
    mcpbind.runtime.cluster serve``): supervise until a signal; the exit status.
    ``ValueError`` (its message one line naming the option) for a bad value or options that
    do not go together, then for a target that ``target_check(target, app_dir)`` refuses (by
    default: its module cannot be found), before any process starts."""
    # The options first: they are cheap, and a target check may run the user's code.
    check_serve_options(
        workers=workers,
        host=host,
        port=port,
        redis_url=redis_url,
        haproxy_path=haproxy_path,
        run_haproxy=run_haproxy,
        haproxy_binary=haproxy_binary,
        check_ms=check_ms,
        durable_tasks=durable_tasks,
    )
    target_check(target, app_dir)
    supervisor = Supervisor(
        target,
        workers=workers,
        host=host,
        port=port,
        redis_url=redis_url,
        app_dir=app_dir,
        haproxy_path=haproxy_path,
        run_haproxy=run_haproxy,
        haproxy_binary=haproxy_binary,
        restart=restart,
        sticky=sticky,
        check_ms=check_ms,
        durable_tasks=durable_tasks,
    )
    return supervisor.run()
