"""Sync functions of an app run in worker threads (``runtime/app/_threads.py``): in the
caller's context, never abandoned once running, cancellable while waiting for a thread; on
asyncio through the loop's own pool, on trio through anyio."""

from __future__ import annotations

import contextvars
import threading
import time

import anyio
import pytest
from mcpbind.runtime.app._threads import MAX_THREADS, run_sync

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
