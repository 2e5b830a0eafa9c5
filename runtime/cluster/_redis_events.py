"""An ``EventStore`` in Redis, with the retention and caps of ``InMemoryEventStore``.

Each store (one per handshake-era session) lives under ``{prefix}:ev:{token}``: one Redis stream
per SSE stream (entry id ``{seq}-0``: the message, when it was stored, its size, whether it is a
response), a hash of counters (each stream's last sequence number and floor, the store's bytes and
events), a sorted set giving the global eviction order, and a set of live streams. Event ids are
``<stream>/<seq>``, as in memory. Retention is the same: an event stays while younger than
``window`` *or* among the last ``max_events_per_stream`` of its stream (a response never goes for
age or count); beyond ``max_bytes``/``max_events``/``max_streams`` the oldest go first; resuming
releases what the client has; resuming from before what is kept is refused, not a silent gap.
Every key expires ``expire_after`` seconds after the store was last written to.

A replay reads a stream's events back into the worker: before it reads them, it reserves
``READ_FACTOR`` times the store's bytes in the process's memory ``budget`` (the entries, their
parse and its result), given back once parsed (the GET that sends them holds what it sends:
``transports/http/_get_stream.py``); with no room it answers ``None`` and says the server is busy.

Redis unreachable: ``store_event`` still returns an id (the event is then not resumable) and
``replay_events_after`` answers ``None`` (the client reissues its request), both logged; neither
raises nor hangs (every call is bounded).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import orjson
import redis.asyncio as aioredis
from mcpbind.runtime.core.budget import READ_FACTOR, MemoryBudget, process_budget
from mcpbind.runtime.core.jsonrpc import encode
from mcpbind.runtime.transports.http.event_store import (
    BUSY_REPLAY,
    EVENT_OVERHEAD,
    TOMBSTONES,
    is_response,
    parse_event_id,
)

__all__ = ["RedisEventStore"]

logger = logging.getLogger("mcpbind.runtime.cluster")

T = TypeVar("T")


class _Unreachable(Exception):
    pass


class RedisEventStore:
    """A bounded store in Redis; see the module. ``clock`` is wall time (shared by workers)."""

    def __init__(
        self,
        client: aioredis.Redis,
        prefix: str = "mcpbind",
        max_events_per_stream: int = 512,
        max_streams: int = 4096,
        *,
        window: float = 300.0,
        max_bytes: int = 8 * 1024 * 1024,
        max_events: int = 20_000,
        expire_after: float = 3600.0,
        op_timeout: float = 2.0,
        clock: Callable[[], float] = time.time,
        budget: MemoryBudget | None = None,
    ) -> None:
        self.redis = client
        self.budget = budget or process_budget()
        self.base = f"{prefix}:ev:{secrets.token_hex(8)}"
        self.max_events_per_stream = max_events_per_stream
        self.max_streams = max_streams
        self.window = window
        self.max_bytes = max_bytes
        self.max_events = max_events
        self.expire_after = expire_after
        self.op_timeout = op_timeout
        self.clock = clock
        self._meta = f"{self.base}:meta"
        self._order = f"{self.base}:order"
        self._live = f"{self.base}:streams"
        #: Why recent ``replay_events_after`` calls answered ``None`` (``unavailable_reason``).
        self._reasons: dict[str, str] = {}

    def _stream(self, stream_id: str) -> str:
        return f"{self.base}:s:{stream_id}"

    async def _call(self, op: Callable[[], Awaitable[T]]) -> T:
        try:
            with anyio.fail_after(self.op_timeout):
                return await op()
        except (aioredis.RedisError, OSError, TimeoutError) as exc:
            raise _Unreachable(str(exc)) from exc

    # -- the EventStore protocol --------------------------------------------------------

    async def store_event(self, stream_id: str, message: Any) -> str:
        try:
            return await self._store(stream_id, message)
        except _Unreachable as exc:
            logger.warning("event of stream %r not stored (Redis unreachable: %s)", stream_id, exc)
            return f"{stream_id}/0"

    async def replay_events_after(
        self, last_event_id: str
    ) -> tuple[str, list[tuple[str, Any]]] | None:
        try:
            return await self._replay(last_event_id)
        except _Unreachable as exc:
            logger.warning("replay after %r failed (Redis unreachable: %s)", last_event_id, exc)
            self._remember(last_event_id, "the event store is unreachable now; retry shortly")
            return None

    def unavailable_reason(self, last_event_id: str) -> str:
        """Why ``replay_events_after(last_event_id)`` answered ``None``, for the client."""
        return self._reasons.get(last_event_id, "unknown Last-Event-ID")

    # -- storing ------------------------------------------------------------------------

    async def _store(self, stream_id: str, message: Any) -> str:
        size = EVENT_OVERHEAD + (len(encode(message)) if message is not None else 0)
        pipe = self.redis.pipeline(transaction=True)
        pipe.hincrby(self._meta, f"last:{stream_id}", 1)
        pipe.hincrby(self._meta, "n", 1)
        seq, order = await self._call(pipe.execute)
        fields = {
            "m": orjson.dumps(message) if message is not None else b"",
            "t": repr(self.clock()),
            "z": str(size),
            "p": "1" if is_response(message) else "0",
        }
        key = self._stream(stream_id)
        ttl = int(self.expire_after * 1000)
        pipe = self.redis.pipeline(transaction=True)
        pipe.xadd(key, fields, id=f"{seq}-0")  # type: ignore[arg-type]
        pipe.zadd(self._order, {f"{stream_id}/{seq}": order})
        pipe.sadd(self._live, stream_id)
        pipe.hincrby(self._meta, "bytes", size)
        pipe.hincrby(self._meta, "events", 1)
        for each in (key, self._meta, self._order, self._live):
            pipe.pexpire(each, ttl)
        await self._call(pipe.execute)
        await self._trim(stream_id)
        await self._enforce_caps()
        return f"{stream_id}/{seq}"

    async def _entries(self, stream_id: str, low: str, high: str, count: int | None = None) -> Any:
        key = self._stream(stream_id)
        return await self._call(lambda: self.redis.xrange(key, low, high, count=count))

    async def _drop(self, stream_id: str, seq: int, size: int, pinned: bool) -> None:
        """Drop one event (the only place events leave), raising its stream's floor."""
        floor = int(
            await self._call(lambda: self.redis.hget(self._meta, f"floor:{stream_id}")) or 0
        )
        pipe = self.redis.pipeline(transaction=True)
        pipe.xdel(self._stream(stream_id), f"{seq}-0")
        pipe.zrem(self._order, f"{stream_id}/{seq}")
        pipe.hincrby(self._meta, "bytes", -size)
        pipe.hincrby(self._meta, "events", -1)
        pipe.hset(self._meta, f"floor:{stream_id}", max(floor, seq))
        pipe.xlen(self._stream(stream_id))
        *_, left = await self._call(pipe.execute)
        if not left:
            await self._call(lambda: self.redis.srem(self._live, stream_id))
        if pinned:
            logger.warning(
                "event store full: dropped the undelivered response %s/%d", stream_id, seq
            )

    async def _trim(self, stream_id: str) -> None:
        """Per-stream retention: drop what is both out of the window and beyond the count."""
        key = self._stream(stream_id)
        excess = await self._call(lambda: self.redis.xlen(key)) - self.max_events_per_stream
        if excess <= 0:
            return
        cutoff = self.clock() - self.window
        for entry_id, fields in await self._entries(stream_id, "-", "+", excess):
            if float(fields[b"t"]) > cutoff or fields[b"p"] == b"1":
                break
            await self._drop(stream_id, _seq(entry_id), int(fields[b"z"]), False)

    async def _enforce_caps(self) -> None:
        """Global bounds: oldest first, whatever they are."""
        while True:
            pipe = self.redis.pipeline(transaction=False)
            pipe.hmget(self._meta, ["bytes", "events"])
            pipe.scard(self._live)
            (raw_bytes, raw_events), streams = await self._call(pipe.execute)
            events = int(raw_events or 0)
            if events <= 1 or (
                int(raw_bytes or 0) <= self.max_bytes
                and events <= self.max_events
                and streams <= self.max_streams
            ):
                return
            found = await self._call(lambda: self.redis.zrange(self._order, 0, 0))  # pyright: ignore[reportUnknownMemberType]  # redis-py: untyped score_cast_func
            if not found:
                return
            head: Any = found[0]
            member: str = head.decode() if isinstance(head, bytes) else str(head)
            stream_id, _, raw_seq = member.rpartition("/")
            entry = await self._entries(stream_id, f"{raw_seq}-0", f"{raw_seq}-0")
            if not entry:  # already gone: only its order entry was left
                await self._forget_order(member)
                continue
            fields = entry[0][1]
            await self._drop(stream_id, int(raw_seq), int(fields[b"z"]), fields[b"p"] == b"1")

    async def _forget_order(self, member: str) -> None:
        await self._call(lambda: self.redis.zrem(self._order, member))

    # -- replaying ----------------------------------------------------------------------

    def _remember(self, last_event_id: str, reason: str) -> None:
        self._reasons[last_event_id] = reason
        while len(self._reasons) > TOMBSTONES:
            del self._reasons[next(iter(self._reasons))]

    async def _replay(self, last_event_id: str) -> tuple[str, list[tuple[str, Any]]] | None:
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            return None
        stream_id, seq = parsed
        last, floor = await self._call(
            lambda: self.redis.hmget(self._meta, [f"last:{stream_id}", f"floor:{stream_id}"])
        )
        if last is None or seq > int(last):
            return None
        gone = (
            f"events after Last-Event-ID {last_event_id!r} are no longer available "
            f"(kept {self.window:g} s or the last {self.max_events_per_stream} per stream); "
            "reissue the request"
        )
        await self._trim(stream_id)
        floor = await self._call(lambda: self.redis.hget(self._meta, f"floor:{stream_id}"))
        if seq < int(floor or 0):
            self._remember(last_event_id, gone)
            return None
        # The client has everything up to ``seq``: release it.
        if seq > 0:
            for entry_id, fields in await self._entries(stream_id, "-", f"{seq}-0"):
                await self._drop(stream_id, _seq(entry_id), int(fields[b"z"]), False)
        # Held before it is read: the store's bytes bound what the replay reads.
        stored = await self._call(lambda: self.redis.hget(self._meta, "bytes"))
        held = int(stored or 0) * READ_FACTOR
        if not self.budget.reserve(held):
            self._remember(last_event_id, f"{BUSY_REPLAY}{self.budget.refusal(held)}")
            return None
        try:
            replay: list[tuple[str, Any]] = []
            for entry_id, fields in await self._entries(stream_id, f"({seq}-0", "+"):
                if fields[b"m"]:
                    replay.append((f"{stream_id}/{_seq(entry_id)}", orjson.loads(fields[b"m"])))
        finally:
            self.budget.release(held)
        return stream_id, replay


def _seq(entry_id: bytes | str) -> int:
    raw = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return int(raw.split("-", 1)[0])
