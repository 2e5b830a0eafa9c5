"""``InMemoryTaskStore``: ids, ttl, the spec's status paths, terminal states final, pages, bound."""

from __future__ import annotations

import time

import pytest
from mcpbind.generated.v2025_11_25 import types
from mcpbind.runtime import McpError
from mcpbind.runtime.tasks import InMemoryTaskStore, TaskLimitError, TaskStatus

pytestmark = pytest.mark.anyio

OWNER = ("session", 1)


async def test_ids_are_unique_and_unguessable() -> None:
    store = InMemoryTaskStore()
    ids = {(await store.create(OWNER, None)).task_id for _ in range(500)}
    assert len(ids) == 500
    assert all(len(task_id) >= 32 for task_id in ids)


async def test_task_json_is_the_schema_task() -> None:
    store = InMemoryTaskStore(poll_interval=250)
    record = await store.create(OWNER, 60_000)
    task = types.Task.model_validate(record.to_json())
    assert (task.status, task.ttl, task.pollInterval) == ("working", 60_000, 250)
    assert task.createdAt.endswith("Z") and task.createdAt == task.lastUpdatedAt


async def test_ttl_is_capped_and_defaulted() -> None:
    store = InMemoryTaskStore(default_ttl=1000, max_ttl=5000)
    assert (await store.create(OWNER, None)).ttl == 1000
    assert (await store.create(OWNER, 99_999)).ttl == 5000
    assert (await store.create(OWNER, 10)).ttl == 10


async def test_expired_tasks_are_gone() -> None:
    store = InMemoryTaskStore()
    record = await store.create(OWNER, 1)
    time.sleep(0.01)
    assert await store.get(OWNER, record.task_id) is None
    assert await store.list(OWNER, None, 10) == ([], None)


async def test_status_paths_are_the_specs() -> None:
    store = InMemoryTaskStore()
    record = await store.create(OWNER, None)
    assert await store.update(record, "input_required")
    assert await store.update(record, "working")
    assert await store.finish(record, "completed", {"content": []}, None)
    assert record.done.is_set()
    statuses: tuple[TaskStatus, ...] = ("working", "input_required", "failed", "cancelled")
    for status in (*statuses, "completed"):
        assert not await store.update(record, status)
        assert not await store.finish(record, status, None, None)
    assert record.status == "completed" and record.result == {"content": []}


async def test_finish_needs_a_terminal_status() -> None:
    store = InMemoryTaskStore()
    record = await store.create(OWNER, None)
    assert not await store.finish(record, "working", None, None)
    assert not record.done.is_set()


async def test_owners_see_only_their_tasks() -> None:
    store = InMemoryTaskStore()
    mine = await store.create(OWNER, None)
    theirs = await store.create(("session", 2), None)
    assert await store.get(OWNER, theirs.task_id) is None
    assert await store.get(OWNER, mine.task_id) is mine
    assert [r.task_id for r in (await store.list(OWNER, None, 10))[0]] == [mine.task_id]


async def test_pages_follow_the_cursor_to_the_end() -> None:
    store = InMemoryTaskStore()
    made = [(await store.create(OWNER, None)).task_id for _ in range(7)]
    await store.create(("session", 2), None)
    seen: list[str] = []
    cursor = None
    while True:
        page, cursor = await store.list(OWNER, cursor, 3)
        seen.extend(r.task_id for r in page)
        if cursor is None:
            break
    assert seen == made
    with pytest.raises(McpError) as caught:
        await store.list(OWNER, "no-such-cursor", 3)
    assert caught.value.code == -32602


async def test_the_store_is_bounded() -> None:
    store = InMemoryTaskStore(max_tasks=3)
    for _ in range(3):
        await store.create(OWNER, None)
    with pytest.raises(TaskLimitError) as caught:
        await store.create(OWNER, None)
    assert caught.value.code == -32603 and "at most 3" in caught.value.message
    expiring = InMemoryTaskStore(max_tasks=1)
    await expiring.create(OWNER, 1)
    time.sleep(0.01)
    assert (await expiring.create(OWNER, None)).status == "working"  # the expired one made room
