"""Running ``mcpbind`` as a user does: a subprocess of this Python (``python -m mcpbind.codegen``,
the checkout through ``PYTHONPATH``), from the repository root."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_listening(port: int, process: subprocess.Popen[str], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
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
    *args: str, env: Mapping[str, str] | None = None, cwd: Path = REPO
) -> Iterator[subprocess.Popen[str]]:
    """``mcpbind ARGS`` running; SIGTERM, then SIGKILL, on the way out if still running."""
    process = subprocess.Popen(
        [*MCPBIND, *args], cwd=cwd, env=dict(env) if env is not None else None, text=True,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
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


def env_without(*names: str) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in names}
