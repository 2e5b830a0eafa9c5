"""Ports for the processes the tests start, without a pick-then-bind race.

A port found free by binding port 0 and closing it can be taken by any other process before the
peer binds it (CI saw it). So, in order of preference: a process of ours starts on port 0 and
says where it listens, or is handed ``listening_socket()`` (``--fd``); a peer that takes only a
port (Node servers, the Inspector, redis-server on TCP) goes through ``on_fresh_port``, which
retries with a fresh port when the peer reports the port taken, and says so (a warning).
"""

from __future__ import annotations

import socket
import warnings
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = [
    "PortRetryWarning",
    "PortTaken",
    "free_port",
    "listening_socket",
    "on_fresh_port",
    "on_fresh_port_async",
    "says_port_taken",
    "taken_in",
]

T = TypeVar("T")

#: How a peer reports a port taken: errno names and messages (Python, Node, redis, haproxy).
IN_USE = ("EADDRINUSE", "Address already in use", "address already in use", "Errno 98")


class PortTaken(Exception):
    """The peer could not bind the port it was given: another process took it first."""


class PortRetryWarning(UserWarning):
    """A peer's port was taken before it bound it; it was started again on a fresh one."""


def says_port_taken(text: str) -> bool:
    """Whether a peer's output (stderr, log) reports its port in use."""
    return any(marker in text for marker in IN_USE)


def taken_in(text: str) -> PortTaken | None:
    """``PortTaken`` naming the line of a peer's output that reports its port in use, if any."""
    for line in text.splitlines():
        if says_port_taken(line):
            return PortTaken(line.strip())
    return None


def listening_socket(host: str = "127.0.0.1") -> socket.socket:
    """A socket listening on a port of the kernel's pick, inheritable (``pass_fds``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.bind((host, 0))
        sock.listen()
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now; for peers taking only a port, through ``on_fresh_port``."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def _retrying(what: str, port: int, attempt: int, attempts: int, exc: PortTaken) -> None:
    if attempt + 1 == attempts:
        raise AssertionError(f"{what}: ports taken {attempts} times in a row: {exc}") from exc
    warnings.warn(
        f"{what}: port {port} was taken before it bound it ({exc}); retrying on a fresh port",
        PortRetryWarning,
        stacklevel=3,
    )


def on_fresh_port(start: Callable[[int], T], what: str, attempts: int = 3) -> T:
    """``start(port)`` on a fresh port, again on another while it raises ``PortTaken``."""
    for attempt in range(attempts):
        port = free_port()
        try:
            return start(port)
        except PortTaken as exc:
            _retrying(what, port, attempt, attempts, exc)
    raise AssertionError("unreachable")


async def on_fresh_port_async(
    start: Callable[[int], Awaitable[T]], what: str, attempts: int = 3
) -> T:
    """``on_fresh_port`` for a coroutine ``start``."""
    for attempt in range(attempts):
        port = free_port()
        try:
            return await start(port)
        except PortTaken as exc:
            _retrying(what, port, attempt, attempts, exc)
    raise AssertionError("unreachable")
