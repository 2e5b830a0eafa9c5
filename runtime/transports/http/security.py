"""DNS-rebinding protection: the ``Host`` and ``Origin`` allow-lists of the HTTP servers.

A web page on ``evil.example`` whose name resolves to 127.0.0.1 makes the browser send
``Host: evil.example`` and ``Origin: http://evil.example`` to a local server; refusing both
unless listed closes that hole (transports.md, "Security Warning"). Requests without an
``Origin`` (every non-browser client) pass the origin check.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from mcpbind.runtime.core.bounded import remember

__all__ = ["LOOPBACK_HOSTS", "HostGuard"]

#: Loopback names: the default allow-list of a server bound to a loopback address.
LOOPBACK_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "[::1]")


def _split_host(value: str) -> tuple[str, str | None]:
    """``"host:port"`` (or ``"[v6]:port"``) as lowercase host and port."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end == -1:
            return value, None
        host, rest = value[: end + 1], value[end + 1 :]
        return host, rest[1:] if rest.startswith(":") else None
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        return value, None
    return host, port


@dataclass
class HostGuard:
    """Allow-lists for ``Host`` and ``Origin``.

    ``allowed_hosts`` entries are ``host`` (any port) or ``host:port``; ``allowed_origins``
    entries are ``scheme://host`` (any port) or ``scheme://host:port``. ``"*"`` in either list
    disables that check (for a server behind a proxy that already validates).
    """

    allowed_hosts: Iterable[str] = LOOPBACK_HOSTS
    allowed_origins: Iterable[str] | None = None
    _hosts: set[str] = field(init=False, repr=False)
    _origins: set[str] = field(init=False, repr=False)
    _seen_hosts: dict[str, bool] = field(init=False, repr=False, default_factory=lambda: {})

    def __post_init__(self) -> None:
        self._hosts = {h.strip().lower() for h in self.allowed_hosts}
        origins = self.allowed_origins
        if origins is None:
            origins = [f"{scheme}://{host}" for host in self._hosts for scheme in ("http", "https")]
        self._origins = {o.strip().lower().rstrip("/") for o in origins}

    def host_ok(self, host: str | None) -> bool:
        """Whether a ``Host`` header is allowed; a missing one is not (HTTP/1.1 requires it)."""
        if "*" in self._hosts:
            return True
        if not host:
            return False
        # Every request asks, nearly always with the same few values: remember the answers.
        known = self._seen_hosts.get(host)
        if known is None:
            name, port = _split_host(host)
            known = name in self._hosts or (port is not None and f"{name}:{port}" in self._hosts)
            remember(self._seen_hosts, host, known, 256)
        return known

    def origin_ok(self, origin: str | None) -> bool:
        """Whether an ``Origin`` header is allowed; absent means not a browser, so allowed."""
        if origin is None or "*" in self._origins:
            return True
        try:
            parts = urlsplit(origin.strip().lower())
        except ValueError:
            return False
        if not parts.scheme or not parts.netloc:
            return False
        name, port = _split_host(parts.netloc)
        base = f"{parts.scheme}://{name}"
        return base in self._origins or (port is not None and f"{base}:{port}" in self._origins)
