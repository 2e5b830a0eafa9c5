"""Where OAuth discovery may send requests: the MCP server's origin, and addresses of its class.

A 401 from a server names where its protected-resource metadata lives, and that metadata names
the authorization server, whose metadata names more endpoints: every hop is a URL an untrusted
party chose, fetched by the client from wherever it runs (often next to a cloud metadata service
or a private network). So:

* protected-resource metadata is fetched only from the MCP server's own origin, or from an
  origin the application allows by name (``allowed_metadata_origins``);
* an authorization server, and each endpoint its metadata names, is refused when its host is a
  cloud metadata service or resolves to a link-local, loopback or private address, unless the
  MCP server's own address is of that same class (a server on ``localhost`` may use an
  authorization server on ``localhost``) or the origin is allowed by name;
* a redirect met during discovery is followed only within the origin it came from.

The address check resolves the name before the request is sent; a name that does not resolve
here is not refused (the request fails, or a proxy resolves it). The resolution is not pinned
for the connection that follows (a DNS answer that changes in between is not caught).
"""

from __future__ import annotations

import enum
import ipaddress
import logging
import socket
from collections.abc import Awaitable, Callable, Iterable
from urllib.parse import urlsplit, urlunsplit

import anyio

from ._errors import DiscoveryError

logger = logging.getLogger(__name__)

#: Given a host name, its addresses (as strings); the default asks the system's resolver.
Resolver = Callable[[str], Awaitable[Iterable[str]]]

#: Host names of cloud instance-metadata services (GCP, AWS, Azure, Alibaba, Oracle...).
METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.internal",
        "metadata.tencentyun.com",
    }
)
#: Addresses of cloud instance-metadata services (AWS, GCP, Azure, OCI: 169.254.169.254; AWS
#: IPv6 and ECS; Alibaba).
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(address)
    for address in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
#: How many same-origin redirects one discovery request follows.
MAX_REDIRECTS = 5


class AddressClass(enum.Enum):
    """What kind of network a host is on, as far as discovery cares."""

    PUBLIC = "public"
    PRIVATE = "private"
    LOOPBACK = "loopback"
    LINK_LOCAL = "link-local"
    CLOUD_METADATA = "cloud-metadata"


def classify(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> AddressClass:
    """The class of one IP address (an IPv4-mapped IPv6 address counts as its IPv4 address)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in METADATA_ADDRESSES:
        return AddressClass.CLOUD_METADATA
    if address.is_loopback:
        return AddressClass.LOOPBACK
    if address.is_link_local:
        return AddressClass.LINK_LOCAL
    if address.is_global:
        return AddressClass.PUBLIC
    # RFC 1918, unique-local, shared (CGNAT), unspecified, reserved: none is on the internet.
    return AddressClass.PRIVATE


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, lowercased, with the scheme's default port dropped."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(scheme)
    try:
        port = parts.port
    except ValueError as exc:
        raise DiscoveryError(f"{url!r} has an invalid port") from exc
    netloc = host if port is None or port == default else f"{host}:{port}"
    return urlunsplit((scheme, netloc, "", "", ""))


async def system_resolver(host: str) -> list[str]:
    """The addresses the system resolver gives ``host`` (none if it does not resolve)."""
    try:
        found = await anyio.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return []
    return [str(sockaddr[0]) for *_, sockaddr in found]


class OriginGuard:
    """The discovery rules for one MCP server (see the module docstring)."""

    def __init__(
        self,
        server_url: str,
        *,
        allowed_origins: Iterable[str] = (),
        resolver: Resolver | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.server_url = server_url
        self.server_origin = origin_of(server_url)
        self.allowed_origins = frozenset(origin_of(url) for url in allowed_origins)
        self._resolver: Resolver = resolver or system_resolver
        self._timeout = timeout
        self._classes: dict[str, frozenset[AddressClass]] = {}

    def check_resource_metadata(self, url: str) -> None:
        """Refuse a protected-resource metadata URL off the server's origin (unless allowed)."""
        found = origin_of(url)
        if found != self.server_origin and found not in self.allowed_origins:
            raise DiscoveryError(
                f"refused protected resource metadata at {url}: it is not on the MCP server's "
                f"origin {self.server_origin} (allow {found} with allowed_metadata_origins)"
            )

    def check_redirect(self, url: str, target: str) -> None:
        """Refuse a redirect met during discovery that leaves ``url``'s origin."""
        if origin_of(target) != origin_of(url):
            raise DiscoveryError(
                f"refused the redirect from {url} to {target}: discovery stays on one origin"
            )

    async def check_address(self, url: str, what: str) -> None:
        """Refuse ``url`` (``what`` says what it is for) if its host is on a network the MCP
        server is not on: cloud metadata, link-local, loopback or private."""
        found = origin_of(url)
        if found == self.server_origin or found in self.allowed_origins:
            return
        server = await self._classes_of(self.server_url)
        target = await self._classes_of(url)
        refused = sorted(c.value for c in target - server - {AddressClass.PUBLIC})
        if refused:
            raise DiscoveryError(
                f"refused {what} at {url}: its host is a {' and '.join(refused)} address and the "
                f"MCP server {self.server_url} is not (allow {found} with "
                "allowed_metadata_origins)"
            )

    async def _classes_of(self, url: str) -> frozenset[AddressClass]:
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
        cached = self._classes.get(host)
        if cached is None:
            cached = self._classes[host] = await self._resolve(host)
        return cached

    async def _resolve(self, host: str) -> frozenset[AddressClass]:
        if host in METADATA_HOSTS:
            return frozenset({AddressClass.CLOUD_METADATA})
        if host == "localhost" or host.endswith(".localhost"):
            return frozenset({AddressClass.LOOPBACK})
        try:
            return frozenset({classify(ipaddress.ip_address(host))})
        except ValueError:
            pass
        addresses: Iterable[str] = ()
        with anyio.move_on_after(self._timeout):
            addresses = await self._resolver(host)
        classes: set[AddressClass] = set()
        for address in addresses:
            try:
                classes.add(classify(ipaddress.ip_address(address.split("%", 1)[0])))
            except ValueError:
                logger.debug("resolver gave %s a non-address %r", host, address)
        return frozenset(classes)
