"""Running a sync function in a worker thread without blocking the event loop.

On asyncio the thread comes from a pool of the loop's own (at most ``MAX_THREADS``, anyio's
default limit too): ``anyio.to_thread.run_sync`` measured about 44 us per call here against
27 us for an executor, most of a ``def`` tool's call. What anyio guarantees is kept: the
function runs in a copy of the caller's context; a call waiting for a free thread can be
cancelled, one already running cannot be abandoned (a cancelled caller waits for the thread to
finish, then is cancelled). Elsewhere (trio) anyio runs it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import weakref
from collections.abc import Callable
from typing import Any, Final, TypeVar

import anyio
import anyio.to_thread

from .._run import on_asyncio

__all__ = ["MAX_THREADS", "run_sync"]

T = TypeVar("T")

#: Threads per event loop for sync functions (anyio's default capacity limiter has 40).
MAX_THREADS: Final = 40

_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, concurrent.futures.Executor] = (
    weakref.WeakKeyDictionary()
)


def _pool(loop: asyncio.AbstractEventLoop) -> concurrent.futures.Executor:
    pool = _pools.get(loop)
    if pool is None:
        pool = concurrent.futures.ThreadPoolExecutor(MAX_THREADS, "mcpbind-worker")
        _pools[loop] = pool
        weakref.finalize(loop, pool.shutdown, wait=False)
    return pool


def _settle(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _when_done(
    loop: asyncio.AbstractEventLoop, future: concurrent.futures.Future[Any]
) -> asyncio.Future[None]:
    """A loop future resolved once ``future`` (a thread's) is done, however it ends."""
    waiter = loop.create_future()
    future.add_done_callback(lambda _: loop.call_soon_threadsafe(_settle, waiter))
    return waiter


async def run_sync(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker thread, in a copy of the current context."""
    if not on_asyncio():
        return await anyio.to_thread.run_sync(fn, *args)
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    future: concurrent.futures.Future[T] = _pool(loop).submit(context.run, fn, *args)
    try:
        await _when_done(loop, future)
    except asyncio.CancelledError:
        if future.cancel():  # still waiting for a thread: it never runs
            raise
        # Running: wait for it to end, shielded from anyio's scopes, and through any further
        # direct cancellation; then the caller is cancelled all the same.
        with anyio.CancelScope(shield=True):
            while not future.done():
                try:
                    await _when_done(loop, future)
                except asyncio.CancelledError:
                    continue
        raise
    return future.result()
