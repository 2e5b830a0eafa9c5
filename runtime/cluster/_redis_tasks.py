"""``TaskStore`` on Redis: tasks that any worker reads, and that outlive the worker running them.

The worker that creates a task runs its handler (and, in the 2026-07-28 extension, holds its
input requests); requests naming the task are still forwarded to it while it lives
(``_relay``). Its record lives in Redis, so any worker answers ``tasks/get``, ``tasks/list``,
``tasks/result`` and ``tasks/cancel`` from there: a session of the same identity on another
worker finds it, and once the running worker is dead (its heartbeat ``{p}:worker:{id}`` gone) a
task it left unfinished is failed, with a message that says so: when read, or by the periodic
``sweep`` any live worker runs, and either way announced (``notifications/tasks`` to its
listeners on every worker), so a listener hears of it without polling.

Keys, under ``RedisState.prefix``:

- ``{p}:taskrec:{tid}``: one task (a hash: owner, worker, status, times, ttl, outcome, input
  requests), expiring with the task's ttl;
- ``{p}:tasksof:{owner}``: the task ids of one owner (identity or session), by creation time,
  for ``tasks/list``; ids whose record expired are dropped as they are met;
- ``{p}:running:{worker}``: the unfinished tasks a worker runs (a set; a task leaves it in the
  same script that makes it terminal), and ``{p}:runners:all`` the workers that have such a set:
  what the sweep looks through, a bounded number of tasks at a time.

Every status change is one compare-and-set script, so the spec's paths hold across workers: a
task cancelled on worker 3 stays cancelled when its handler on worker 1 finishes, and worker 1
hears of the cancel on the state's bus (``stopped``) and stops the handler. After Redis restarts
empty, each worker writes back the live tasks it created (``restore``); a task unknown while
that happens is answered with an error to retry, not "not found". A task of ours that ends
while Redis cannot be reached ends here all the same, and is written back once it can be
(``flush``): its handler's outcome is not lost to an outage.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Final, Protocol, TypeVar, cast

import anyio
import orjson
import redis.asyncio as aioredis
from mcpbind.runtime.core.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from mcpbind.runtime.tasks import (
    TERMINAL,
    TaskLimitError,
    TaskRecord,
    TaskStatus,
    moves_to,
    task_not_found,
)
from mcpbind.runtime.transports.http.shared_state import SharedStateUnavailable

__all__ = ["RedisTaskStore", "StoreUnavailable", "TaskState", "durable_store"]

logger = logging.getLogger("mcpbind.runtime.cluster")

T = TypeVar("T")


class StoreUnavailable(McpError):
    """Redis cannot be reached now (-32603, saying so)."""


class TaskState(Protocol):
    """What the store uses of ``RedisState`` (named here: the state imports the store)."""

    redis: aioredis.Redis
    worker_id: str

    def key(self, kind: str, name: str) -> str: ...

    async def call(self, op: Callable[[], Awaitable[T]], timeout: float | None = None) -> T: ...

    async def alive(self, worker_id: str, fresh: bool = False) -> bool: ...

    async def recovering(self) -> bool: ...

    async def publish_stop(self, task_id: str) -> None: ...


#: Compare-and-set of one task's hash: KEYS[1] the record; ARGV[1] the statuses it may move
#: from (space separated, padded), ARGV[2] fields to delete, ARGV[3] the running sets' key
#: prefix when the move is terminal (the task leaves its worker's set) else '', ARGV[4] the
#: task id, then field/value pairs to set. Answers 'ok', the status that refused the move, or
#: nil when the record is gone.
_MOVE: Final = """
local cur = redis.call('HGET', KEYS[1], 'status')
if not cur then return false end
if not string.find(ARGV[1], ' ' .. cur .. ' ', 1, true) then return cur end
for field in string.gmatch(ARGV[2], '%S+') do redis.call('HDEL', KEYS[1], field) end
if ARGV[3] ~= '' then
  local worker = redis.call('HGET', KEYS[1], 'worker')
  if worker then redis.call('SREM', ARGV[3] .. worker, ARGV[4]) end
end
if #ARGV > 4 then redis.call('HSET', KEYS[1], unpack(ARGV, 5)) end
return 'ok'
"""
#: A dead worker's running set, once empty, leaves the runners (KEYS[1] the set, KEYS[2] the
#: runners, ARGV[1] the worker): in one step, so a worker of that name starting again meanwhile
#: is not dropped.
_DROP_RUNNER: Final = """
if redis.call('SCARD', KEYS[1]) == 0 then return redis.call('SREM', KEYS[2], ARGV[1]) end
return 0
"""
#: How many tasks one sweep looks at, at most.
SWEEP_LIMIT: Final = 100
#: How often a worker that does not run a task polls it while ``tasks/result`` waits (s).
_WAIT_POLL: Final = 0.25
_RESTORING: Final = "the task store restarted and its tasks are being restored: retry shortly"


class RedisTaskStore:
    """Tasks of many workers in the Redis of ``state`` (a ``RedisState``, whose heartbeat says
    which workers live). ``max_tasks`` bounds the live tasks this worker created; ``ttl`` in ms,
    ``default_ttl`` when the requestor names none, capped at ``max_ttl`` (None: unlimited),
    as ``InMemoryTaskStore``. ``RedisState(..., durable_tasks=True)`` makes one for the app it
    serves."""

    def __init__(
        self,
        state: TaskState,
        *,
        max_tasks: int = 10_000,
        default_ttl: int | None = 3_600_000,
        max_ttl: int | None = 86_400_000,
        poll_interval: int | None = 500,
    ) -> None:
        self.state = state
        self.redis = state.redis
        self.max_tasks = max_tasks
        self.default_ttl = default_ttl
        self.max_ttl = max_ttl
        self.poll_interval = poll_interval
        self._move = state.redis.register_script(_MOVE)
        self._drop_runner = state.redis.register_script(_DROP_RUNNER)
        self._started = time.time()  # a task of this worker's name made before: orphaned
        self._runners = state.key("runners", "all")
        #: Called with a task this worker failed for another (dead) one: the tasks extension's
        #: ``announce`` once attached (``RedisState``), so its listeners hear of it.
        self.announce: Callable[[TaskRecord], Awaitable[None]] | None = None
        #: The tasks this worker created (their handlers run here), while they live.
        self._local: dict[str, TaskRecord] = {}
        #: Those of them whose end did not reach Redis yet (written back by ``flush``).
        self._unsaved: set[str] = set()
        self._stop: Callable[[str], None] = lambda task_id: None

    def __len__(self) -> int:
        return len(self._local)

    def bind(self, stop: Callable[[str], None]) -> None:
        self._stop = stop

    # -- keys and calls -------------------------------------------------------------------

    def _owner(self, owner: Hashable) -> str:
        """``owner`` as stored: a session's key is this process's, so it names the worker."""
        if isinstance(owner, tuple) and owner[:1] == ("session",):
            owner = ("session", self.state.worker_id, *cast("tuple[Hashable, ...]", owner)[1:])
        return orjson.dumps(owner, default=str).decode()

    def _record_key(self, task_id: str) -> str:
        return self.state.key("taskrec", task_id)

    def _running_key(self, worker: str) -> str:
        return self.state.key("running", worker)

    def _owner_key(self, owner: str) -> str:
        digest = hashlib.sha256(owner.encode()).hexdigest()[:32]
        return self.state.key("tasksof", digest)

    async def _call(self, op: Callable[[], Awaitable[T]]) -> T:
        try:
            return await self.state.call(op)
        except SharedStateUnavailable as exc:
            raise StoreUnavailable(INTERNAL_ERROR, f"the task store is unreachable: {exc}") from exc

    async def _load(self, task_id: str) -> dict[str, str] | None:
        raw: dict[Any, Any] = await self._call(
            lambda: self.redis.hgetall(self._record_key(task_id))
        )
        if not raw:
            return None
        return {_text(k): _text(v) for k, v in raw.items()}

    async def _put(self, record: TaskRecord) -> None:
        """Write all of ``record`` (a new task, or one of ours Redis lost)."""
        owner = self._owner(record.owner)
        fields: dict[str, str] = {
            "owner": owner,
            "worker": self.state.worker_id,
            "created": repr(record.created_at),
            "ttl": "" if record.ttl is None else str(record.ttl),
            "poll": "" if record.poll_interval is None else str(record.poll_interval),
            **_state_fields(record),
        }
        key, listing = self._record_key(record.task_id), self._owner_key(owner)
        running, me = self._running_key(self.state.worker_id), self.state.worker_id
        left = None if record.ttl is None else record.created_at + record.ttl / 1000 - time.time()

        async def op() -> Any:
            pipe = self.redis.pipeline(transaction=True)
            pipe.delete(key)
            pipe.hset(key, mapping=fields)  # type: ignore[arg-type]
            if left is not None:
                pipe.pexpire(key, max(1, int(left * 1000)))
            pipe.zadd(listing, {record.task_id: record.created_at})
            if record.terminal:
                pipe.srem(running, record.task_id)
            else:
                pipe.sadd(running, record.task_id)
                pipe.sadd(self._runners, me)
            if self.max_ttl is not None:
                pipe.pexpire(listing, self.max_ttl + 60_000)
            return await pipe.execute()

        await self._call(op)

    # -- TaskStore --------------------------------------------------------------------------

    def _live(self, task_id: str) -> TaskRecord | None:
        record = self._local.get(task_id)
        if record is not None and record.expired(time.time()):
            del self._local[task_id]
            return None
        return record

    async def create(self, owner: Hashable, ttl: int | None) -> TaskRecord:
        if len(self._local) >= self.max_tasks:
            now = time.time()
            for task_id in [t for t, r in self._local.items() if r.expired(now)]:
                del self._local[task_id]
            if len(self._local) >= self.max_tasks:
                raise TaskLimitError(
                    -32603, f"too many live tasks (at most {self.max_tasks}); try again later"
                )
        wanted = self.default_ttl if ttl is None else ttl
        if self.max_ttl is not None and (wanted is None or wanted > self.max_ttl):
            wanted = self.max_ttl
        record = TaskRecord(secrets.token_urlsafe(24), owner, wanted, self.poll_interval)
        await self._put(record)
        self._local[record.task_id] = record
        return record

    async def get(self, owner: Hashable, task_id: str) -> TaskRecord | None:
        fields = await self._load(task_id)
        local = self._live(task_id)
        if fields is None:
            if local is not None and local.owner == owner:
                await self._put(local)  # Redis lost it (restarted): ours to write back
                return local
            if await self._restoring():
                raise McpError(INTERNAL_ERROR, _RESTORING, {"taskId": task_id})
            return None
        if fields.get("owner") != self._owner(owner):
            return None
        return await self._known(task_id, owner, fields, local)

    async def _known(
        self, task_id: str, owner: Hashable, fields: dict[str, str], local: TaskRecord | None
    ) -> TaskRecord:
        """The record of ``fields``: ours merged, or another worker's, failed if it died."""
        if local is not None:
            self._merge(local, fields)
            return local
        record = _record(task_id, owner, fields)
        worker = fields.get("worker", "")
        if record.terminal or not await self._orphaned(worker):
            return record
        await self._fail_orphan(record, worker)
        return record

    async def _fail_orphan(self, record: TaskRecord, worker: str) -> bool:
        """Fail ``record``, left unfinished by dead ``worker``, and announce it (only the worker
        whose move succeeds does: one announcement, however many find it)."""
        error = McpError(
            INTERNAL_ERROR,
            f"the worker running the task ({worker}) stopped before the task finished",
        )
        failed = await self._swap(
            record, "failed", {"error": _error_json(error)}, error.message, None, error
        )
        if failed and self.announce is not None:
            await self.announce(record)
        return failed

    async def sweep(self, limit: int = SWEEP_LIMIT) -> int:
        """Fail (and announce) the unfinished tasks of dead workers, looking at ``limit`` tasks
        at most; how many were failed. Any live worker may run it (``RedisState`` does,
        periodically): the compare-and-set lets one of them fail each task."""
        me, failed = self.state.worker_id, 0
        runners = await self._call(lambda: self.redis.smembers(self._runners))
        for worker in sorted(_text(w) for w in runners):
            if limit <= 0:
                break
            if not await self._orphaned(worker):  # alive (this worker: each task is checked)
                continue
            running = self._running_key(worker)
            picked = await self._call(lambda: self.redis.srandmember(running, limit))  # noqa: B023
            stale: builtins.list[str] = []
            for task_id in (_text(t) for t in picked or ()):
                if worker == me and self._live(task_id) is not None:
                    continue  # ours, running here
                limit -= 1
                fields = await self._load(task_id)
                found = fields or {}
                if worker == me and float(found.get("created") or 0) >= self._started:
                    continue  # made by this process: in ``_local`` by now, or expired
                record = None if fields is None else _record(task_id, found.get("owner"), fields)
                if record is None or record.terminal or found.get("worker") != worker:
                    stale.append(task_id)  # expired, ended, or written again by another worker
                elif await self._fail_orphan(record, worker):
                    failed += 1
            if stale:
                await self._call(lambda: self.redis.srem(running, *stale))  # noqa: B023
            if worker != me:
                keys = [running, self._runners]
                await self._call(lambda: self._drop_runner(keys=keys, args=[worker]))  # noqa: B023
        return failed

    async def _orphaned(self, worker: str) -> bool:
        """Whether ``worker`` no longer runs what it started: dead, or this very worker (a
        task of ours not in memory was started by an earlier process of the same name)."""
        if worker == self.state.worker_id:
            return True
        try:
            if await self.state.alive(worker, fresh=True):
                return False
            return not await self.state.recovering()
        except SharedStateUnavailable as exc:
            raise StoreUnavailable(INTERNAL_ERROR, f"the task store is unreachable: {exc}") from exc

    async def _restoring(self) -> bool:
        try:
            return await self.state.recovering()
        except SharedStateUnavailable:
            return True

    async def update(
        self, record: TaskRecord, status: TaskStatus, message: str | None = None
    ) -> bool:
        if status in TERMINAL or record.status not in moves_to(status):
            return False
        return await self._swap(record, status, {}, message)

    async def finish(
        self,
        record: TaskRecord,
        status: TaskStatus,
        result: dict[str, Any] | None,
        error: McpError | None,
        message: str | None = None,
    ) -> bool:
        if status not in TERMINAL or record.status not in moves_to(status):
            return False
        outcome: dict[str, str] = {}
        if result is not None:
            outcome["result"] = orjson.dumps(result).decode()
        if error is not None:
            outcome["error"] = _error_json(error)
        try:
            if not await self._swap(record, status, outcome, message, result, error):
                return False
        except StoreUnavailable as exc:
            if self._local.get(record.task_id) is not record:
                raise
            # Ours: it ends here now, and in Redis once it is back (``flush``).
            logger.warning("task %s ended while Redis is unreachable: %s", record.task_id, exc)
            record.status, record.status_message = status, message
            record.last_updated_at = time.time()
            record.result, record.error = result, error
            record.done.set()
            self._unsaved.add(record.task_id)
            return True
        if status == "cancelled" and record.task_id not in self._local:
            await self.state.publish_stop(record.task_id)  # its handler runs on another worker
        return True

    async def _swap(
        self,
        record: TaskRecord,
        status: TaskStatus,
        outcome: dict[str, str],
        message: str | None,
        result: dict[str, Any] | None = None,
        error: McpError | None = None,
    ) -> bool:
        """Move ``record`` to ``status`` in Redis if its stored status allows, then here."""
        now = time.time()
        sets = {"status": status, "updated": repr(now), **outcome}
        drops: builtins.list[str] = []
        if message is None:
            drops.append("msg")
        else:
            sets["msg"] = message
        if status == "input_required" and record.input_requests:
            sets["inputs"] = orjson.dumps(record.input_requests).decode()
        else:
            drops.append("inputs")
        sources = " " + " ".join(sorted(moves_to(status))) + " "
        running = self._running_key("") if status in TERMINAL else ""
        pairs = (x for pair in sets.items() for x in pair)
        args = [sources, " ".join(drops), running, record.task_id, *pairs]
        key = self._record_key(record.task_id)
        answer = _text(await self._call(lambda: self._move(keys=[key], args=args)))
        if answer is None and self._local.get(record.task_id) is record:
            await self._put(record)  # Redis lost it (restarted): ours to write back, then move
            answer = _text(await self._call(lambda: self._move(keys=[key], args=args)))
        if answer != "ok":
            fields = await self._load(record.task_id) if answer is not None else None
            if fields is not None:
                self._merge(record, fields)
            return False
        record.status, record.status_message, record.last_updated_at = status, message, now
        if status in TERMINAL:
            record.result, record.error = result, error
            record.done.set()
        return True

    def _merge(self, record: TaskRecord, fields: dict[str, str]) -> None:
        """Bring ``record`` up to what Redis holds (a move made by another worker); a task of
        ours made terminal elsewhere (cancelled) is stopped here."""
        status = fields.get("status")
        if status is None or status == record.status or record.terminal:
            return
        record.status = status  # type: ignore[assignment]  # written only by this module
        record.status_message = fields.get("msg")
        record.last_updated_at = float(fields.get("updated") or record.last_updated_at)
        record.input_requests = _json(fields.get("inputs"))
        if record.terminal:
            record.result = _json(fields.get("result"))
            record.error = _error(fields.get("error"))
            record.done.set()
            if self._local.get(record.task_id) is record:
                self._stop(record.task_id)

    async def stopped(self, task_id: str) -> None:
        """Another worker cancelled ``task_id``: if it runs here, take its record from Redis
        and stop its handler."""
        record = self._local.get(task_id)
        if record is None or record.terminal:
            return
        try:
            fields = await self._load(task_id)
        except StoreUnavailable:
            return  # its handler learns it at its next status change
        if fields is not None:
            self._merge(record, fields)

    async def wait(self, record: TaskRecord) -> TaskRecord:
        if self._local.get(record.task_id) is record:
            await record.done.wait()
            return record
        while not record.terminal:  # another worker runs it: poll what Redis has
            await anyio.sleep(_WAIT_POLL)
            fresh = await self.get(record.owner, record.task_id)
            if fresh is None:
                raise task_not_found(record.task_id)
            record = fresh
        return record

    async def list(
        self, owner: Hashable, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        stored = self._owner(owner)
        listing = self._owner_key(stored)
        start = 0
        if cursor is not None:
            rank = await self._call(lambda: self.redis.zrank(listing, cursor))  # pyright: ignore[reportUnknownMemberType]  # redis-py: untyped score_cast_func
            if rank is None:
                raise McpError(INVALID_PARAMS, "Invalid cursor", {"cursor": cursor})
            start = int(rank) + 1  # type: ignore[arg-type]  # an int when found
        page: list[TaskRecord] = []
        gone: list[str] = []
        while len(page) <= limit:
            ids = await self._range(listing, start, start + limit)
            if not ids:
                break
            start += len(ids)
            found = await self._call(functools.partial(self._load_many, ids))
            for task_id, fields in zip(ids, found, strict=True):
                if fields is None or fields.get("owner") != stored:
                    gone.append(task_id)
                    continue
                page.append(await self._known(task_id, owner, fields, self._live(task_id)))
        if gone:
            await self._call(lambda: self.redis.zrem(listing, *gone))
        if len(page) > limit:
            return page[:limit], page[limit - 1].task_id
        return page, None

    async def _range(self, listing: str, first: int, last: int) -> builtins.list[str]:
        raw = await self._call(lambda: self.redis.zrange(listing, first, last))  # pyright: ignore[reportUnknownMemberType]  # redis-py: untyped score_cast_func
        return [_text(task_id) for task_id in raw]

    async def _load_many(self, ids: builtins.list[str]) -> builtins.list[dict[str, str] | None]:
        pipe = self.redis.pipeline(transaction=False)
        for task_id in ids:
            pipe.hgetall(self._record_key(task_id))
        raw = await pipe.execute()
        return [{_text(k): _text(v) for k, v in r.items()} if r else None for r in raw]

    async def delete(self, task_id: str) -> None:
        fields = await self._load(task_id)
        self._local.pop(task_id, None)
        key = self._record_key(task_id)
        await self._call(lambda: self.redis.delete(key))
        if fields is not None and "owner" in fields:
            listing = self._owner_key(fields["owner"])
            await self._call(lambda: self.redis.zrem(listing, task_id))

    async def restore(self) -> None:
        """Write back the live tasks this worker created (Redis restarted empty)."""
        now = time.time()
        for task_id in [t for t, r in self._local.items() if r.expired(now)]:
            del self._local[task_id]
        try:
            for record in list(self._local.values()):
                await self._put(record)
        except StoreUnavailable as exc:
            raise SharedStateUnavailable(exc.message) from exc  # the heartbeat retries
        self._unsaved.clear()

    async def flush(self) -> None:
        """Write back the tasks of ours that ended while Redis was unreachable."""
        for task_id in list(self._unsaved):
            record = self._live(task_id)
            if record is not None:
                try:
                    await self._put(record)
                except StoreUnavailable as exc:
                    raise SharedStateUnavailable(exc.message) from exc  # the heartbeat retries
            self._unsaved.discard(task_id)


def durable_store(state: TaskState, current: Any) -> RedisTaskStore:
    """A ``RedisTaskStore`` on ``state`` with the limits of the store it replaces."""
    limits = ("max_tasks", "default_ttl", "max_ttl", "poll_interval")
    return RedisTaskStore(state, **{k: getattr(current, k) for k in limits if hasattr(current, k)})


def _text(raw: Any) -> Any:
    return raw.decode() if isinstance(raw, bytes) else raw


def _json(raw: str | None) -> Any:
    return None if raw is None else orjson.loads(raw)


def _error_json(error: McpError) -> str:
    return orjson.dumps({"code": error.code, "message": error.message, "data": error.data}).decode()


def _error(raw: str | None) -> McpError | None:
    parsed = _json(raw)
    if not isinstance(parsed, dict):
        return None
    data = cast("dict[str, Any]", parsed)
    return McpError(
        int(data.get("code", INTERNAL_ERROR)), str(data.get("message")), data.get("data")
    )


def _state_fields(record: TaskRecord) -> dict[str, str]:
    """The fields of ``record`` that change with its status."""
    fields = {"status": record.status, "updated": repr(record.last_updated_at)}
    if record.status_message is not None:
        fields["msg"] = record.status_message
    if record.input_requests:
        fields["inputs"] = orjson.dumps(record.input_requests).decode()
    if record.result is not None:
        fields["result"] = orjson.dumps(record.result).decode()
    if record.error is not None:
        fields["error"] = _error_json(record.error)
    return fields


def _record(task_id: str, owner: Hashable, fields: dict[str, str]) -> TaskRecord:
    """A record of another worker's task, as Redis holds it."""
    ttl, poll = fields.get("ttl"), fields.get("poll")
    record = TaskRecord(
        task_id,
        owner,
        int(ttl) if ttl else None,
        int(poll) if poll else None,
        created_at=float(fields.get("created") or time.time()),
    )
    record.status = fields.get("status", "working")  # type: ignore[assignment]
    record.status_message = fields.get("msg")
    record.last_updated_at = float(fields.get("updated") or record.created_at)
    record.input_requests = _json(fields.get("inputs"))
    if record.terminal:
        record.result = _json(fields.get("result"))
        record.error = _error(fields.get("error"))
        record.done.set()
    return record
