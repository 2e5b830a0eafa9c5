"""The launcher's options checked before anything starts: each bad one is a ``ValueError``
whose message is the one line both command lines print (``mcpbind serve`` and ``python -m
mcpbind.runtime.cluster serve``), instead of a traceback from a worker or from ``bind``."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import socket
import sys
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from uvicorn.importer import ImportFromStringError, import_from_string

__all__ = ["check_host", "check_module", "check_redis_url", "check_serve_options", "check_target"]

#: The largest TCP port.
MAX_PORT: Final = 65535
#: A Redis URL's path: empty, ``/`` or ``/DB`` (redis-py reads ``/0/3`` as db 3 and ``/x`` as
#: db 0 without a word, so that is checked here).
_DB_PATH: Final = re.compile(r"(/\d*)?")


def check_redis_url(url: str, name: str = "--redis") -> None:
    """``ValueError`` naming what is wrong with ``url`` (given as ``name``) as redis-py reads it."""
    try:
        # Imported here: the launcher runs without the redis extra when no URL is given.
        from redis import ConnectionPool
    except ImportError:
        raise ValueError(f"{name} needs the redis extra: pip install 'mcpbind[redis]'") from None
    try:
        # Parses only: a pool connects when first used.
        ConnectionPool.from_url(url)  # pyright: ignore[reportUnknownMemberType]
    except ValueError as exc:
        raise ValueError(f"{name} {url!r}: {exc}") from None
    path = urlsplit(url).path
    if url.startswith("unix://"):
        if not path:
            raise ValueError(f"{name} {url!r}: a unix:// URL needs the socket's path")
    elif not _DB_PATH.fullmatch(path):
        raise ValueError(f"{name} {url!r}: the path must be /DB, a database number, not {path}")


def check_host(host: str) -> None:
    """``ValueError`` if ``host`` does not resolve to an address to listen on."""
    try:
        socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise ValueError(f"--host {host!r}: {getattr(exc, 'strerror', None) or exc}") from None


def _check_file(path: Path) -> None:
    parent = path.parent
    if path.is_dir():
        raise ValueError(f"--haproxy {str(path)!r}: is a folder, not a file")
    if not parent.is_dir():
        raise ValueError(f"--haproxy {str(path)!r}: no folder {str(parent)!r}")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"--haproxy {str(path)!r}: not writable")


def check_serve_options(
    *,
    workers: int,
    host: str,
    port: int,
    redis_url: str | None,
    haproxy_path: Path | None,
    run_haproxy: bool,
    haproxy_binary: str,
    check_ms: int,
    durable_tasks: bool,
) -> None:
    """Every ``serve`` option that can be checked before a process starts; ``ValueError``."""
    if workers < 1:
        raise ValueError("--workers: at least one worker")
    if port == 0:
        pass  # the kernel picks every port
    elif not 0 < port <= MAX_PORT - workers:
        raise ValueError(
            f"--port {port}: the balancer and its {workers} worker(s) take ports "
            f"{port}..{port + workers}, which must lie in 1..{MAX_PORT} (0: free ports)"
        )
    if check_ms < 1:
        raise ValueError(f"--check-ms {check_ms}: the health-check interval must be positive")
    if run_haproxy and haproxy_path is None:
        raise ValueError("--run-haproxy needs --haproxy FILE")
    if durable_tasks and redis_url is None:
        raise ValueError("--durable-tasks needs --redis URL")
    if redis_url is not None:
        check_redis_url(redis_url)
    if haproxy_path is not None:
        _check_file(haproxy_path)
    if run_haproxy and shutil.which(haproxy_binary) is None:
        raise ValueError(f"--haproxy-bin {haproxy_binary!r}: no such program")
    check_host(host)


def check_target(target: str, app_dir: str | None = None) -> None:
    """``ValueError`` if ``target`` (``module:attr``, from ``app_dir`` first) does not import:
    in one line here, rather than a traceback from each worker."""
    if app_dir is not None:
        sys.path.insert(0, app_dir)
    try:
        import_from_string(target)
    except ImportFromStringError as exc:
        raise ValueError(f"cannot load {target}: {str(exc).strip().splitlines()[0]}") from None
    except Exception as exc:  # the user's module may raise anything while importing
        raise ValueError(f"cannot import {target}: {type(exc).__name__}: {exc}") from None
    finally:
        if app_dir is not None:
            sys.path.remove(app_dir)


def check_module(target: str, app_dir: str | None = None) -> None:
    """``ValueError`` if ``target``'s module (``module:attr``, from ``app_dir`` first) cannot be
    found. Found, not run: the user's code runs in the workers, under the environment the
    launcher gives them (``check_target`` there names a missing attribute or a failing import)."""
    module, _, attr = target.partition(":")
    if not module or not attr:
        raise ValueError(
            f'cannot load {target}: Import string "{target}" must be in format '
            '"<module>:<attribute>".'
        )
    if app_dir is not None:
        sys.path.insert(0, app_dir)
    try:
        found = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        found = None
    except Exception as exc:  # a parent package of the module failed while importing
        raise ValueError(f"cannot import {target}: {type(exc).__name__}: {exc}") from None
    finally:
        if app_dir is not None:
            sys.path.remove(app_dir)
    if found is None:
        raise ValueError(f'cannot load {target}: Could not import module "{module}".')
