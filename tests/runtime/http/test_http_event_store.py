"""The in-memory event store: resumption across real outages, bounded memory, any id answered.

Time is a fake clock the tests move, so "7 s" or "an hour" later costs nothing; over a real
server the store gets the same clock through ``event_store_factory``.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from httpkit import build_server, raw_initialize, session_headers
from hypothesis import given, settings, strategies as st
from mcpbind.runtime.http import InMemoryEventStore, StreamableHTTPServer, serving

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def notification(n: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": n}}


RESPONSE = {"jsonrpc": "2.0", "id": 7, "result": {"content": []}}


async def filled(store: InMemoryEventStore, stream: str = "s", count: int = 1000) -> list[str]:
    """A primed stream of ``count`` notifications and a response; the event ids in order."""
    ids = [await store.store_event(stream, None)]
    for n in range(1, count + 1):
        ids.append(await store.store_event(stream, notification(n)))
    ids.append(await store.store_event(stream, RESPONSE))
    return ids


def progress_of(events: list[tuple[str, Any]]) -> list[int]:
    return [m["params"]["progress"] for _, m in events if "method" in m]


@pytest.mark.parametrize("outage", [0.2, 7.0, 60.0, 299.0])
async def test_resumes_after_an_outage_with_nothing_lost(outage: float) -> None:
    clock = FakeClock()
    store = InMemoryEventStore(clock=clock)
    ids = await filled(store)
    clock.now += outage
    replayed = await store.replay_events_after(ids[300])
    assert replayed is not None
    stream, events = replayed
    assert stream == "s"
    assert progress_of(events) == list(range(301, 1001))
    assert events[-1] == (ids[-1], RESPONSE)


async def test_beyond_the_window_only_the_last_events_per_stream_are_kept() -> None:
    clock = FakeClock()
    store = InMemoryEventStore(max_events_per_stream=512, window=300.0, clock=clock)
    ids = await filled(store)
    clock.now += 301.0
    assert await store.replay_events_after(ids[300]) is None
    reason = store.unavailable_reason(ids[300])
    assert "no longer available" in reason and ids[300] in reason
    recent = await store.replay_events_after(ids[900])
    assert recent is not None
    assert progress_of(recent[1]) == list(range(901, 1001))
    assert recent[1][-1][1] == RESPONSE


async def test_a_response_is_not_dropped_for_age_or_count() -> None:
    clock = FakeClock()
    store = InMemoryEventStore(max_events_per_stream=10, window=1.0, clock=clock)
    ids = await filled(store, count=50)
    clock.now += 3600.0
    for n in range(100):
        await store.store_event("other", notification(n))
    replayed = await store.replay_events_after(ids[-2])
    assert replayed == ("s", [(ids[-1], RESPONSE)])


async def test_global_caps_bound_the_store_and_answer_expired_not_a_gap() -> None:
    clock = FakeClock()
    store = InMemoryEventStore(max_bytes=20_000, max_events=10_000, clock=clock)
    ids = await filled(store, count=2000)
    assert store.bytes <= 20_000
    assert len(store) < 2002
    assert await store.replay_events_after(ids[10]) is None
    assert "no longer available" in store.unavailable_reason(ids[10])
    counted = InMemoryEventStore(max_events=100, clock=clock)
    await filled(counted, count=500)
    assert len(counted) == 100


async def test_resuming_releases_what_the_client_has() -> None:
    store = InMemoryEventStore(clock=FakeClock())
    ids = await filled(store, count=100)
    first = await store.replay_events_after(ids[50])
    assert first is not None and progress_of(first[1]) == list(range(51, 101))
    assert len(store) == 51
    again = await store.replay_events_after(ids[50])  # the replay itself was lost: again
    assert again == first
    assert await store.replay_events_after(ids[10]) is None


async def test_a_priming_id_resumes_a_stream_with_only_its_events() -> None:
    store = InMemoryEventStore(clock=FakeClock())
    a = await filled(store, "a", count=3)
    await filled(store, "b", count=3)
    replayed = await store.replay_events_after(a[0])
    assert replayed is not None
    assert replayed[0] == "a"
    assert progress_of(replayed[1]) == [1, 2, 3]


MALFORMED = [
    "",
    "/",
    "s",
    "s/",
    "s/²",
    "s/" + "9" * 5000,
    "s/-1",
    "s/1e3",
    "s/ 1",
    "s/9999",
    "nope/1",
    "s/1/2",
    "\x00/\n",
]


@pytest.mark.parametrize("last_event_id", MALFORMED)
async def test_malformed_or_foreign_ids_are_unknown(last_event_id: str) -> None:
    store = InMemoryEventStore(clock=FakeClock())
    await filled(store, count=5)
    assert await store.replay_events_after(last_event_id) is None
    assert isinstance(store.unavailable_reason(last_event_id), str)


@settings(max_examples=300, deadline=None)
@given(st.text() | st.from_regex(r"s/[0-9\u00b2\u0660-\u0669]{0,30}", fullmatch=True))
def test_any_string_is_answered_never_raised(last_event_id: str) -> None:
    async def check() -> None:
        store = InMemoryEventStore(clock=FakeClock())
        await filled(store, count=5)
        replayed = await store.replay_events_after(last_event_id)
        assert replayed is None or replayed[0] == "s"
        store.unavailable_reason(last_event_id)

    anyio.run(check)


# -- over a real server ----------------------------------------------------------------------


async def read_events(response: httpx.Response, limit: int | None = None) -> list[tuple[str, Any]]:
    """(id, message) of the SSE events read, priming left out; stops after ``limit``."""
    out: list[tuple[str, Any]] = []
    event_id = ""
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("data: "):
            data.append(line[6:])
        elif line == "":
            if data and data[0].strip():
                out.append((event_id, json.loads("\n".join(data))))
                if limit is not None and len(out) >= limit:
                    break
            data = []
    return out


@pytest.mark.parametrize("outage", [7.0, 60.0])
async def test_a_cut_stream_resumes_over_http_exactly_once(outage: float) -> None:
    clock = FakeClock()
    app = StreamableHTTPServer(
        build_server().serve,
        event_store_factory=lambda: InMemoryEventStore(clock=clock),
    )
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "progress",
            "arguments": {"steps": 1000, "delay": 0},
            "_meta": {"progressToken": "p"},
        },
    }
    async with serving(app) as base, httpx.AsyncClient(timeout=30) as http:
        url = f"{base}/mcp"
        headers = session_headers(await raw_initialize(http, url))
        async with http.stream("POST", url, json=call, headers=headers) as response:
            assert response.status_code == 200
            first = await read_events(response, limit=300)
        clock.now += outage
        last_id = first[-1][0]
        resume = {**headers, "last-event-id": last_id}
        async with http.stream("GET", url, headers=resume) as response:
            assert response.status_code == 200
            rest = await read_events(response)
        progress = [m["params"]["progress"] for _, m in first + rest if "method" in m]
        assert progress == list(range(1, 1001))
        responses = [m for _, m in rest if "id" in m]
        assert [r["id"] for r in responses] == [7]
        assert responses[0]["result"]["content"][0]["text"] == "1000 steps"


async def test_a_stream_resumed_beyond_the_window_is_refused_over_http() -> None:
    clock = FakeClock()
    app = StreamableHTTPServer(
        build_server().serve,
        event_store_factory=lambda: stores[-1],
    )
    stores = [InMemoryEventStore(clock=clock, max_events_per_stream=100)]
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "progress",
            "arguments": {"steps": 300, "delay": 0},
            "_meta": {"progressToken": "p"},
        },
    }
    async with serving(app) as base, httpx.AsyncClient(timeout=30) as http:
        url = f"{base}/mcp"
        headers = session_headers(await raw_initialize(http, url))
        async with http.stream("POST", url, json=call, headers=headers) as response:
            first = await read_events(response, limit=10)
        # The handler goes on without the client; once its answer is stored, time passes.
        with anyio.fail_after(10):
            while not any(
                e.message.get("id") == 7 for e in stores[0]._events.values() if e.message
            ):
                await anyio.sleep(0.02)
        clock.now += 3600.0
        refused = await http.get(url, headers={**headers, "last-event-id": first[-1][0]})
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == -32000
        assert "no longer available" in refused.json()["error"]["message"]
