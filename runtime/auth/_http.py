"""The HTTP clients the OAuth flow talks to authorization servers with.

One TLS context for all of them: building one loads the CA store (tens of milliseconds, far
more on a loaded machine), and a flow opens a client per authorization.
"""

from __future__ import annotations

import ssl
from functools import cache

import httpx


@cache
def _tls() -> ssl.SSLContext:
    return httpx.create_ssl_context()


def oauth_client(
    transport: httpx.AsyncBaseTransport | None = None, timeout: float = 30.0
) -> httpx.AsyncClient:
    """A client for metadata, registration and token requests (no redirects followed)."""
    return httpx.AsyncClient(transport=transport, timeout=timeout, verify=_tls())
