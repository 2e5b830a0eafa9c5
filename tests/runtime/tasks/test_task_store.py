"""``InMemoryTaskStore``: ids, ttl, the spec's status paths, terminal states final, pages, bound."""

from __future__ import annotations

import time

import pytest
from mcpbind.generated.v2025_11_25 import types
from mcpbind.runtime import McpError
from mcpbind.runtime.tasks import InMemoryTaskStore, TaskLimitError, TaskStatus

OWNER = ("session", 1)


def test_ids_are_unique_and_unguessable() -> None:
    store = InMemoryTaskStore()
    ids = {store.create(OWNER, None).task_id for _ in range(500)}
    assert len(ids) == 500
    assert all(len(task_id) >= 32 for task_id in ids)


def test_task_json_is_the_schema_task() -> None:
    store = InMemoryTaskStore(poll_interval=250)
    record = store.create(OWNER, 60_000)
    task = types.Task.model_validate(record.to_json())
    assert (task.status, task.ttl, task.pollInterval) == ("working", 60_000, 250)
    assert task.createdAt.endswith("Z") and task.createdAt == task.lastUpdatedAt


def test_ttl_is_capped_and_defaulted() -> None:
    store = InMemoryTaskStore(default_ttl=1000, max_ttl=5000)
    assert store.create(OWNER, None).ttl == 1000
    assert store.create(OWNER, 99_999).ttl == 5000
    assert store.create(OWNER, 10).ttl == 10


def test_expired_tasks_are_gone() -> None:
    store = InMemoryTaskStore()
    record = store.create(OWNER, 1)
    time.sleep(0.01)
    assert store.get(OWNER, record.task_id) is None
    assert store.list(OWNER, None, 10) == ([], None)


def test_status_paths_are_the_specs() -> None:
    store = InMemoryTaskStore()
    record = store.create(OWNER, None)
    assert store.update(record, "input_required")
    assert store.update(record, "working")
    assert store.finish(record, "completed", {"content": []}, None)
    assert record.done.is_set()
    statuses: tuple[TaskStatus, ...] = ("working", "input_required", "failed", "cancelled")
    for status in (*statuses, "completed"):
        assert not store.update(record, status)
        assert not store.finish(record, status, None, None)
    assert record.status == "completed" and record.result == {"content": []}


def test_finish_needs_a_terminal_status() -> None:
    store = InMemoryTaskStore()
    record = store.create(OWNER, None)
    assert not store.finish(record, "working", None, None)
    assert not record.done.is_set()


def test_owners_see_only_their_tasks() -> None:
    store = InMemoryTaskStore()
    mine = store.create(OWNER, None)
    theirs = store.create(("session", 2), None)
    assert store.get(OWNER, theirs.task_id) is None
    assert store.get(OWNER, mine.task_id) is mine
    assert [r.task_id for r in store.list(OWNER, None, 10)[0]] == [mine.task_id]


def test_pages_follow_the_cursor_to_the_end() -> None:
    store = InMemoryTaskStore()
    made = [store.create(OWNER, None).task_id for _ in range(7)]
    store.create(("session", 2), None)
    seen: list[str] = []
    cursor = None
    while True:
        page, cursor = store.list(OWNER, cursor, 3)
        seen.extend(r.task_id for r in page)
        if cursor is None:
            break
    assert seen == made
    with pytest.raises(McpError) as caught:
        store.list(OWNER, "no-such-cursor", 3)
    assert caught.value.code == -32602


def test_the_store_is_bounded() -> None:
    store = InMemoryTaskStore(max_tasks=3)
    for _ in range(3):
        store.create(OWNER, None)
    with pytest.raises(TaskLimitError) as caught:
        store.create(OWNER, None)
    assert caught.value.code == -32603 and "at most 3" in caught.value.message
    expiring = InMemoryTaskStore(max_tasks=1)
    expiring.create(OWNER, 1)
    time.sleep(0.01)
    assert expiring.create(OWNER, None).status == "working"  # the expired one made room
