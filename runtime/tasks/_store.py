"""Where tasks live: the ``TaskStore`` protocol and its in-memory default.

A store keeps each task's state, owner and outcome; the manager (``_manager.py``) decides when
to move them. Status moves only along the spec's paths (``working`` <-> ``input_required`` ->
``completed`` | ``failed`` | ``cancelled``) and a terminal status is final, so a handler that
finishes after its task was cancelled cannot revive it.

The protocol is asynchronous so that a store may live elsewhere: ``cluster.RedisTaskStore``
shares the tasks of many workers, and tells the worker running a task (through the ``stop``
given to ``bind``) when another worker cancelled it.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, Literal, Protocol

import anyio
from mcpbind.runtime.core.errors import INVALID_PARAMS, McpError

__all__ = [
    "TERMINAL",
    "InMemoryTaskStore",
    "TaskLimitError",
    "TaskRecord",
    "TaskStatus",
    "TaskStore",
    "finally_finish",
    "iso_time",
    "moves_to",
    "task_not_found",
]

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
_NEXT: Final[dict[str, frozenset[str]]] = {
    "working": frozenset({"input_required", *TERMINAL}),
    "input_required": frozenset({"working", *TERMINAL}),
}


def moves_to(status: str) -> frozenset[str]:
    """The statuses a task may move to ``status`` from (none for ``working``)."""
    return frozenset(source for source, targets in _NEXT.items() if status in targets)


class TaskLimitError(McpError):
    """The store holds as many live tasks as it may (``max_tasks``)."""


def task_not_found(task_id: str) -> McpError:
    """The spec's answer for an unknown, expired or foreign task id (-32602, nothing more)."""
    return McpError(INVALID_PARAMS, "Failed to retrieve task: Task not found", {"taskId": task_id})


def iso_time(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(eq=False)
class TaskRecord:
    """One task: its public state, its owner, and once terminal its outcome (a JSON result,
    or the JSON-RPC error the underlying request would have answered)."""

    task_id: str
    owner: Hashable
    ttl: int | None
    poll_interval: int | None
    created_at: float = field(default_factory=time.time)
    last_updated_at: float = 0.0
    status: TaskStatus = "working"
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: McpError | None = None
    #: The 2026 extension's outstanding ``inputRequests`` as of the last status change.
    input_requests: dict[str, Any] | None = None
    done: anyio.Event = field(default_factory=anyio.Event)

    def __post_init__(self) -> None:
        self.last_updated_at = self.created_at

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expired(self, now: float) -> bool:
        return self.ttl is not None and now >= self.created_at + self.ttl / 1000

    def to_json(self) -> dict[str, Any]:
        """The ``Task`` object of the schema (``ttl`` null when unlimited)."""
        data: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": iso_time(self.created_at),
            "lastUpdatedAt": iso_time(self.last_updated_at),
            "ttl": self.ttl,
        }
        if self.poll_interval is not None:
            data["pollInterval"] = self.poll_interval
        if self.status_message is not None:
            data["statusMessage"] = self.status_message
        return data


class TaskStore(Protocol):
    """What the task manager needs of a store; ``get``/``list`` see only ``owner``'s live tasks."""

    async def create(self, owner: Hashable, ttl: int | None) -> TaskRecord: ...

    async def get(self, owner: Hashable, task_id: str) -> TaskRecord | None: ...

    async def update(
        self, record: TaskRecord, status: TaskStatus, message: str | None = None
    ) -> bool:
        """Move ``record`` to ``status``; False (and no change) if the spec forbids the move."""
        ...

    async def finish(
        self,
        record: TaskRecord,
        status: TaskStatus,
        result: dict[str, Any] | None,
        error: McpError | None,
        message: str | None = None,
    ) -> bool:
        """Make ``record`` terminal with its outcome; False if it already was."""
        ...

    async def wait(self, record: TaskRecord) -> TaskRecord:
        """``record`` once terminal (as the store then has it)."""
        ...

    async def list(
        self, owner: Hashable, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]: ...

    async def delete(self, task_id: str) -> None: ...

    def bind(self, stop: Callable[[str], None]) -> None:
        """``stop(task_id)`` stops the handler of a task this process runs; a store shared by
        many processes calls it when another one cancelled that task."""
        ...


class InMemoryTaskStore:
    """Tasks in a dict, in creation order: ids from ``secrets.token_urlsafe`` (unguessable),
    ``ttl`` capped at ``max_ttl`` ms (``default_ttl`` when the requestor names none), expired
    tasks purged as they are met, at most ``max_tasks`` live at once (beyond: -32603
    ``TaskLimitError``). Cursors are task ids, opaque to the requestor."""

    def __init__(
        self,
        *,
        max_tasks: int = 10_000,
        default_ttl: int | None = 3_600_000,
        max_ttl: int | None = 86_400_000,
        poll_interval: int | None = 500,
    ) -> None:
        self.max_tasks = max_tasks
        self.default_ttl = default_ttl
        self.max_ttl = max_ttl
        self.poll_interval = poll_interval
        self._tasks: dict[str, TaskRecord] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    def _purge(self) -> None:
        now = time.time()
        for task_id in [t for t, r in self._tasks.items() if r.expired(now)]:
            del self._tasks[task_id]

    async def create(self, owner: Hashable, ttl: int | None) -> TaskRecord:
        if len(self._tasks) >= self.max_tasks:
            self._purge()
            if len(self._tasks) >= self.max_tasks:
                raise TaskLimitError(
                    -32603, f"too many live tasks (at most {self.max_tasks}); try again later"
                )
        wanted = self.default_ttl if ttl is None else ttl
        if self.max_ttl is not None and (wanted is None or wanted > self.max_ttl):
            wanted = self.max_ttl
        record = TaskRecord(secrets.token_urlsafe(24), owner, wanted, self.poll_interval)
        self._tasks[record.task_id] = record
        return record

    async def get(self, owner: Hashable, task_id: str) -> TaskRecord | None:
        record = self._tasks.get(task_id)
        if record is None or record.owner != owner:
            return None
        if record.expired(time.time()):
            del self._tasks[task_id]
            return None
        return record

    async def update(
        self, record: TaskRecord, status: TaskStatus, message: str | None = None
    ) -> bool:
        return self.move(record, status, message)

    @staticmethod
    def move(record: TaskRecord, status: TaskStatus, message: str | None = None) -> bool:
        """The spec's move of ``record`` to ``status``, in memory (False: forbidden)."""
        if status not in _NEXT.get(record.status, ()):
            return False
        record.status = status
        record.status_message = message
        record.last_updated_at = time.time()
        return True

    async def finish(
        self,
        record: TaskRecord,
        status: TaskStatus,
        result: dict[str, Any] | None,
        error: McpError | None,
        message: str | None = None,
    ) -> bool:
        if status not in TERMINAL or not self.move(record, status, message):
            return False
        record.result, record.error = result, error
        record.done.set()
        return True

    async def list(
        self, owner: Hashable, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        self._purge()
        ids = list(self._tasks)
        start = 0
        if cursor is not None:
            if cursor not in self._tasks or self._tasks[cursor].owner != owner:
                raise McpError(INVALID_PARAMS, "Invalid cursor", {"cursor": cursor})
            start = ids.index(cursor) + 1
        page: list[TaskRecord] = []
        for task_id in ids[start:]:
            record = self._tasks[task_id]
            if record.owner != owner:
                continue
            if len(page) == limit:
                return page, page[-1].task_id
            page.append(record)
        return page, None

    async def delete(self, task_id: str) -> None:
        self._tasks.pop(task_id, None)

    async def wait(self, record: TaskRecord) -> TaskRecord:
        await record.done.wait()
        return record

    def bind(self, stop: Callable[[str], None]) -> None:
        pass  # one process: its manager stops what it cancels itself


#: How long a task's last word may take when its handler is being cancelled (seconds).
FINAL_WRITE = 5.0


async def finally_finish(store: TaskStore, record: TaskRecord, error: McpError) -> None:
    """Fail ``record`` from a ``finally`` whose scope may be cancelled: shielded, bounded, and
    never raising (a store that cannot be reached then leaves the record as it was)."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(FINAL_WRITE):
        try:
            await store.finish(record, "failed", None, error, error.message)
        except Exception:  # a shared store unreachable: its reader sees the worker gone later
            return
