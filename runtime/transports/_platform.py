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
the tests run that path on Linux (``tests/runtime/test_windows.py``). A client's server's process
tree is in ``_process_tree.py``, which only the stdio client imports.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from typing import Any

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl

__all__ = [
    "PORTABLE",
    "binary",
    "parent_watch",
    "pollable",
    "psutil_module",
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
    psutil = psutil_module()
    try:
        process = psutil.Process(parent) if psutil is not None else None
    except Exception:  # the parent is gone already (psutil.NoSuchProcess)
        return lambda: False
    if process is None:
        return None
    return lambda: bool(process.is_running())


def psutil_module() -> Any | None:
    """psutil, a dependency of mcpbind on Windows (untyped; imported only on the portable path)."""
    try:
        return importlib.import_module("psutil")
    except ImportError:
        logger.warning("psutil is missing: a stdio server's process tree is not tracked")
        return None
