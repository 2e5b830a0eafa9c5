"""Running ``mcpbind`` as a user does: a subprocess of this Python (``python -m mcpbind.codegen``,
the checkout through ``PYTHONPATH``), from the repository root."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO

import httpx
from portkit import PortTaken, listening_socket, on_fresh_port, taken_in

REPO = Path(__file__).resolve().parents[3]
MCPBIND = [sys.executable, "-m", "mcpbind.codegen"]
NOTES = "examples/notes_app.py"


def cli(
    *args: str, env: Mapping[str, str] | None = None, timeout: float = 60, cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MCPBIND, *args], capture_output=True, text=True, timeout=timeout, check=False,
        cwd=cwd, env=dict(env) if env is not None else None, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def assert_one_line_error(done: subprocess.CompletedProcess[str], fragment: str) -> None:
    """Exit status 2 and exactly one ``mcpbind: error:`` line naming ``fragment``."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert len(lines) == 1 and lines[0].startswith("mcpbind: error: "), done.stderr
    assert fragment in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def wait_listening(
    port: int,
    process: subprocess.Popen[str],
    timeout: float = 30,
    taken: Callable[[], PortTaken | None] = lambda: None,
) -> None:
    """Until ``port`` answers HTTP; raises what ``taken()`` gives once it says the port went
    to another process."""
    deadline = time.monotonic() + timeout
    while True:
        if (gone := taken()) is not None:
            raise gone
        if process.poll() is not None:
            raise AssertionError(f"exited with {process.returncode}: {process.communicate()}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise AssertionError(f"nothing listens on {port}") from None
            time.sleep(0.1)


@contextmanager
def started(
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: Path = REPO,
    pass_fds: tuple[int, ...] = (),
    stderr: IO[str] | int = subprocess.PIPE,
) -> Iterator[subprocess.Popen[str]]:
    """``mcpbind ARGS`` running; SIGTERM, then SIGKILL, on the way out if still running."""
    process = subprocess.Popen(
        [*MCPBIND, *args], cwd=cwd, env=dict(env) if env is not None else None, text=True,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr, pass_fds=pass_fds,
    )  # fmt: skip
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


@contextmanager
def serving_http(
    target: str, *args: str, cwd: Path = REPO
) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``mcpbind run TARGET --http`` on a port bound here and handed over (``--fd``), listening
    once this yields (the process, the port): no other process can take the port meanwhile."""
    with listening_socket() as sock:
        port: int = sock.getsockname()[1]
        fd = sock.fileno()
        command = ("run", target, "--http", "--fd", str(fd), *args)
        with started(*command, cwd=cwd, pass_fds=(fd,)) as process:
            sock.close()  # the server holds it now
            wait_listening(port, process)
            yield process, port


@contextmanager
def dev_serving(
    logs: Path,
    *args: str,
    env: Mapping[str, str] | Callable[[], Mapping[str, str]] | None = None,
    cwd: Path = REPO,
    ready: Callable[[subprocess.Popen[str], int], None] = lambda process, port: None,
) -> Iterator[tuple[subprocess.Popen[str], int, Path]]:
    """``mcpbind dev ARGS --port PORT`` serving (process, port, its stderr's file under
    ``logs``). ``dev`` restarts its server in new processes, which cannot inherit a socket
    (watchfiles closes the fds): a port taken before the server bound it is retried on a fresh
    one. ``ready(process, port)`` waits for more (raising ``PortTaken`` the same way); ``env``
    may be a function, called for each start (as for more ports, drawn afresh)."""
    with ExitStack() as outer:

        def start(port: int) -> tuple[subprocess.Popen[str], int, Path]:
            log = logs / f"dev-{port}.stderr"
            with ExitStack() as attempt:
                err = attempt.enter_context(log.open("w"))
                command = ("dev", *args, "--port", str(port))
                environ = env() if callable(env) else env
                process = attempt.enter_context(started(*command, env=environ, cwd=cwd, stderr=err))
                wait_listening(port, process, taken=lambda: taken_in(log.read_text()))
                ready(process, port)
                outer.enter_context(attempt.pop_all())
            return process, port, log

        yield on_fresh_port(start, "mcpbind dev")


def env_without(*names: str) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in names}
