"""Many sessions at once, then none: served, reaped, and nothing left behind."""

from __future__ import annotations

import asyncio
import gc
import logging

import anyio
import httpx
import pytest
from httpkit import answers, build_server, raw_initialize, session_headers
from mcpbind.runtime import Session
from mcpbind.runtime.http import InMemoryEventStore, StreamableHTTPServer, serving

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SESSIONS = 200


def live_sessions() -> int:
    gc.collect()
    return sum(1 for obj in gc.get_objects() if isinstance(obj, Session))


async def all_sessions_freed() -> None:
    """Every runtime ``Session`` is garbage within a few seconds (closed connections are
    released by uvicorn a little after the client goes)."""
    with anyio.fail_after(10):
        while live_sessions():
            await anyio.sleep(0.1)


async def settled_object_count() -> int:
    """Live objects once closed connections have been released too."""
    await anyio.sleep(0.5)
    gc.collect()
    return len(gc.get_objects())


def session_tasks() -> int:
    return sum(1 for task in asyncio.all_tasks() if "_HttpSession" in task.get_coro().__qualname__)


async def one_session(http: httpx.AsyncClient, url: str, n: int, slots: anyio.Semaphore) -> None:
    async with slots:
        await use_session(http, url, n)


async def use_session(http: httpx.AsyncClient, url: str, n: int) -> None:
    session_id = await raw_initialize(http, url)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": str(n)}},
    }
    response = await http.post(url, json=call, headers=session_headers(session_id))
    assert answers(response)[-1]["result"]["content"][0]["text"] == str(n)


async def cycle(app: StreamableHTTPServer, url: str) -> None:
    """Open SESSIONS sessions, all alive at once, then wait for the reaper to end them all.

    32 requests in flight: httpx's pool slows down badly with hundreds queued.
    """
    limits = httpx.Limits(max_connections=32, max_keepalive_connections=32)
    slots = anyio.Semaphore(32)
    async with (
        httpx.AsyncClient(timeout=30, limits=limits) as http,
        anyio.create_task_group() as tg,
    ):
        for n in range(SESSIONS):
            tg.start_soon(one_session, http, url, n, slots)
    assert len(app.sessions) == SESSIONS
    app.session_idle_timeout = 0.2
    with anyio.fail_after(20):
        while app.sessions or session_tasks():
            await anyio.sleep(0.05)


async def test_200_sessions_served_then_reaped_with_bounded_memory() -> None:
    app = StreamableHTTPServer(build_server().serve, session_idle_timeout=60)
    async with serving(app, limit_concurrency=1000) as base:
        url = f"{base}/mcp"
        await cycle(app, url)
        await all_sessions_freed()
        before = await settled_object_count()
        app.session_idle_timeout = 60
        await cycle(app, url)
        await all_sessions_freed()
        grown = await settled_object_count() - before
        # One leaked session alone would leave hundreds of objects; 200 would leave 100 000+.
        assert grown < 3000, f"{grown} more live objects after another {SESSIONS} sessions"


async def test_client_disconnect_does_not_crash_or_leak(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR)
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base:
        url = f"{base}/mcp"
        async with httpx.AsyncClient(timeout=10) as http:
            session_id = await raw_initialize(http, url)
            call = {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "sleep", "arguments": {"seconds": 0.5}},
            }
            for _ in range(3):
                async with http.stream(
                    "POST", url, json=call, headers=session_headers(session_id)
                ) as stream:
                    async for _line in stream.aiter_lines():
                        break
                call["id"] = int(str(call["id"])) + 1
            get_headers = {**session_headers(session_id), "accept": "text/event-stream"}
            async with http.stream("GET", url, headers=get_headers) as stream:
                assert stream.status_code == 200
            ping = {"jsonrpc": "2.0", "id": 99, "method": "ping"}
            alive = await http.post(
                url,
                json=ping,
                headers={**session_headers(session_id), "accept": "application/json"},
            )
            assert alive.json()["result"] == {}
            assert (await http.delete(url, headers=session_headers(session_id))).status_code == 200
        with anyio.fail_after(5):
            while app.sessions or session_tasks():
                await anyio.sleep(0.02)
        await all_sessions_freed()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def live_stores() -> list[InMemoryEventStore]:
    gc.collect()
    return [obj for obj in gc.get_objects() if isinstance(obj, InMemoryEventStore)]


async def cut_and_resume(http: httpx.AsyncClient, url: str, slots: anyio.Semaphore) -> None:
    """A session whose progress streams are cut and resumed, then ended with DELETE."""
    async with slots:
        session_id = await raw_initialize(http, url)
        headers = session_headers(session_id)
        for request_id in range(1, 4):
            call = {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {
                    "name": "progress",
                    "arguments": {"steps": 50, "delay": 0},
                    "_meta": {"progressToken": request_id},
                },
            }
            last_id = ""
            async with http.stream("POST", url, json=call, headers=headers) as response:
                async for line in response.aiter_lines():
                    if line.startswith("id: "):
                        last_id = line[4:]
                    if line.startswith("data: {") and '"progress":10,' in line:
                        break
            resume = {**headers, "accept": "text/event-stream", "last-event-id": last_id}
            async with http.stream("GET", url, headers=resume) as response:
                assert response.status_code == 200
                body = (await response.aread()).decode()
            assert f'"id":{request_id},"result"' in body and '"progress":50,' in body
        assert (await http.delete(url, headers=headers)).status_code == 200


async def test_resumed_sessions_leave_no_event_store_behind() -> None:
    """Event stores live and die with their sessions; while alive each stays under its caps."""
    stores: list[InMemoryEventStore] = []

    def factory() -> InMemoryEventStore:
        stores.append(InMemoryEventStore(max_bytes=64 * 1024))
        return stores[-1]

    app = StreamableHTTPServer(build_server().serve, event_store_factory=factory)
    async with serving(app) as base, httpx.AsyncClient(timeout=30) as http:
        slots = anyio.Semaphore(16)
        async with anyio.create_task_group() as tg:
            for _ in range(60):
                tg.start_soon(cut_and_resume, http, f"{base}/mcp", slots)
        assert len(stores) == 60
        assert all(store.bytes <= store.max_bytes for store in stores)
        with anyio.fail_after(10):
            while app.sessions or session_tasks():
                await anyio.sleep(0.05)
    stores.clear()
    await all_sessions_freed()
    assert live_stores() == []
