"""``HandlerTasks``: both kinds of task (plain asyncio, anyio task group) behave alike."""

from __future__ import annotations

import importlib.util
import logging

import anyio
import pytest
from mcpbind.runtime.core.handler_tasks import HandlerTasks
from mcpbind.runtime.core.loop_path import ANYIO, LoopPath, loop_path

pytestmark = pytest.mark.anyio


@pytest.fixture(params=[True, False], ids=["asyncio-tasks", "task-group"])
def native(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def path_of(native: bool) -> LoopPath:
    """The running loop's own path, or anyio's (which runs on any loop)."""
    return loop_path() if native else ANYIO


async def test_tasks_run_and_report_their_end(native: bool) -> None:
    ended: list[object] = []
    ran: list[str] = []

    async def job(name: str) -> None:
        await anyio.sleep(0.01)
        ran.append(name)

    async with anyio.create_task_group() as tg:
        tasks = HandlerTasks(tg, ended.append, path_of(native))
        tasks.start(1, job, "one")
        tasks.start("two", job, "two")
        assert 1 in tasks and "two" in tasks and len(tasks) == 2
        while tasks:
            await anyio.sleep(0.01)
        await tasks.wait_all()
    assert sorted(ran) == ["one", "two"] and sorted(map(str, ended)) == ["1", "two"]


async def test_cancel_stops_one_task_quietly(native: bool) -> None:
    finished: list[str] = []
    release = anyio.Event()

    async def job(name: str) -> None:
        await release.wait()
        finished.append(name)

    async with anyio.create_task_group() as tg:
        tasks = HandlerTasks(tg, lambda key: None, path_of(native))
        tasks.start(1, job, "cancelled")
        tasks.start(2, job, "kept")
        await anyio.sleep(0.01)
        assert tasks.cancel(1)
        assert not tasks.cancel(3)
        release.set()
        while tasks:
            await anyio.sleep(0.01)
    assert finished == ["kept"]


async def test_a_task_cancelled_before_it_starts_still_ends(native: bool) -> None:
    ended: list[int] = []
    ran: list[bool] = []

    async def job() -> None:
        await anyio.lowlevel.checkpoint()
        ran.append(True)

    async with anyio.create_task_group() as tg:
        tasks = HandlerTasks(tg, lambda key: ended.append(1), path_of(native))
        tasks.start(1, job)
        tasks.cancel_all()
        with anyio.fail_after(1):
            while tasks:
                await anyio.sleep(0)
            await tasks.wait_all()
    assert ended == [1] and not ran


async def test_wait_all_waits_for_cancelled_tasks_to_clean_up() -> None:
    cleaned: list[bool] = []

    async def job() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.05)
            cleaned.append(True)

    async with anyio.create_task_group() as tg:
        tasks = HandlerTasks(tg, lambda key: None, loop_path())
        tasks.start(1, job)
        await anyio.sleep(0.01)
        tasks.cancel_all()
        await tasks.wait_all()
        assert cleaned == [True]


async def test_an_escaping_exception_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def job() -> None:
        raise RuntimeError("boom")

    with caplog.at_level(logging.ERROR, logger="mcpbind.runtime"):
        async with anyio.create_task_group() as tg:
            tasks = HandlerTasks(tg, lambda key: None, loop_path())
            tasks.start(7, job)
            while tasks:
                await anyio.sleep(0.01)
    assert "handler task of request 7 failed" in caplog.text
    assert "boom" in caplog.text


def test_run_uses_uvloop_when_installed() -> None:
    import asyncio

    from mcpbind.runtime import run

    async def loop_module() -> str:
        return type(asyncio.get_running_loop()).__module__

    expected = "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"
    assert run(loop_module).startswith(expected)
