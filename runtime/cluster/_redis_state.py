"""``SharedState`` on Redis (the ``redis`` package's asyncio client).

Keys, under ``prefix`` (default ``mcpbind``):

- ``{p}:worker:{id}``: this worker is alive (``SET EX heartbeat_ttl``, renewed every second);
- ``{p}:session:{sid}``: the worker owning handshake-era session ``sid`` (``SET EX session_ttl``,
  renewed while it lives; renewed at once after Redis comes back empty);
- ``{p}:task:{tid}``: the worker running task ``tid`` (a 2026 extension task, or a 2025-11-25
  task made without a session), for the task's ttl: ``tasks/*`` requests naming it are
  forwarded there;
- ``{p}:epoch:current``: a random value the first worker sets; one that changed or went missing
  means Redis restarted empty, and ``{p}:epoch:recovering`` (``SET PX recovery``) then marks the
  window in which owners are still re-registering: a session or task unknown to Redis is
  answered 503 (retry), not 404, within it;
- ``{p}:fwd:{id}``: requests forwarded to worker ``id`` (a list it pops), and
  ``{p}:reply:{fid}`` / ``{p}:ctl:{fid}``: one forwarded request's answer chunks and its
  disconnect signal (lists with a short TTL, so an abandoned one goes away);
- channel ``{p}:notify``: change notifications, fanned out again by every other worker (and,
  with ``durable_tasks``, the cancels of tasks another worker runs);
- with ``durable_tasks``, the tasks themselves (``RedisTaskStore``);
- ``{p}:dpop:{digest}``: the DPoP proofs accepted, while their ``iat`` window lasts, when the
  workers' verifiers share ``replay_cache()`` (``RedisReplayCache``).

Every Redis call is bounded (``op_timeout``); a failure is ``SharedStateUnavailable``, which the
endpoint answers with 503. Background loops retry with a short back-off, so a worker survives
Redis restarting and picks up where it was.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar, cast

import anyio
import orjson
import redis.asyncio as aioredis
from anyio.abc import TaskGroup
from mcpbind.runtime.core.bounded import remember
from mcpbind.runtime.transports.http.event_store import EventStore
from mcpbind.runtime.transports.http.shared_state import SharedStateUnavailable, default_worker_id
from redis.exceptions import ConnectionError as RedisConnectionError, RedisError
from starlette.types import Receive, Scope, Send

from ._redis_events import RedisEventStore
from ._redis_replay import RedisReplayCache
from ._redis_tasks import RedisTaskStore, durable_store
from ._relay import forward, serve_forwarded

if TYPE_CHECKING:
    from mcpbind.runtime.transports.http.server import StreamableHTTPServer

__all__ = ["RedisState"]

logger = logging.getLogger("mcpbind.runtime.cluster")

T = TypeVar("T")
#: What a Redis call may fail with when the server is gone or slow.
FAILURES = (RedisError, OSError, TimeoutError)
#: How long a session's owner, and a worker being alive, are remembered (seconds); how many.
_OWNER_CACHE = 5.0
_ALIVE_CACHE = 1.0
_CACHED = 10_000
#: How long a task with no ttl of its own stays reachable from other workers (ms).
_TASK_TTL = 86_400_000


class RedisState:
    """Shared state for many workers on one Redis. Make it with ``from_url``.

    ``session_ttl``: how long a session's ownership lasts without renewal (a worker that dies
    leaves it to expire); ``heartbeat_ttl``: how soon a dead worker counts as dead (its sessions'
    clients get 404 after at most about that long; a live worker whose loop stalls longer than
    that would be taken for dead meanwhile, so keep it well above the worst stall);
    ``op_timeout``: the bound on any one call. ``recovery``: how long after Redis came back
    empty a session or task it does not know is taken for one not re-registered yet (503)
    rather than unknown (404); default ``heartbeat_ttl + op_timeout``, by when every live
    owner has heartbeated and re-registered. ``durable_tasks``: the app's tasks are kept in
    Redis (``RedisTaskStore``) rather than in the memory of the worker running them.
    ``event_store_factory``: the sessions' event stores (``None``: the endpoint's own, in
    memory; resuming through another worker reaches the owner's store by forwarding).
    """

    forwarding = True

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        worker_id: str | None = None,
        prefix: str = "mcpbind",
        session_ttl: float = 30.0,
        heartbeat_ttl: float = 5.0,
        op_timeout: float = 2.0,
        event_store_factory: Callable[[], EventStore] | None = None,
        recovery: float | None = None,
        durable_tasks: bool = False,
    ) -> None:
        self.redis = client
        self.worker_id = worker_id or default_worker_id()
        self.prefix = prefix
        self.session_ttl = session_ttl
        self.heartbeat_ttl = heartbeat_ttl
        self.op_timeout = op_timeout
        self.event_store_factory = event_store_factory
        self.recovery = recovery if recovery is not None else heartbeat_ttl + op_timeout
        self.channel = f"{prefix}:notify"
        self._server: StreamableHTTPServer | None = None
        self._released: set[str] = set()
        self._owners: dict[str, tuple[str, float]] = {}
        self._alive: dict[str, float] = {}
        #: The tasks this worker runs that other workers may be asked about: id -> expiry.
        self._tasks: dict[str, float] = {}
        #: The ``{p}:epoch`` this worker registered under (None: not connected yet).
        self.epoch: str | None = None
        self._tg: TaskGroup | None = None
        #: Whether the last heartbeat reached Redis (a failure, then success, re-claims all).
        self.connected = False
        self.durable_tasks = durable_tasks
        #: The tasks' store once attached to an app with tasks and ``durable_tasks``.
        self.task_store: RedisTaskStore | None = None

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        worker_id: str | None = None,
        prefix: str = "mcpbind",
        session_ttl: float = 30.0,
        heartbeat_ttl: float = 5.0,
        op_timeout: float = 2.0,
        event_store_factory: Callable[[], EventStore] | None = None,
        redis_events: bool = False,
        recovery: float | None = None,
        durable_tasks: bool = False,
    ) -> RedisState:
        """A state on the Redis at ``url`` (``redis://host:port/db``); connects lazily.
        ``redis_events`` keeps the sessions' SSE events in Redis too (``RedisEventStore``)
        instead of in the owner's memory."""
        # redis-py leaves from_url's **kwargs untyped.
        client = aioredis.Redis.from_url(  # pyright: ignore[reportUnknownMemberType]
            url,
            socket_connect_timeout=op_timeout,
            socket_timeout=op_timeout + 3.0,  # above the 1 s blocking pops
            retry_on_timeout=False,
        )
        if redis_events and event_store_factory is None:
            event_store_factory = partial(RedisEventStore, client, prefix, op_timeout=op_timeout)
        return cls(
            client,
            worker_id=worker_id,
            prefix=prefix,
            session_ttl=session_ttl,
            heartbeat_ttl=heartbeat_ttl,
            op_timeout=op_timeout,
            event_store_factory=event_store_factory,
            recovery=recovery,
            durable_tasks=durable_tasks,
        )

    # -- keys and bounded calls ---------------------------------------------------------

    def key(self, kind: str, name: str) -> str:
        return f"{self.prefix}:{kind}:{name}"

    async def call(self, op: Callable[[], Awaitable[T]], timeout: float | None = None) -> T:
        """One Redis call, bounded; any failure is ``SharedStateUnavailable``. A connection
        error is retried once at once: after Redis restarted, the pool's first use of each old
        connection fails, and a fresh one is all it takes."""
        try:
            with anyio.fail_after(timeout or self.op_timeout):
                try:
                    return await op()
                except (RedisConnectionError, ConnectionError):
                    return await op()
        except FAILURES as exc:
            raise SharedStateUnavailable(f"Redis unreachable: {exc}") from exc

    def replay_cache(self) -> RedisReplayCache:
        """A DPoP replay cache shared by every worker on this Redis, for
        ``DPoPVerifier(replay_cache=...)``: a proof accepted by one worker is refused by all."""
        return RedisReplayCache(self)

    # -- lifetime -----------------------------------------------------------------------

    def attach(self, server: StreamableHTTPServer) -> AbstractAsyncContextManager[None]:
        return self._attached(server)

    @asynccontextmanager
    async def _attached(self, server: StreamableHTTPServer) -> AsyncGenerator[None, None]:
        self._server = server
        owner: Any = getattr(server.serve, "__self__", None)
        relaying = hasattr(owner, "relay")
        if relaying:
            owner.relay = self.publish
        tasks: Any = getattr(owner, "tasks", None)
        directing = hasattr(tasks, "directory")
        if directing:
            tasks.directory = self
            if isinstance(tasks.store, RedisTaskStore):
                self.task_store = tasks.store  # given by hand: its stops and restores go here
            elif self.durable_tasks:
                self.task_store = durable_store(self, tasks.store)
                tasks.store = self.task_store
            extension = getattr(tasks, "extension", None)
            if self.task_store is not None and extension is not None:
                self.task_store.announce = extension.announce  # dead workers' tasks, failed here
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._keep_alive, server)
                tg.start_soon(self._consume_forwarded, server)
                tg.start_soon(self._listen_bus, owner if relaying else None)
                if self.task_store is not None:
                    tg.start_soon(self._sweep_tasks, self.task_store)
                try:
                    yield
                finally:
                    tg.cancel_scope.cancel()
        finally:
            self._tg = None
            if relaying:
                owner.relay = None
            if directing:
                tasks.directory = None
            await self._leave(server)

    async def _leave(self, server: StreamableHTTPServer) -> None:
        """Say at once that this worker and its sessions are gone (best effort)."""
        goodbye = orjson.dumps({"o": self.worker_id, "leave": True})
        keys = [self.key("worker", self.worker_id)]
        keys += [self.key("session", sid) for sid in server.sessions]
        keys += [self.key("session", sid) for sid in self._released]
        keys += [self.key("task", tid) for tid in self._tasks]
        with anyio.CancelScope(shield=True), anyio.move_on_after(self.op_timeout):
            try:
                await self.redis.delete(*keys)
                await self._publish(goodbye)
            except FAILURES as exc:
                logger.warning("could not clear worker %s in Redis: %s", self.worker_id, exc)
        self._released.clear()
        self._tasks.clear()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self.redis.aclose()

    async def _keep_alive(self, server: StreamableHTTPServer) -> None:
        """Heartbeat every second; renew owned sessions every ``session_ttl / 3``, and owned
        sessions and tasks at once when Redis restarted empty (its epoch changed) or was
        unreachable."""
        renew_every = max(1.0, self.session_ttl / 3)
        last_renewal = -renew_every
        while True:
            try:
                restarted = await self._heartbeat()
                now = anyio.current_time()
                if restarted:
                    await self._renew_tasks()
                    if self.task_store is not None:
                        await self.task_store.restore()
                if self.task_store is not None:
                    await self.task_store.flush()
                if restarted or not self.connected or now - last_renewal >= renew_every:
                    await self._renew(server)
                    last_renewal = now
                await self._drop_released()
                if not self.connected:
                    logger.info("worker %s connected to Redis", self.worker_id)
                self.connected = True
            except SharedStateUnavailable as exc:
                if self.connected:
                    logger.warning("worker %s lost Redis: %s", self.worker_id, exc)
                self.connected = False
            await anyio.sleep(min(1.0, self.heartbeat_ttl / 3))

    async def _sweep_tasks(self, store: RedisTaskStore) -> None:
        """Fail and announce dead workers' unfinished tasks, every half heartbeat: a listener
        hears of such a task within about ``1.5 * heartbeat_ttl`` of its worker's death."""
        while True:
            await anyio.sleep(max(0.5, self.heartbeat_ttl / 2))
            try:
                await store.sweep()
            except Exception as exc:  # Redis away, or junk in it: the next sweep tries again
                logger.warning("worker %s could not sweep the tasks: %s", self.worker_id, exc)

    async def _heartbeat(self) -> bool:
        """Say this worker is alive, and check Redis' epoch; ``True`` if Redis restarted empty
        since the last heartbeat (what this worker registered is gone: re-register it)."""
        fresh = secrets.token_hex(8)

        async def op() -> Any:
            pipe = self.redis.pipeline(transaction=False)
            pipe.set(self.key("worker", self.worker_id), "1", px=int(self.heartbeat_ttl * 1000))
            pipe.set(self.key("epoch", "current"), fresh, nx=True)
            pipe.get(self.key("epoch", "current"))
            return await pipe.execute()

        current = _text((await self.call(op))[2])
        known = self.epoch
        if known is not None and current != known:
            logger.warning("worker %s: Redis restarted empty; re-registering", self.worker_id)
            await self._mark_recovering()  # before ``epoch`` moves on: see ``recovering``
        self.epoch = current
        return known is not None and current != known

    async def _mark_recovering(self) -> None:
        """Open the restart window (the first worker to notice it does; it is not extended)."""
        await self.call(
            lambda: self.redis.set(
                self.key("epoch", "recovering"), "1", px=int(self.recovery * 1000), nx=True
            )
        )

    async def recovering(self) -> bool:
        """Whether Redis restarted empty a moment ago, so that owners may not have re-registered
        what it lost yet (a session or task it does not know is then retried, not unknown)."""

        async def op() -> Any:
            pipe = self.redis.pipeline(transaction=False)
            pipe.exists(self.key("epoch", "recovering"))
            pipe.get(self.key("epoch", "current"))
            return await pipe.execute()

        # The epoch known *before* asking: a heartbeat may notice the restart while this call is
        # on its way and move ``self.epoch`` on before its marker reaches Redis, so that this
        # call's answer holds neither the marker nor an epoch the worker still calls new.
        known = self.epoch
        marked, current = await self.call(op)
        if marked:
            return True
        if known is None or _text(current) == known:
            return False
        await self._mark_recovering()  # restarted, and no heartbeat has noticed yet
        return True

    async def _renew(self, server: StreamableHTTPServer) -> None:
        sids = [sid for sid, session in server.sessions.items() if not session.closed]
        if not sids:
            return
        pipe = self.redis.pipeline(transaction=False)
        for sid in sids:
            pipe.set(self.key("session", sid), self.worker_id, px=int(self.session_ttl * 1000))
        await self.call(pipe.execute, self.op_timeout * 2)

    async def _renew_tasks(self) -> None:
        now = time.time()
        for tid in [t for t, until in self._tasks.items() if until <= now]:
            del self._tasks[tid]
        if not self._tasks:
            return
        pipe = self.redis.pipeline(transaction=False)
        for tid, until in self._tasks.items():
            pipe.set(self.key("task", tid), self.worker_id, px=max(1, int((until - now) * 1000)))
        await self.call(pipe.execute, self.op_timeout * 2)

    async def _drop_released(self) -> None:
        if not self._released:
            return
        released = list(self._released)
        await self.call(lambda: self.redis.delete(*(self.key("session", s) for s in released)))
        self._released.difference_update(released)

    # -- session directory --------------------------------------------------------------

    async def claim(self, session_id: str) -> None:
        await self.call(
            lambda: self.redis.set(
                self.key("session", session_id), self.worker_id, px=int(self.session_ttl * 1000)
            )
        )

    def release(self, session_id: str) -> None:
        self._released.add(session_id)

    async def owner_of(self, kind: str, name: str) -> str | None:
        """The worker holding session or task (``kind``) ``name`` (remembered a few seconds:
        neither ever moves)."""
        now = anyio.current_time()
        key = self.key(kind, name)
        known = self._owners.get(key)
        if known is not None and known[1] > now:
            return known[0]
        owner = _text(await self.call(lambda: self.redis.get(key)))
        if owner is not None:
            remember(self._owners, key, (owner, now + _OWNER_CACHE), _CACHED)
        return owner

    # -- task directory (``tasks.TaskDirectory``) ---------------------------------------

    async def record_task(self, task_id: str, ttl_ms: int | None) -> None:
        """This worker runs ``task_id``: other workers forward requests about it here."""
        ttl = max(1000, ttl_ms if ttl_ms is not None else _TASK_TTL)
        now = time.time()
        if len(self._tasks) >= _CACHED:
            for tid in [t for t, until in self._tasks.items() if until <= now]:
                del self._tasks[tid]
        self._tasks[task_id] = now + ttl / 1000
        await self.call(lambda: self.redis.set(self.key("task", task_id), self.worker_id, px=ttl))

    def holds_task(self, task_id: str) -> bool:
        """Whether ``task_id`` is one of this worker's (answered here, without asking Redis)."""
        return task_id in self._tasks

    async def alive(self, worker_id: str, fresh: bool = False) -> bool:
        """Whether ``worker_id``'s heartbeat is there (a yes is remembered a second, unless
        ``fresh``)."""
        now = anyio.current_time()
        if not fresh and self._alive.get(worker_id, 0.0) > now:
            return True
        found = bool(await self.call(lambda: self.redis.exists(self.key("worker", worker_id))))
        if not found:
            self._alive.pop(worker_id, None)
        else:
            remember(self._alive, worker_id, now + _ALIVE_CACHE, _CACHED)
        return found

    # -- forwarding ---------------------------------------------------------------------

    async def route(
        self,
        server: StreamableHTTPServer,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
    ) -> bool:
        return await forward(self, server, scope, receive, send, headers)

    async def push(self, key: str, value: dict[str, Any], ttl: float = 60.0) -> None:
        data = orjson.dumps(value)

        async def op() -> Any:
            pipe = self.redis.pipeline(transaction=False)
            pipe.rpush(key, data)
            pipe.pexpire(key, int(ttl * 1000))
            return await pipe.execute()

        await self.call(op)

    async def pop(self, key: str, timeout: float) -> dict[str, Any] | None:
        """The next item of list ``key``, waiting up to ``timeout`` seconds (``None`` then)."""
        got = await self.call(lambda: self.redis.blpop([key], timeout=timeout), timeout + 3.0)
        if got is None:
            return None
        item: dict[str, Any] = orjson.loads(got[1])
        return item

    async def pop_now(self, key: str) -> dict[str, Any] | None:
        raw = await self.call(lambda: self.redis.lpop(key))
        if not isinstance(raw, (bytes, str)):
            return None
        item: dict[str, Any] = orjson.loads(raw)
        return item

    async def _consume_forwarded(self, server: StreamableHTTPServer) -> None:
        """Serve what other workers forward here, each in a task of its own."""
        inbox = self.key("fwd", self.worker_id)
        async with anyio.create_task_group() as tg:
            while True:
                try:
                    envelope = await self.pop(inbox, 1.0)
                except SharedStateUnavailable:
                    await anyio.sleep(0.5)
                    continue
                if envelope is not None:
                    tg.start_soon(serve_forwarded, self, server, envelope)

    # -- notification bus ---------------------------------------------------------------

    def _publish(self, message: bytes) -> Awaitable[int]:
        # redis-py leaves publish's **kwargs untyped.
        return self.redis.publish(self.channel, message)  # pyright: ignore[reportUnknownMemberType]

    async def publish(self, method: str, params: dict[str, Any] | None) -> None:
        message = orjson.dumps({"o": self.worker_id, "m": method, "p": params})
        try:
            await self.call(lambda: self._publish(message))
        except SharedStateUnavailable as exc:
            logger.warning("%s not relayed to the other workers: %s", method, exc)

    async def publish_stop(self, task_id: str) -> None:
        """Tell the worker running ``task_id`` that it was cancelled (best effort: that worker
        also learns it when its handler next changes the task's status)."""
        message = orjson.dumps({"o": self.worker_id, "stop": task_id})
        try:
            await self.call(lambda: self._publish(message))
        except SharedStateUnavailable as exc:
            logger.warning("the cancel of task %s not relayed: %s", task_id, exc)

    def _gone(self, worker_id: str) -> None:
        """A worker said goodbye: forget what was remembered of it, so its sessions are 404
        at once."""
        self._alive.pop(worker_id, None)
        for sid in [sid for sid, (owner, _) in self._owners.items() if owner == worker_id]:
            del self._owners[sid]

    async def _listen_bus(self, owner: Any) -> None:
        """Fan out, here, what the other workers publish (resubscribing after an outage), and
        hear of workers leaving."""
        while True:
            try:
                await self._subscribed(owner)
            except SharedStateUnavailable:
                await anyio.sleep(0.5)

    async def _subscribed(self, owner: Any) -> None:
        # redis-py leaves pubsub's **kwargs and get_message's answer untyped.
        pubsub = self.redis.pubsub()  # pyright: ignore[reportUnknownMemberType]

        async def next_message() -> dict[str, Any] | None:
            return cast(
                "dict[str, Any] | None",
                await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0),
            )

        try:
            await self.call(lambda: pubsub.subscribe(self.channel))
            while True:
                message = await self.call(next_message, self.op_timeout + 1.0)
                if message is None or message.get("type") != "message":
                    continue
                body = orjson.loads(message["data"])
                sender = body.get("o")
                if sender == self.worker_id:
                    continue
                if body.get("leave"):
                    self._gone(sender)
                elif "stop" in body:
                    if self.task_store is not None:
                        await self.task_store.stopped(body["stop"])
                elif owner is not None:
                    await owner.fan_out_local(body["m"], body.get("p"))
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(1.0), suppress(*FAILURES):
                await pubsub.aclose()  # type: ignore[no-untyped-call]


def _text(raw: Any) -> str | None:
    return raw.decode() if isinstance(raw, bytes) else raw
