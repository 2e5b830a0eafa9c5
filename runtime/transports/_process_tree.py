"""A stdio client's server and whatever it started, ended together (the stdio client only).

On POSIX the server leads a process group of its own, ended whole with ``killpg``. On Windows
(and the portable path, ``_platform.PORTABLE``) the tree is found with psutil and remembered
while the server runs, since an orphan gets no new parent there. Apart from ``_platform`` so
that a stdio server never loads it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from typing import Any, Protocol

from . import _platform

__all__ = ["ProcessTree", "process_tree"]


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
    # Read at call time: the tests switch ``PORTABLE`` on the module.
    return _PsutilTree(process) if _platform.PORTABLE else _GroupTree(process.pid)


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
        self.psutil = _platform.psutil_module()
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
