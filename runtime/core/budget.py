"""One process-wide allowance of bytes for everything a peer can make the server hold.

Each bound elsewhere is per something: a session's pending requests (``admission.py``), an
event store, a legacy SSE session's queues. Multiplied by the sessions a server takes, they
add up to gigabytes (100 pending 3 MB calls once took a server from 46 MB to 418 MB). The
``MemoryBudget`` is the bound on their sum, shared by every session of every transport and era
in the process: a transport ``reserve``s the bytes of what it accepts (a request body while it
is read, a pending request's params until it is answered, an SSE event until it is evicted)
and ``release``s them when that work is done. ``reserve`` is all or nothing and never waits:
new work beyond the budget is refused at once (HTTP 503 or 429 with ``Retry-After``, or the
JSON-RPC error ``SERVER_UNAVAILABLE`` -31503 with ``data.reason`` ``busy``), while pings,
cancellations, responses and requests already admitted go on.

What is counted is what the bytes take in memory, not their JSON length: a message being read
is held at ``READ_FACTOR`` times the bytes read so far (the bytes, the copy orjson parses
them in, and their parsed value), and a large message, once parsed, at its ``resident_size`` (a string of ASCII
takes about its JSON length, but one with an emoji four times it, and a list of empty objects
24 times: docs/security.md, "Memory budget", has the measurements). ``process_budget()`` is the
one every transport uses unless given another; set its ``limit`` (or pass a budget of your own)
to change it.
"""

from __future__ import annotations

import sys
from typing import Any, Final

__all__ = [
    "DEFAULT_MEMORY_BUDGET",
    "READ_FACTOR",
    "REQUEST_BYTES",
    "SMALL_MESSAGE",
    "MemoryBudget",
    "process_budget",
    "resident_size",
]

#: The default limit of the process-wide budget.
DEFAULT_MEMORY_BUDGET: Final = 256 * 1024 * 1024
#: A message of at most this many bytes is always read (pings and cancellations go on with the
#: budget spent) and is charged its JSON length: measuring it would cost more than it tells.
SMALL_MESSAGE: Final = 64 * 1024
#: Bytes held per byte of a large message while it is read and parsed: the bytes, the copy of
#: them orjson parses in (measured: ``orjson.loads`` of 3 MiB of JSON peaks at 6 MiB over its
#: input, for a string), and the parsed value (about the bytes for the strings MCP carries).
READ_FACTOR: Final = 3
#: Bytes held for each HTTP request from its complete head until its response is complete,
#: beside its body: what serving it takes whatever its size (uvicorn's cycle, the ASGI scope and
#: headers, the tasks, the answer's buffers, and in the stateless era a session of its own).
#: Measured with ``tracemalloc`` over 50 to 100 requests held open at once with small bodies
#: (2026-11-28): 13 KiB each on a handshake-era session, 31 KiB in the stateless era.
REQUEST_BYTES: Final = 32 * 1024


def resident_size(value: Any) -> int:
    """The bytes a parsed JSON value takes (``sys.getsizeof`` of each object in it; an object
    shared, such as a small integer, counts each time). A walk over every value: for large
    messages only (``SMALL_MESSAGE``)."""
    size = sys.getsizeof
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        total += size(item)
        kind = item.__class__  # type() of an Any is type[Unknown] to pyright
        if kind is dict:
            total += sum(map(size, item))
            values: Any = item.values()
        elif kind is list:
            values = item
        else:
            continue
        for member in values:
            member_kind = member.__class__
            if member_kind is dict or member_kind is list:
                stack.append(member)
            else:
                total += size(member)
    return total


class MemoryBudget:
    """Bytes in use out of ``limit``; ``reserve`` is all or nothing, ``release`` gives back.

    ``charge`` counts bytes that cannot be refused (a running request's answer recorded for
    resumption); whoever charges then frees room itself while ``exceeded`` (an event store
    evicts its oldest events). ``peak`` is the most ever in use, for measurements.
    """

    __slots__ = ("limit", "peak", "used")

    def __init__(self, limit: int = DEFAULT_MEMORY_BUDGET) -> None:
        if limit < 0:
            raise ValueError(f"a memory budget's limit is a number of bytes, not {limit}")
        self.limit = limit
        self.used = 0
        self.peak = 0

    def __repr__(self) -> str:
        return f"MemoryBudget(used={self.used}, limit={self.limit})"

    @property
    def exceeded(self) -> bool:
        """Whether more is in use than the limit allows (after a ``charge``)."""
        return self.used > self.limit

    def reserve(self, size: int) -> bool:
        """Hold ``size`` bytes if they fit; False (and nothing held) if they do not."""
        used = self.used + size
        if used > self.limit:
            return False
        self.used = used
        if used > self.peak:
            self.peak = used
        return True

    def charge(self, size: int) -> None:
        """Hold ``size`` bytes even beyond the limit (see the class docstring)."""
        used = self.used = self.used + size
        if used > self.peak:
            self.peak = used

    def release(self, size: int) -> None:
        """Give back ``size`` bytes held by ``reserve`` or ``charge``."""
        self.used -= size

    def refusal(self, size: int) -> str:
        """Why ``reserve(size)`` failed, for the peer."""
        return (
            f"the server's memory budget has {self.used} of {self.limit} bytes in use; "
            f"{size} more would exceed it"
        )


_PROCESS = MemoryBudget()


def process_budget() -> MemoryBudget:
    """The budget every session and transport of this process shares unless given another."""
    return _PROCESS
