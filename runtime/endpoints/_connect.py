"""What ``Client(target)`` connects to: a transport, ``StdioParameters``, an ``http(s)://`` URL,
or anything with a ``memory_transport()`` (an ``App``, a ``Server``).

The URL form is the one place the endpoints reach the HTTP client transport. Its import is inside
``transport_for``, so a program that never passes a URL never imports httpx; the layers contract
allows it (transports are below the endpoints) and the "no HTTP" contract names this one edge as
its exception.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, cast, runtime_checkable
from urllib.parse import urlsplit

from mcpbind.runtime.core.transport import Connection
from mcpbind.runtime.transports.stdio_client import StdioParameters, stdio_client

__all__ = ["InMemoryTarget", "Target", "transport_for"]


@runtime_checkable
class InMemoryTarget(Protocol):
    """A server a client can reach in the same process: ``App`` and ``Server`` are ones."""

    def memory_transport(self) -> AbstractAsyncContextManager[Connection]: ...


#: Everything ``Client(...)`` takes as its first argument.
Target = AbstractAsyncContextManager[Connection] | StdioParameters | InMemoryTarget | str

_SCHEMES = ("http", "https")


def transport_for(
    target: object,
    headers: Mapping[str, str] | None = None,
    auth: Any = None,
) -> AbstractAsyncContextManager[Connection]:
    """The transport ``Client(target)`` opens; ``TypeError`` or ``ValueError`` for a target it
    cannot use. ``headers`` and ``auth`` (an ``httpx.Auth``) are for a URL only."""
    if isinstance(target, str):
        parts = urlsplit(target)
        if parts.scheme.lower() not in _SCHEMES or not parts.netloc:
            raise ValueError(
                f"Client({target!r}): a URL must be http:// or https:// with a host "
                "(a Streamable HTTP endpoint such as 'https://example.com/mcp'); for a local "
                "command pass StdioParameters(command, args)"
            )
        from mcpbind.runtime.transports.http.client import streamable_http_client

        return streamable_http_client(target, headers=headers, auth=auth)
    if headers is not None or auth is not None:
        raise TypeError(
            "headers= and auth= apply to a URL only; pass them to the transport you built "
            "(streamable_http_client(url, headers=..., auth=...))"
        )
    if isinstance(target, StdioParameters):
        return stdio_client(target)
    if isinstance(target, InMemoryTarget):
        return target.memory_transport()
    if isinstance(target, AbstractAsyncContextManager) or (
        hasattr(target, "__aenter__") and hasattr(target, "__aexit__")
    ):
        # Checked by shape only: its yield type is the caller's word.
        return cast("AbstractAsyncContextManager[Connection]", target)
    raise TypeError(
        f"Client() takes a transport, StdioParameters, an http(s) URL, or an App or Server "
        f"(anything with memory_transport()); got {type(target).__name__}"
    )
