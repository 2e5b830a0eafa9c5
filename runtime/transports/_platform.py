"""What the stdio transport does differently on Windows: pipes and the server's process tree.

On POSIX the stdio transport waits on pipes for readiness (non-blocking descriptors, ``fcntl``)
and runs a client's server in a process group of its own, which ends whole (``killpg``), with
whatever the server started. Windows has neither: there its pipes are read and written in
blocking calls (the reader in a worker thread, as for a regular file) and set to binary mode, so
no newline is translated; and the server's process tree is found and ended with psutil (a
Windows dependency of mcpbind). Because Windows gives an orphan no new parent, the tree is
remembered while the server runs (``ProcessTree.refresh``), and a grandchild whose parent
already exited is still ended.

``PORTABLE`` selects the Windows way. It is true on Windows, and anywhere when the environment
variable ``MCPBIND_STDIO_PORTABLE`` is ``1`` when this module is imported: an internal switch, so
the tests run that path on Linux (``tests/runtime/test_windows.py``).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Callable
from typing import Any, Protocol

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl

__all__ = [
    "PORTABLE",
    "ProcessTree",
    "binary",
    "parent_watch",
    "pollable",
    "process_tree",
    "restore_flags",
    "set_nonblocking",
    "spawn_options",
]

logger = logging.getLogger("mcpbind.runtime.stdio")

PORTABLE: bool = sys.platform == "win32" or os.environ.get("MCPBIND_STDIO_PORTABLE") == "1"


def binary(fd: int) -> None:
    """No newline translation on ``fd`` (Windows' C runtime may open descriptors in text mode)."""
    if sys.platform == "win32":
        msvcrt.setmode(fd, os.O_BINARY)


def pollable(fd: int) -> bool:
    """Pipes and sockets can wait for readiness on POSIX; regular files, some ttys, and every
    pipe on Windows (whose event loops poll sockets only) cannot."""
    if PORTABLE:
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def set_nonblocking(fd: int) -> int:
    """Make ``fd`` non-blocking; the flags it had (for ``restore_flags``). POSIX only: the
    portable way never asks (its descriptors are not ``pollable``)."""
    if sys.platform == "win32":
        raise OSError("non-blocking pipes are POSIX only")
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    return flags


def restore_flags(fd: int, flags: int) -> None:
    if sys.platform != "win32":
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, fcntl.F_SETFL, flags)


def spawn_options() -> dict[str, Any]:
    """``Popen`` arguments for a server: a process group of its own on POSIX; on Windows a
    process group in the console's sense, so a Ctrl-C meant for the client spares it."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {} if PORTABLE else {"start_new_session": True}


def parent_watch(parent: int) -> Callable[[], bool] | None:
    """A check that the process ``parent`` still runs, or None when none can be made.

    On POSIX an orphan gets a new parent, so ``getppid()`` changing says the parent died; on
    Windows it does not, so the parent itself is watched (psutil also tells a reused pid apart).
    """
    if not PORTABLE:
        return lambda: os.getppid() == parent
    psutil = _psutil()
    try:
        process = psutil.Process(parent) if psutil is not None else None
    except Exception:  # the parent is gone already (psutil.NoSuchProcess)
        return lambda: False
    if process is None:
        return None
    return lambda: bool(process.is_running())


def _psutil() -> Any | None:
    """psutil, a dependency of mcpbind on Windows (untyped; imported only on the portable path)."""
    try:
        return importlib.import_module("psutil")
    except ImportError:
        logger.warning("psutil is missing: a stdio server's process tree is not tracked")
        return None


class ProcessTree(Protocol):
    """The server and whatever it started, ended together."""

    #: How often ``refresh`` should run while the server does (None: never needed).
    refresh_every: float | None

    def refresh(self) -> None:
        """Remember the processes the server started so far."""

    def end(self, force: bool) -> bool:
        """Ask every process to stop (``force``: kill it); False if none was left."""
        ...

    def running(self) -> bool:
        """Whether any of them still runs (zombies do not count)."""
        ...


def process_tree(process: subprocess.Popen[Any]) -> ProcessTree:
    return _PsutilTree(process) if PORTABLE else _GroupTree(process.pid)


class _GroupTree:
    """POSIX: the server's process group (it leads one of its own, ``start_new_session``)."""

    refresh_every: float | None = None

    def __init__(self, pgid: int) -> None:
        self.pgid = pgid

    def refresh(self) -> None:
        pass  # the group holds its members; nothing to remember

    def end(self, force: bool) -> bool:
        if sys.platform == "win32":
            return False
        try:
            os.killpg(self.pgid, signal.SIGKILL if force else signal.SIGTERM)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True

    def running(self) -> bool:
        """Zombies do not count: they wait for a parent, often init, to reap them, and
        ``killpg(..., 0)`` still finds them."""
        if sys.platform == "win32":
            return False
        try:
            os.killpg(self.pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return _group_running(self.pgid)


def _group_running(pgid: int) -> bool:
    """Whether a process of group ``pgid`` runs, not counting zombies (from ``/proc``; where
    there is none, every process found by ``killpg`` counts)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
                fields = file.read().rpartition(b")")[2].split()
        except OSError:
            continue
        if len(fields) > 2 and fields[0] != b"Z" and int(fields[2]) == pgid:
            return True
    return False


class _PsutilTree:
    """Windows (and the portable path): the server and its descendants, found with psutil and
    remembered, since a process whose parent exited is no one's child there."""

    refresh_every: float | None = 0.5

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.known: dict[int, Any] = {}  # pid -> psutil.Process (which tells a reused pid apart)
        self.psutil = _psutil()
        if self.psutil is not None:
            with contextlib.suppress(Exception):  # the server is gone already (NoSuchProcess)
                self.known[process.pid] = self.psutil.Process(process.pid)
        self.refresh()

    def refresh(self) -> None:
        """Add every process whose parent is known. Windows keeps an orphan's parent pid, so a
        child of an exited server is still found (started after its parent: not a reused pid);
        elsewhere an orphan is only known if an earlier refresh saw it."""
        if self.psutil is None:
            return
        with contextlib.suppress(Exception):  # the process table changed under us
            table = list(self.psutil.process_iter(["ppid", "create_time"]))
            grew = True
            while grew:
                grew = False
                for proc in table:
                    parent = self.known.get(proc.info["ppid"])
                    if proc.pid in self.known or parent is None:
                        continue
                    with contextlib.suppress(Exception):
                        if proc.info["create_time"] >= parent.create_time():
                            self.known[proc.pid] = proc
                            grew = True

    def _alive(self) -> list[Any]:
        alive: list[Any] = []
        for proc in self.known.values():
            with contextlib.suppress(Exception):
                if proc.is_running() and proc.status() != "zombie":
                    alive.append(proc)
        return alive

    def end(self, force: bool) -> bool:
        if self.psutil is None:
            if self.process.poll() is not None:
                return False
            (self.process.kill if force else self.process.terminate)()
            return True
        self.refresh()
        alive = self._alive()
        for proc in alive:
            with contextlib.suppress(Exception):  # it exited meanwhile
                (proc.kill if force else proc.terminate)()
        return bool(alive)

    def running(self) -> bool:
        if self.psutil is None:
            return self.process.poll() is None
        return bool(self._alive())
