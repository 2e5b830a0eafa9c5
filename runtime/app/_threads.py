"""Running a sync function in a worker thread without blocking the event loop.

On asyncio the thread comes from a pool of the loop's own (at most ``MAX_THREADS``, anyio's
default limit too): ``anyio.to_thread.run_sync`` measured about 44 us per call here against
27 us for an executor, most of a ``def`` tool's call. What anyio guarantees is kept: the
function runs in a copy of the caller's context; a call waiting for a free thread can be
cancelled, one already running cannot be abandoned (a cancelled caller waits for the thread to
finish, then is cancelled), and the thread is one of anyio's as far as the function can tell:
``anyio.from_thread.run`` reaches the loop from it, and ``anyio.from_thread.check_cancelled``
raises once its caller was cancelled (anyio's thread-locals are set for that; without them,
on another anyio, every call goes to anyio). Elsewhere (trio) anyio runs it.

Inside ``abandoning()`` (a tool's timeout) a cancelled call does not wait: a thread cannot be
killed, so the caller goes on at once, the thread runs to its end (``check_cancelled`` raises
in it meanwhile) and what it returns is dropped.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import threading
import weakref
from collections.abc import Callable, Generator
from typing import Any, Final, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread
from mcpbind.runtime.core.loop_path import AsyncioPath, loop_path

_anyio_threads: threading.local | None
try:  # anyio's marks of its worker threads (not public: checked at import, used if present)
    from anyio._core._eventloop import threadlocals as _anyio_threads
except ImportError:  # pragma: no cover - another anyio
    _anyio_threads = None

__all__ = ["MAX_THREADS", "abandoning", "run_sync"]

T = TypeVar("T")

#: Threads per event loop for sync functions (anyio's default capacity limiter has 40).
MAX_THREADS: Final = 40

#: Set by ``abandoning()``: a cancelled caller leaves its running thread behind.
_abandon: contextvars.ContextVar[bool] = contextvars.ContextVar("mcpbind_abandon", default=False)


@contextlib.contextmanager
def abandoning() -> Generator[None, None, None]:
    """Within it, a cancelled ``run_sync`` returns at once, its thread's late result dropped."""
    token = _abandon.set(True)
    try:
        yield
    finally:
        _abandon.reset(token)


_pools: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, tuple[concurrent.futures.Executor, object, type[anyio.CancelScope]]
] = weakref.WeakKeyDictionary()


def _pool(
    loop: asyncio.AbstractEventLoop,
) -> tuple[concurrent.futures.Executor, object, type[anyio.CancelScope]]:
    """The loop's thread pool, anyio's token for the loop and its class of cancel scopes
    (which, unlike ``anyio.CancelScope()``, makes one without looking the backend up)."""
    found = _pools.get(loop)
    if found is None:
        pool = concurrent.futures.ThreadPoolExecutor(MAX_THREADS, "mcpbind-worker")
        found = (pool, anyio.lowlevel.current_token(), type(anyio.CancelScope()))
        _pools[loop] = found
        weakref.finalize(loop, pool.shutdown, wait=False)
    return found


def _in_worker(
    token: object,
    scope: anyio.CancelScope,
    context: contextvars.Context,
    fn: Callable[..., T],
    *args: Any,
) -> T:
    threads = _anyio_threads
    assert threads is not None
    threads.current_token = token
    threads.current_cancel_scope = scope
    try:
        return context.run(fn, *args)
    finally:
        del threads.current_token
        del threads.current_cancel_scope


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
    path = loop_path()  # no session at hand here: the seam's choice, per call
    abandon = _abandon.get()
    if _anyio_threads is None or not isinstance(path, AsyncioPath):
        return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=abandon)
    loop = path.loop
    pool, token, scopes = _pool(loop)
    # What the thread's ``check_cancelled`` and ``from_thread.run`` see, as in anyio's threads:
    # cancelled once the caller is.
    scope = scopes()
    future: concurrent.futures.Future[T] = pool.submit(
        _in_worker, token, scope, contextvars.copy_context(), fn, *args
    )
    try:
        await _when_done(loop, future)
    except asyncio.CancelledError:
        if future.cancel():  # still waiting for a thread: it never runs
            raise
        scope.cancel()
        if abandon:
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
