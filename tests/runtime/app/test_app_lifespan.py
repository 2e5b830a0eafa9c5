"""Lifespans (``App(lifespan=...)``, ``Server(lifespan=...)``): entered once however the server
is served, its value reachable from ``Context`` and ``RequestContext``, exited on shutdown (also
by SIGTERM and Ctrl-C), and a failing startup a clear error, never a hang. The servers
(``lifespan_app``) write ``enter <pid>``/``exit <pid>`` lines to ``$LIFESPAN_LOG``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import lifespan_app
import pytest
from app_helpers import STATELESS
from lifespan_app import State, app, server
from mcpbind.runtime import Client, LifespanNotRunning, LifespanStartupError, StdioParameters
from mcpbind.runtime.app import App, Context
from mcpbind.runtime.http import (
    LegacySSEServer,
    serving,
    sse_client,
    streamable_http_client,
)
from portkit import PortTaken, free_port, listening_socket, on_fresh_port, taken_in

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
LIFESPAN_APP = str(HERE / "lifespan_app.py")
VERSIONS = ["2025-11-25", STATELESS]
FAILED = (
    "server 'lifespan' failed to start: its lifespan raised ConnectionError: database "
    "unreachable (second line)"
)


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "lifespan.log"
    path.touch()
    monkeypatch.setenv("LIFESPAN_LOG", str(path))
    return path


def lines(log: Path) -> list[str]:
    return log.read_text().split("\n")[:-1]


async def state(client: Client) -> dict[str, int]:
    result = await client.call_tool("state")
    found: dict[str, int] = result.structuredContent
    return found


# -- in memory ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
async def test_memory_clients_share_one_lifespan_entered_once(log: Path, version: str) -> None:
    before = lifespan_app.ENTERED
    async with Client(app.memory_transport(), protocol_version=version) as first:
        one = await state(first)
        async with Client(app.memory_transport(), protocol_version=version) as second:
            two = await state(second)
            three = await state(first)
        assert lines(log) == [f"enter {os.getpid()}"]  # the second leaving did not exit it
        four = await state(first)
    assert before + 1 == lifespan_app.ENTERED
    assert [one["entered"], two["entered"], three["entered"], four["entered"]] == [before + 1] * 4
    assert [one["calls"], two["calls"], three["calls"], four["calls"]] == [1, 2, 3, 4]
    assert lines(log) == [f"enter {os.getpid()}", f"exit {os.getpid()}"]
    with pytest.raises(
        LifespanNotRunning, match="the lifespan of server 'lifespan' is not running"
    ):
        _ = app.lifespan_context


async def test_running_spans_many_servings_and_outlives_its_first_user(log: Path) -> None:
    before = lifespan_app.ENTERED
    async with app.running() as value:
        assert value is app.lifespan_context and value.entered == before + 1
        for version in VERSIONS * 2:
            async with Client(app.memory_transport(), protocol_version=version) as client:
                assert (await state(client))["entered"] == before + 1
        assert lines(log) == [f"enter {os.getpid()}"]
    assert len(lines(log)) == 2
    # Whoever entered it first leaves first: the lifespan waits for the others to leave.
    second_done = anyio.Event()
    async with anyio.create_task_group() as tg:
        owner_in, sharer_in = anyio.Event(), anyio.Event()

        async def owner() -> None:
            async with Client(app.memory_transport()) as client:
                await state(client)
                owner_in.set()
                await sharer_in.wait()

        async def sharer() -> None:
            await owner_in.wait()
            async with Client(app.memory_transport()) as client:
                sharer_in.set()
                await anyio.sleep(0.2)  # the owner has left meanwhile
                assert (await state(client))["entered"] == before + 2
                assert lines(log)[-1] == f"enter {os.getpid()}"
            second_done.set()

        tg.start_soon(owner)
        tg.start_soon(sharer)
    assert second_done.is_set() and len(lines(log)) == 4 and lines(log)[-1].startswith("exit")


@pytest.mark.parametrize("version", VERSIONS)
async def test_the_low_level_server_gives_its_handlers_the_value(log: Path, version: str) -> None:
    async with Client(server.memory_transport(), protocol_version=version) as client:
        first = await client.call_tool("anything")
        second = await client.call_tool("anything")
    assert first.content[0].text.endswith(" calls=1")
    assert second.content[0].text.endswith(" calls=2")
    assert lines(log) == [f"enter {os.getpid()}", f"exit {os.getpid()}"]


@asynccontextmanager
async def failing(owner: Any) -> AsyncIterator[State]:
    raise ConnectionError("database unreachable\n(second line)")
    yield State(0)  # pragma: no cover - never reached


async def test_a_failing_startup_is_the_in_memory_clients_error() -> None:
    broken = App("lifespan", lifespan=failing)
    with pytest.raises(LifespanStartupError) as caught:
        async with Client(broken.memory_transport()):
            pytest.fail("served without its lifespan")
    assert str(caught.value) == FAILED
    assert isinstance(caught.value.__cause__, ConnectionError)
    with pytest.raises(LifespanNotRunning):
        _ = broken.lifespan_context


async def test_an_app_without_a_lifespan_has_none() -> None:
    plain = App("plain")

    @plain.tool()
    def value(ctx: Context) -> bool:
        return ctx.lifespan_context is None and ctx.request_context.lifespan_context is None

    async with plain.running() as entered, Client(plain.memory_transport()) as client:
        answer = await client.call_tool("value")
    assert entered is None and plain.lifespan_context is None
    assert answer.structuredContent == {"result": True}


# -- stdio ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["stdio", "server-stdio"])
@pytest.mark.parametrize("version", VERSIONS)
async def test_a_stdio_process_enters_once_and_exits(log: Path, mode: str, version: str) -> None:
    params = StdioParameters(sys.executable, [LIFESPAN_APP, mode])
    async with Client(params, protocol_version=version) as client:
        answers = [await client.call_tool("state") for _ in range(5)]
    if mode == "stdio":
        assert [a.structuredContent["calls"] for a in answers] == [1, 2, 3, 4, 5]
        assert {a.structuredContent["entered"] for a in answers} == {1}
        pid = answers[0].structuredContent["pid"]
    else:
        assert answers[-1].content[0].text == "entered=1 calls=5"
        pid = int(lines(log)[0].split()[1])
    with anyio.fail_after(10):
        while len(lines(log)) < 2:
            await anyio.sleep(0.02)
    assert lines(log) == [f"enter {pid}", f"exit {pid}"]


@pytest.mark.parametrize("mode", ["stdio", "server-stdio"])
def test_a_failing_stdio_startup_exits_1_with_one_line(mode: str) -> None:
    env = {**os.environ, "LIFESPAN_FAIL": "1"}
    name = "lifespan" if mode == "stdio" else "lifespan-server"
    done = subprocess.run(
        [sys.executable, LIFESPAN_APP, mode],
        env=env, stdin=subprocess.PIPE, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 1
    expected = FAILED.replace("'lifespan'", repr(name))
    assert done.stderr == f"mcpbind: {expected}\n"


@contextmanager
def started(*command: str, **options: Any) -> Iterator[subprocess.Popen[bytes]]:
    """A child process, killed if the test fails before it ended."""
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        **options,
    )  # fmt: skip
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=20)
        assert process.stdin is not None and process.stderr is not None
        process.stdin.close()
        process.stderr.close()


def wait_for(log: Path, count: int, process: subprocess.Popen[Any]) -> None:
    deadline = time.monotonic() + 20
    while len(lines(log)) < count:
        assert process.poll() is None or len(lines(log)) >= count, process.returncode
        assert time.monotonic() < deadline, lines(log)
        time.sleep(0.02)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_still_runs_the_exit_part_over_stdio(log: Path, signum: int) -> None:
    with started(sys.executable, LIFESPAN_APP, "stdio") as process:
        wait_for(log, 1, process)
        process.send_signal(signum)
        process.wait(timeout=20)
    assert lines(log) == [f"enter {process.pid}", f"exit {process.pid}"]


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_a_stdio_server_started_with_sigint_ignored_keeps_it_ignored(log: Path) -> None:
    # As a shell without job control starts a background job: Ctrl-C is not for it.
    with started(sys.executable, LIFESPAN_APP, "stdio", preexec_fn=ignore_sigint) as process:
        wait_for(log, 1, process)
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert process.poll() is None
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
    assert lines(log) == [f"enter {process.pid}", f"exit {process.pid}"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_while_the_lifespan_starts_still_runs_its_exit_part(
    log: Path, monkeypatch: pytest.MonkeyPatch, signum: int
) -> None:
    # The signal lands after "enter" and before serving begins: it is kept, then handled.
    monkeypatch.setenv("LIFESPAN_PAUSE", "1.0")
    with started(sys.executable, LIFESPAN_APP, "stdio") as process:
        wait_for(log, 1, process)
        process.send_signal(signum)
        assert process.wait(timeout=20) == 0
    assert lines(log) == [f"enter {process.pid}", f"exit {process.pid}"]


# -- HTTP ----------------------------------------------------------------------------------


async def test_one_http_app_enters_once_for_every_session_of_both_eras(log: Path) -> None:
    before = lifespan_app.ENTERED
    async with serving(app.http_app()) as url:
        assert lines(log) == [f"enter {os.getpid()}"]  # before the first request
        seen = []
        for version in VERSIONS * 2:
            transport = streamable_http_client(f"{url}/mcp")
            async with Client(transport, protocol_version=version) as client:
                seen.append(await state(client))
                seen.append(await state(client))
    assert [s["calls"] for s in seen] == list(range(1, 9))
    assert {s["entered"] for s in seen} == {before + 1}
    assert lines(log) == [f"enter {os.getpid()}", f"exit {os.getpid()}"]


async def test_the_legacy_sse_app_enters_it_too(log: Path) -> None:
    async with serving(LegacySSEServer(app.server.serve)) as url:
        for _ in range(2):
            async with Client(sse_client(f"{url}/sse")) as client:
                assert (await state(client))["entered"] == lifespan_app.ENTERED
        assert lines(log) == [f"enter {os.getpid()}"]
    assert lines(log) == [f"enter {os.getpid()}", f"exit {os.getpid()}"]


def http_up(port: int) -> bool:
    try:
        httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
    except httpx.TransportError:
        return False
    return True


def taken_port(process: subprocess.Popen[bytes]) -> PortTaken | None:
    """``PortTaken`` if ``process`` ended because its port was taken before it bound it."""
    if process.poll() is None or process.stderr is None:
        return None
    return taken_in(process.stderr.read().decode(errors="replace"))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_run_http_serves_once_and_exits_on_a_signal(log: Path, signum: int) -> None:
    # App.run_http takes only a port: a port taken before it binds is tried again.
    def serve(port: int) -> subprocess.Popen[bytes]:
        log.write_text("")  # an attempt's enter and exit are not this test's
        with started(sys.executable, LIFESPAN_APP, "http", str(port)) as process:
            deadline = time.monotonic() + 20
            while not http_up(port):
                if (taken := taken_port(process)) is not None:
                    raise taken
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.05)
            assert len(lines(log)) == 1
            process.send_signal(signum)
            process.wait(timeout=20)
        return process

    process = on_fresh_port(serve, "App.run_http")
    assert lines(log) == [f"enter {process.pid}", f"exit {process.pid}"]


def test_a_failing_run_http_exits_1_with_one_line() -> None:
    # The lifespan fails before the port is bound: no port is held here, none is taken.
    env = {**os.environ, "LIFESPAN_FAIL": "1"}
    done = subprocess.run(
        [sys.executable, LIFESPAN_APP, "http", str(free_port())],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr == f"mcpbind: {FAILED}\n"


def test_plain_uvicorn_reports_the_failing_startup_and_exits_non_zero() -> None:
    env = {**os.environ, "LIFESPAN_FAIL": "1"}
    with listening_socket() as sock:
        command = [sys.executable, "-m", "uvicorn", "--app-dir", str(HERE), "--factory",
                   "lifespan_app:http_app", "--fd", str(sock.fileno())]  # fmt: skip
        done = subprocess.run(
            command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=30, pass_fds=(sock.fileno(),),
        )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert f"ERROR:    {FAILED}\n" in done.stderr
    assert "Traceback" not in done.stderr


# -- cluster workers ---------------------------------------------------------------------


@pytest.fixture
def workers(log: Path) -> Iterator[list[tuple[subprocess.Popen[Any], int]]]:
    started = []
    for _ in range(2):
        # Bound here and handed over (--fd): no other process can take the port meanwhile.
        with listening_socket() as sock:
            port, fd = sock.getsockname()[1], sock.fileno()
            command = [sys.executable, "-m", "mcpbind.runtime.cluster", "worker",
                       "lifespan_app:app", "--port", str(port), "--fd", str(fd),
                       "--app-dir", str(HERE)]  # fmt: skip
            process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(sock.fileno(),)
            )
            started.append((process, port))
    try:
        yield started
    finally:
        for process, _ in started:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=20)
            process.stdout.close() if process.stdout else None
            process.stderr.close() if process.stderr else None


async def test_each_cluster_worker_enters_once_and_exits(
    log: Path, workers: list[tuple[subprocess.Popen[Any], int]]
) -> None:
    for process, port in workers:
        deadline = time.monotonic() + 20
        while not http_up(port):
            assert time.monotonic() < deadline and process.poll() is None
            await anyio.sleep(0.05)
    for _, port in workers:
        for version in VERSIONS:
            transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp")
            async with Client(transport, protocol_version=version) as client:
                for _ in range(2):
                    assert (await state(client))["entered"] == 1
    for process, _ in workers:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    pids = sorted(str(process.pid) for process, _ in workers)
    entered = sorted(line.split()[1] for line in lines(log) if line.startswith("enter"))
    exited = sorted(line.split()[1] for line in lines(log) if line.startswith("exit"))
    assert entered == pids and exited == pids, lines(log)


def test_a_cluster_worker_whose_startup_fails_exits_1_with_one_line() -> None:
    env = {**os.environ, "LIFESPAN_FAIL": "1"}
    with listening_socket() as sock:
        command = [sys.executable, "-m", "mcpbind.runtime.cluster", "worker", "lifespan_app:app",
                   "--port", str(sock.getsockname()[1]), "--fd", str(sock.fileno()),
                   "--app-dir", str(HERE)]  # fmt: skip
        done = subprocess.run(
            command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=30, pass_fds=(sock.fileno(),),
        )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr == f"mcpbind: {FAILED}\n"
