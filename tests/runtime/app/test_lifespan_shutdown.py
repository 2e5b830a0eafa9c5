"""A lifespan's exit part is bounded (``shutdown_timeout``): one that never ends is cancelled
after the bound, one warning line names the server on stderr, and the process exits, over stdio
(stdin closed, SIGTERM) and HTTP (``run_http`` and plain uvicorn, SIGTERM). The servers are
``lifespan_app`` in a subprocess, with ``$LIFESPAN_HANG`` set."""

from __future__ import annotations

import logging
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
import pytest
from mcpbind.runtime import Client, Server
from mcpbind.runtime.app import App
from portkit import listening_socket, on_fresh_port, taken_in

HERE = Path(__file__).resolve().parent
LIFESPAN_APP = str(HERE / "lifespan_app.py")
BOUND = 0.5
#: How long a test waits for the process to end: far above the bound, far below forever.
PATIENCE = 20


def warning(name: str, bound: float = BOUND) -> str:
    return (
        f"the lifespan of server {name!r} did not exit within {bound:g} s (shutdown_timeout): "
        "shutting down without it"
    )


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "lifespan.log"
    path.touch()
    return path


def lines(log: Path) -> list[str]:
    return log.read_text().split("\n")[:-1]


@contextmanager
def hanging(
    log: Path, *args: str, pass_fds: tuple[int, ...] = ()
) -> Iterator[subprocess.Popen[str]]:
    """``lifespan_app.py *args`` whose lifespan's exit part hangs, bounded to ``BOUND``; started
    once the lifespan is entered, killed if the test fails before it ended."""
    env = {
        **os.environ,
        "LIFESPAN_LOG": str(log),
        "LIFESPAN_HANG": "1",
        "LIFESPAN_SHUTDOWN_TIMEOUT": str(BOUND),
    }
    process = subprocess.Popen(
        [sys.executable, *args],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        pass_fds=pass_fds,
    )
    try:
        deadline = time.monotonic() + PATIENCE
        while not lines(log):
            assert process.poll() is None and time.monotonic() < deadline, process.returncode
            time.sleep(0.02)
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=PATIENCE)
        for stream in (process.stdin, process.stderr):
            if stream is not None:
                stream.close()


def ended(process: subprocess.Popen[str]) -> tuple[int, str]:
    """The process's status and stderr, once it ended (``TimeoutExpired`` if it hangs)."""
    status = process.wait(timeout=PATIENCE)
    assert process.stderr is not None
    return status, process.stderr.read()


@pytest.mark.parametrize("ending", ["stdin", "SIGTERM"])
@pytest.mark.parametrize("mode", ["stdio", "server-stdio"])
def test_a_hanging_exit_over_stdio(log: Path, mode: str, ending: str) -> None:
    with hanging(log, LIFESPAN_APP, mode) as process:
        if ending == "stdin":
            assert process.stdin is not None
            process.stdin.close()
        else:
            process.send_signal(signal.SIGTERM)
        status, stderr = ended(process)
    name = "lifespan" if mode == "stdio" else "lifespan-server"
    assert (status, stderr) == (0, warning(name) + "\n")
    assert lines(log) == [f"enter {process.pid}", f"hang {process.pid}"]


def wait_up(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + PATIENCE
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
            return
        except httpx.TransportError:
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)


def test_a_hanging_exit_under_run_http(log: Path) -> None:
    # App.run_http takes only a port: a port taken before it binds is tried again.
    def serve(port: int) -> tuple[subprocess.Popen[str], int, str]:
        log.write_text("")  # an attempt's enter and hang are not this test's
        with hanging(log, LIFESPAN_APP, "http", str(port)) as process:
            try:
                wait_up(port, process)
            except AssertionError:
                if (taken := taken_in(ended(process)[1])) is not None:
                    raise taken from None
                raise
            process.send_signal(signal.SIGTERM)
            status, stderr = ended(process)
        return process, status, stderr

    process, status, stderr = on_fresh_port(serve, "App.run_http")
    assert status == 0
    assert stderr.count(warning("lifespan")) == 1, stderr
    assert lines(log) == [f"enter {process.pid}", f"hang {process.pid}"]


def test_a_hanging_exit_under_plain_uvicorn(log: Path) -> None:
    """The ASGI lifespan's shutdown ends too (uvicorn waits for it without a bound)."""
    with listening_socket() as sock:
        port, fd = sock.getsockname()[1], sock.fileno()
        command = ["-m", "uvicorn", "--app-dir", str(HERE), "--factory", "lifespan_app:http_app",
                   "--fd", str(fd)]  # fmt: skip
        with hanging(log, *command, pass_fds=(fd,)) as process:
            sock.close()  # uvicorn holds it now
            wait_up(port, process)
            process.send_signal(signal.SIGTERM)
            status, stderr = ended(process)
    # uvicorn raises the signal it caught again once it has shut down (its default then kills).
    assert status == -signal.SIGTERM
    assert stderr.count(warning("lifespan")) == 1, stderr
    assert "Application shutdown complete." in stderr and "Traceback" not in stderr
    assert lines(log) == [f"enter {process.pid}", f"hang {process.pid}"]


# -- in process ----------------------------------------------------------------------------


@asynccontextmanager
async def stuck(owner: Any) -> AsyncIterator[None]:
    try:
        yield None
    finally:
        await anyio.sleep_forever()


@pytest.mark.anyio
async def test_the_bound_in_memory_and_what_it_accepts(caplog: pytest.LogCaptureFixture) -> None:
    app = App("stuck", lifespan=stuck, shutdown_timeout=0.2)
    assert app.server.lifespan is not None and app.server.lifespan.shutdown_timeout == 0.2
    with caplog.at_level(logging.WARNING, "mcpbind.runtime"), anyio.fail_after(PATIENCE):
        async with Client(app.memory_transport()) as client:
            await client.ping()
    assert [r.getMessage() for r in caplog.records] == [warning("stuck", 0.2)]
    assert Server("default", lifespan=stuck).lifespan.shutdown_timeout == 5.0  # type: ignore[union-attr]
    assert Server("unbounded", lifespan=stuck, shutdown_timeout=None).lifespan is not None
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="shutdown_timeout must be a positive number"):
            Server("bad", shutdown_timeout=bad)
    for wrong in ("5", True):
        with pytest.raises(TypeError, match="shutdown_timeout must be a number of seconds"):
            App("bad", shutdown_timeout=wrong)
