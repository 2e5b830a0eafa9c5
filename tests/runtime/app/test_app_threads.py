"""Sync functions of an app run in worker threads (``runtime/app/_threads.py``): in the
caller's context, never abandoned once running (unless the caller asks, for a tool's time
limit), cancellable while waiting for a thread; on asyncio through the loop's own pool, on trio
through anyio."""

from __future__ import annotations

import contextvars
import threading
import time

import anyio
import anyio.from_thread
import pytest
from mcpbind.runtime.app._threads import MAX_THREADS, abandoning, run_sync

pytestmark = pytest.mark.anyio

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_the_function_runs_in_another_thread_with_the_callers_context() -> None:
    WHO.set("caller")

    def probe(suffix: str) -> tuple[str, int]:
        return WHO.get() + suffix, threading.get_ident()

    who, ident = await run_sync(probe, "!")
    assert who == "caller!"
    assert ident != threading.get_ident()


async def test_a_running_call_is_not_abandoned_when_its_caller_is_cancelled() -> None:
    """The caller is cancelled, but only once the thread has finished its work."""
    finished = threading.Event()
    started = threading.Event()
    ended_after_thread: list[bool] = []

    def slow() -> None:
        started.set()
        time.sleep(0.3)
        finished.set()

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:

            async def cancel_when_started() -> None:
                while not started.is_set():
                    await anyio.sleep(0.01)
                scope.cancel()

            tg.start_soon(cancel_when_started)
            try:
                await run_sync(slow)
            finally:
                ended_after_thread.append(finished.is_set())
            await anyio.sleep(3600)  # trio's anyio delivers the cancellation here
            pytest.fail("the cancellation was lost")
    assert scope.cancelled_caught
    assert ended_after_thread == [True]


async def test_a_call_waiting_for_a_thread_can_be_cancelled_and_never_runs() -> None:
    release = threading.Event()
    ran: list[int] = []

    def hold() -> None:
        release.wait(10)

    async with anyio.create_task_group() as tg:
        for _ in range(MAX_THREADS):
            tg.start_soon(run_sync, hold)
        await anyio.sleep(0.2)  # every thread is taken
        with anyio.move_on_after(0.2) as waited:
            await run_sync(ran.append, 1)
        release.set()
    assert waited.cancelled_caught
    await anyio.sleep(0.1)
    assert ran == []


async def test_an_error_in_the_function_reaches_the_caller() -> None:
    def fail() -> None:
        raise ValueError("from the thread")

    with pytest.raises(ValueError, match="from the thread"):
        await run_sync(fail)


async def test_the_thread_reaches_the_loop_through_anyio_from_thread() -> None:
    """A sync tool may call back into the loop (the app does, to announce list changes)."""

    async def on_loop(value: int) -> int:
        await anyio.sleep(0)
        return value * 2

    def calls_back() -> int:
        return anyio.from_thread.run(on_loop, 21)

    assert await run_sync(calls_back) == 42


async def test_a_running_thread_sees_its_caller_cancelled() -> None:
    """``anyio.from_thread.check_cancelled`` raises in the thread once the caller was cancelled."""
    started = threading.Event()
    saw: list[str] = []
    cancelled = anyio.get_cancelled_exc_class()

    def poll() -> None:
        started.set()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                anyio.from_thread.check_cancelled()
            except cancelled:
                saw.append("cancelled")
                return
            time.sleep(0.01)
        saw.append("never told")

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:

            async def cancel_when_started() -> None:
                while not started.is_set():
                    await anyio.sleep(0.01)
                scope.cancel()

            tg.start_soon(cancel_when_started)
            await run_sync(poll)
            await anyio.sleep(3600)
    assert saw == ["cancelled"]


async def test_within_abandoning_a_cancelled_caller_leaves_at_once() -> None:
    """A time limit's case: the caller goes on while the thread runs to its end, told of the
    cancellation by ``check_cancelled``; its late result goes nowhere."""
    cancelled = anyio.get_cancelled_exc_class()
    saw: list[str] = []
    done = threading.Event()

    def slow() -> str:
        time.sleep(0.5)
        try:
            anyio.from_thread.check_cancelled()
            saw.append("not told")
        except cancelled:
            saw.append("cancelled")
        done.set()
        return "late"

    started = time.monotonic()
    with anyio.move_on_after(0.1) as scope, abandoning():
        await run_sync(slow)
    took = time.monotonic() - started
    assert scope.cancelled_caught and took < 0.4 and not done.is_set()
    with anyio.fail_after(5):
        while not done.is_set():
            await anyio.sleep(0.02)
    assert saw == ["cancelled"]
    # Outside the block, the default is back: a cancelled caller waits for its thread.
    started = time.monotonic()
    with anyio.move_on_after(0.1):
        await run_sync(time.sleep, 0.3)
    assert time.monotonic() - started >= 0.29
