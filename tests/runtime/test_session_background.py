"""How a session runs and ends, on asyncio (no task group unless a background job needs one)
and on trio (a task group): ``close()``, background jobs' failures, shields and context."""

from __future__ import annotations

import asyncio
import contextvars

import anyio
import pytest
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, RequestContext, Server, memory_pair

pytestmark = pytest.mark.anyio

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def not_left_cancelled() -> None:
    """The task that ran the session carries no cancellation of the session's own (asyncio)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # not asyncio
        return
    assert task is not None
    assert task.cancelling() == 0


async def test_close_while_reading_ends_run_quietly() -> None:
    server = Server("bg")
    async with memory_pair() as (_near, far):
        session = server.new_session(far)
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.run)
                await session.wait_started()
                session.close("done here")
                await session.wait_closed()
        assert session.closed
        not_left_cancelled()
        await anyio.sleep(0)  # this task can still wait: nothing is left cancelled


async def test_close_returns_the_run_call_itself() -> None:
    server = Server("bg")
    async with memory_pair() as (_near, far):
        session = server.new_session(far)

        async def close_soon() -> None:
            await session.wait_started()
            session.close("done here")

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(close_soon)
                await session.run()  # returns, without raising a cancellation
        not_left_cancelled()


async def test_an_outer_cancellation_is_not_swallowed_by_close() -> None:
    server = Server("bg")
    async with memory_pair() as (_near, far):
        session = server.new_session(far)
        with anyio.CancelScope() as outer:

            async def cancel_both() -> None:
                await session.wait_started()
                outer.cancel()
                session.close("and closed")

            async with anyio.create_task_group() as tg:
                tg.start_soon(cancel_both)
                await session.run()
                pytest.fail("the outer cancellation was swallowed")
        assert outer.cancelled_caught


async def test_a_failing_background_job_ends_the_session_with_its_error() -> None:
    server = Server("bg")

    async def boom() -> None:
        await anyio.sleep(0)
        raise RuntimeError("job failed")

    async with memory_pair() as (_near, far):
        session = server.new_session(far)
        with anyio.fail_after(5), pytest.RaisesGroup(RuntimeError, flatten_subgroups=True):
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.run)
                await session.wait_started()
                session.start_soon(boom)
        assert session.closed


async def test_background_jobs_keep_their_context_and_their_shields() -> None:
    """Each job sees the context it was started in (two started at once, before any group
    is open); closing the session cancels them, but a shielded part still runs to its end
    before ``run()`` returns."""
    server = Server("bg")
    seen: list[str] = []
    finished = anyio.Event()

    async def job(shielded: bool) -> None:
        seen.append(WHO.get())
        if shielded:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.2)
                finished.set()
        await anyio.sleep(3600)

    async with memory_pair() as (_near, far):
        session = server.new_session(far)
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.run)
                await session.wait_started()
                WHO.set("first")
                session.start_soon(job, False)
                WHO.set("second")
                session.start_soon(job, True)
                await anyio.sleep(0.05)
                session.close("closing")
                await session.wait_closed()
                assert finished.is_set()
    assert sorted(seen) == ["first", "second"]


async def test_requests_and_notifications_through_a_client_then_close() -> None:
    """A whole session: a notification's handler (a background job) and requests, then the
    client closes and the server's session ends."""
    server = Server("bg")
    got = anyio.Event()

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, context: RequestContext
    ) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text=params.name)])

    @server.notification_handler(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED)
    async def roots_changed(params: object, context: object) -> None:
        got.set()

    with anyio.fail_after(10):
        async with Client(server.memory_transport()) as client:
            result = await client.stub.call_tool(types.CallToolRequestParams(name="hi"))
            assert result.content[0].text == "hi"  # type: ignore[union-attr]
            await client.session.send_notification(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED, None)
            await got.wait()
    not_left_cancelled()
