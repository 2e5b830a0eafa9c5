"""What can be proven on Linux of mcpbind on Windows (docs/transports.md says what has not).

- Every module of the package imports with the POSIX-only modules unimportable, the process
  group calls gone from ``os`` and ``sys.platform`` reading ``win32`` (the libraries mcpbind
  imports are loaded first, as this platform has them: their own Windows support is theirs).
- The POSIX-only names appear only where the code branches on the platform.
- The stdio client and server round-trip on the portable path that Windows takes (blocking
  pipes read and written in worker threads, no process group, the server's tree ended with
  psutil), also with more than a pipe holds going both ways at once, and a child the server
  started is gone after the client closes, or after the server dies.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import anyio
import pytest
from mcpbind.runtime import Envelope
from mcpbind.runtime.transports import _platform
from mcpbind.runtime.transports._pipes import PipeWriter
from mcpbind.runtime.transports.http import uvicorn as http_uvicorn
from runtime_helpers import REPO_ROOT

PACKAGES = ("codegen", "generated", "runtime")
BLOCKED = ("fcntl", "resource", "termios", "pwd", "grp")
GONE = ("killpg", "setsid", "getpgid", "setpgid")
#: Where the code branches on the platform, the only places the POSIX-only names may appear.
PLATFORM_MODULES = {
    Path("runtime/transports/_platform.py"),
    Path("runtime/transports/_process_tree.py"),
    Path("runtime/transports/http/uvicorn.py"),
    # `mcpbind dev` stops the Inspector's process group (npx and its node) off Windows.
    Path("runtime/cli/dev.py"),
}
POSIX_ONLY = re.compile(
    rf"\b(?:import ({'|'.join(BLOCKED)})\b|os\.({'|'.join(GONE)})\b"
    r"|signal\.SIG(KILL|HUP|QUIT|USR1|USR2|CHLD|ALRM|PIPE|STOP|CONT)\b)"
)

IMPORT_EVERYTHING = r"""
import importlib, os, pkgutil, sys, types
blocked, gone, imported = sys.argv[1].split(","), sys.argv[2].split(","), sys.argv[3].split(",")
for name in imported:
    try:
        importlib.import_module(name)
    except ImportError:
        pass  # not on this platform (uvloop on Windows): mcpbind must do without it
for name in blocked:
    sys.modules[name] = None
for name in gone:
    if hasattr(os, name):
        delattr(os, name)
sys.modules["msvcrt"] = types.ModuleType("msvcrt")  # used at run time only (setmode)
sys.platform = "win32"
import mcpbind
names = [
    m.name for m in pkgutil.walk_packages(mcpbind.__path__, "mcpbind.")
    if not m.name.endswith("__main__")
]
for name in names:
    importlib.import_module(name)
from mcpbind.runtime.transports import _platform
from mcpbind.runtime.transports.http import uvicorn as http_uvicorn
print(len(names), _platform.PORTABLE)
"""


def _sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (REPO_ROOT / package).rglob("*.py"))


def _imported_elsewhere() -> list[str]:
    """Every module outside mcpbind that the package names in an import, but the blocked ones."""
    found: set[str] = set()
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module)
    ours = ("mcpbind", *BLOCKED, "msvcrt")
    return sorted(n for n in found if n.split(".")[0] not in ours)


def test_every_module_imports_as_on_windows() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            IMPORT_EVERYTHING,
            ",".join(BLOCKED),
            ",".join(GONE),
            ",".join(_imported_elsewhere()),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=REPO_ROOT,
    )
    assert done.returncode == 0, done.stderr
    count, portable = done.stdout.split()
    assert int(count) > 150  # every module, not a few
    assert portable == "True"  # Windows takes the portable stdio path


def test_posix_only_names_only_where_the_platform_is_asked() -> None:
    found = {
        path.relative_to(REPO_ROOT)
        for path in _sources()
        if POSIX_ONLY.search(path.read_text(encoding="utf-8"))
    }
    assert found == PLATFORM_MODULES
    for module in PLATFORM_MODULES:
        assert "sys.platform" in (REPO_ROOT / module).read_text(encoding="utf-8")


def test_stdio_round_trip_on_the_portable_path() -> None:
    env = {**os.environ, "MCPBIND_STDIO_PORTABLE": "1"}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("windows_paths.py")), "client"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=REPO_ROOT,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    # The server took the portable path: blocking stdin, no process group of its own.
    assert seen["where"] == {"stdin_blocking": True, "group_leader": False, "portable": "1"}
    # 2 MB each way at once: writes from a worker thread, or both loops would wait on a write.
    assert seen["both_ways_at_once"] is True
    assert seen["child_ran"] is True
    assert seen["closed_gone"] is True  # the client closed: the server and its child are gone
    assert seen["crash"] == "the server process exited with status 3"
    assert seen["crash_gone"] is True  # the server died: its orphaned child was ended too


def test_the_windows_branches_set_binary_mode_and_a_console_group(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the Windows branches call, with Windows' names stood in for on this platform."""
    calls: list[tuple[int, int]] = []
    fake = types.SimpleNamespace(setmode=lambda fd, mode: calls.append((fd, mode)))
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(_platform, "msvcrt", fake, raising=False)
    monkeypatch.setattr(os, "O_BINARY", 0x8000, raising=False)
    monkeypatch.setattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200, raising=False)
    _platform.binary(7)
    assert calls == [(7, 0x8000)]
    assert _platform.spawn_options() == {"creationflags": 0x200}


def test_the_portable_path_polls_no_pipe_and_watches_the_parent_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_platform, "PORTABLE", True)
    read, write = os.pipe()
    try:
        assert _platform.pollable(read) is False  # read in a worker thread instead
    finally:
        os.close(read)
        os.close(write)
    if sys.platform != "win32":
        assert _platform.spawn_options() == {}  # no POSIX process group of its own
    parent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        alive = _platform.parent_watch(parent.pid)
        assert alive is not None and alive()
        parent.kill()
        parent.wait()
        assert not alive()  # an orphan's parent pid does not change on Windows: watched itself
    finally:
        parent.kill()


def test_http_serving_reads_no_fd_limit_on_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.delattr(http_uvicorn, "resource", raising=False)  # Windows has no such module
    assert http_uvicorn._fd_budget(512) == 512


@pytest.mark.anyio
async def test_a_threaded_writer_leaves_the_loop_free_and_breaks_when_the_reader_goes() -> None:
    read_fd, write_fd = os.pipe()  # blocking, as every pipe is on Windows
    writer = PipeWriter(write_fd, False, threaded=True)
    line = len(b'{"data":""}\n') + 200_000  # more than a pipe holds
    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(writer.flush)
                writer.send_nowait(Envelope({"data": "x" * 200_000}))  # queued, not written
                await anyio.sleep(0.2)  # the loop runs while a worker waits for a reader
                received = await anyio.to_thread.run_sync(_read_exactly, read_fd, line)
                assert received.endswith(b'x"}\n') and len(received) == line
                os.close(read_fd)
                writer.send_nowait(Envelope({"n": 1}))
                while True:  # the worker's write fails: the writer is broken, flush returns
                    await anyio.sleep(0.01)
                    with contextlib.suppress(anyio.BrokenResourceError):
                        writer.send_nowait(Envelope({"n": 2}))
                        continue
                    break
    finally:
        os.close(write_fd)


def _read_exactly(fd: int, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        data += os.read(fd, size - len(data))
    return bytes(data)
