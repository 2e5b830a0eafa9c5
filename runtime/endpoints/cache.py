"""The client's response cache: the 2026-07-28 caching hints (``server/utilities/caching.md``).

A stateless-era server marks the results of the list methods and ``resources/read`` with
``ttlMs`` (how long they stay fresh) and ``cacheScope``. A result with ``ttlMs`` above 0 is kept,
keyed by revision, method and every param but ``_meta`` (so each page by its cursor, each read by
its URI), and a repeat of the same request within ``ttlMs`` is answered from here. Never kept:
a handshake-era result (those carry no hints), ``ttlMs`` 0, absent or negative, and a result
that took more than one round (``inputResponses``/``requestState``, which are not in the key).

What drops entries at once: the list-changed notification of their list, a
``resources/updated`` for the URI read, a failed ``tools/call`` that says the list may be old
(unknown tool, invalid params, header mismatch), and an error to a request for a later page
(its cursor may be stale: all of that list goes). A notification also drops the answer of a
request in flight when it arrived, which may predate the change.

``cacheScope``: a cache is one ``Client``'s, which holds one connection and one set of
credentials, so ``"private"`` and ``"public"`` results are both kept, and never shared with
another client; the scope is recorded on each entry (``scope_of``).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import orjson
from mcpbind import generated
from mcpbind.generated.names import (
    NOTIFICATIONS_PROMPTS_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_UPDATED,
    NOTIFICATIONS_TOOLS_LIST_CHANGED,
    PROMPTS_LIST,
    RESOURCES_LIST,
    RESOURCES_READ,
    RESOURCES_TEMPLATES_LIST,
    TOOLS_CALL,
    TOOLS_LIST,
)
from mcpbind.runtime.core.bindings import dump
from mcpbind.runtime.core.errors import HEADER_MISMATCH, INVALID_PARAMS, METHOD_NOT_FOUND, McpError
from mcpbind.runtime.core.outgoing import REQUEST_SENT, RequestId

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = ["CACHEABLE", "ResponseCache"]

R = TypeVar("R")

#: The methods whose results carry caching hints (caching.md, "Cacheable Results"), less
#: ``server/discover``, which the lifecycle sends once per connection.
CACHEABLE = frozenset(
    {TOOLS_LIST, PROMPTS_LIST, RESOURCES_LIST, RESOURCES_TEMPLATES_LIST, RESOURCES_READ}
)
_INVALIDATES = {
    NOTIFICATIONS_TOOLS_LIST_CHANGED: frozenset({TOOLS_LIST}),
    NOTIFICATIONS_PROMPTS_LIST_CHANGED: frozenset({PROMPTS_LIST}),
    NOTIFICATIONS_RESOURCES_LIST_CHANGED: frozenset({RESOURCES_LIST, RESOURCES_TEMPLATES_LIST}),
}
#: Errors to ``tools/call`` that hint the tool list changed (caching.md: a client MAY re-fetch).
_STALE_TOOLS = frozenset({METHOD_NOT_FOUND, INVALID_PARAMS, HEADER_MISMATCH})
#: Params of a multi round-trip retry: results that depend on them are never cached.
_ROUND_PARAMS = ("inputResponses", "requestState")

Key = tuple[str, str, bytes]


@dataclass(slots=True)
class _Entry:
    result: Any
    expires: float
    scope: str | None
    uri: str | None


class ResponseCache:
    """One client's cache of results marked fresh by their server; ``enabled=False`` is off."""

    def __init__(self, enabled: bool = True, clock: Callable[[], float] = time.monotonic) -> None:
        self.enabled = enabled
        self._clock = clock
        self._entries: dict[Key, _Entry] = {}
        #: Moves at every invalidation: an answer requested before it is not stored.
        self._generation = 0

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget every entry."""
        self._forget(lambda key, entry: True)

    def scope_of(self, method: str, params: dict[str, Any] | None = None) -> str | None:
        """The ``cacheScope`` of the fresh entry for a request, or None if there is none."""
        wanted = _canonical(params or {})
        now = self._clock()
        for (_, kept, selected), entry in self._entries.items():
            if kept == method and selected == wanted and entry.expires > now:
                return entry.scope
        return None

    def key(self, revision: str, method: str, params: Any) -> Key | None:
        """The key of a request whose result may be cached, else None."""
        if (
            not self.enabled
            or method not in CACHEABLE
            or generated.ERAS.get(revision) != "stateless"
        ):
            return None
        body: JsonValue = dump(params) or {}
        if type(body) is not dict or any(name in body for name in _ROUND_PARAMS):
            return None
        return (revision, method, _canonical(body))

    async def fetch(self, key: Key, send: Callable[[], Awaitable[R]]) -> R:
        """The fresh entry for ``key`` (a copy), or ``send()``'s result, kept if it says so."""
        entry = self._entries.get(key)
        if entry is not None:
            if entry.expires > self._clock():
                copied: R = entry.result.model_copy(deep=True)
                return copied
            del self._entries[key]
        generation = self._generation
        # A list, not a nonlocal int: the checkers see a counter bumped in a callback as 0.
        sent: list[str] = []
        outer = REQUEST_SENT.get()

        def count(method: str, request_id: RequestId) -> None:
            sent.append(method)
            if outer is not None:
                outer(method, request_id)

        token = REQUEST_SENT.set(count)
        try:
            result = await send()
        finally:
            REQUEST_SENT.reset(token)
        received = self._clock()
        ttl = getattr(result, "ttlMs", None)
        if len(sent) == 1 and generation == self._generation and type(ttl) is int and ttl > 0:
            uri = orjson.loads(key[2]).get("uri") if key[1] == RESOURCES_READ else None
            scope = getattr(result, "cacheScope", None)
            self._entries[key] = _Entry(
                _copy(result), received + ttl / 1000, scope if type(scope) is str else None, uri
            )
        return result

    def notified(self, method: str, params: dict[str, Any] | None) -> None:
        """Drop what a notification from the server says is stale."""
        methods = _INVALIDATES.get(method)
        if methods is not None:
            self._forget(lambda key, entry: key[1] in methods)
        elif method == NOTIFICATIONS_RESOURCES_UPDATED:
            uri = params.get("uri") if params is not None else None
            self._forget(lambda key, entry: key[1] == RESOURCES_READ and entry.uri == uri)

    def failed(self, method: str, params: Any, error: McpError) -> None:
        """Drop what an error answer shows may be stale (caching.md, "Interaction with
        Pagination": a cursor that stopped working discards the list's cached pages)."""
        if method == TOOLS_CALL and error.code in _STALE_TOOLS:
            self._forget(lambda key, entry: key[1] == TOOLS_LIST)
        elif method in CACHEABLE and method != RESOURCES_READ:
            body: JsonValue = dump(params)
            if type(body) is dict and body.get("cursor"):
                self._forget(lambda key, entry: key[1] == method)

    def _forget(self, which: Callable[[Key, _Entry], bool]) -> None:
        self._generation += 1
        for key in [key for key, entry in self._entries.items() if which(key, entry)]:
            del self._entries[key]


def _canonical(params: dict[str, Any]) -> bytes:
    """The params that select a result, as sorted JSON: all but ``_meta`` (caching.md)."""
    return orjson.dumps(
        {name: value for name, value in params.items() if name != "_meta"},
        option=orjson.OPT_SORT_KEYS,
    )


def _copy(result: Any) -> Any:
    copy = getattr(result, "model_copy", None)
    return copy(deep=True) if copy is not None else result
