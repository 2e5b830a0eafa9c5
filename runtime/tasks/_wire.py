"""The wire types of the 2026-07-28 tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663).

The extension is not part of the protocol's ``schema.json``, so its types are written here by
hand after the extension's own ``schema.ts``: a task is flat (``CreateTaskResult`` is
``Result & Task``, no ``task`` wrapper), durations are integer milliseconds named ``ttlMs`` and
``pollIntervalMs``, and ``tasks/get`` inlines the outcome (``result`` or ``error``) once the task
is terminal, or the pending ``inputRequests`` while it waits for the client. ``tasks/update``
and ``tasks/cancel`` are answered with an empty ``{"resultType": "complete"}``.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from mcpbind.generated.names import (
    NOTIFICATIONS_TASKS,
    TASKS_CANCEL,
    TASKS_GET,
    TASKS_LIST,
    TASKS_RESULT,
    TASKS_UPDATE,
)
from mcpbind.generated.support import Direction, NotificationSpec
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from ._store import TaskRecord, iso_time

__all__ = [
    "ACK",
    "METHODS",
    "REMOVED",
    "STATUS_NOTIFICATION",
    "TASKS_EXTENSION",
    "CancelTaskParams",
    "CreateTaskResult",
    "GetTaskParams",
    "GetTaskResult",
    "UpdateTaskParams",
    "create_result",
    "detailed",
]

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
#: The methods the extension owns (its routing headers name the task: ``Mcp-Name: <taskId>``).
METHODS: Final = frozenset({TASKS_GET, TASKS_UPDATE, TASKS_CANCEL})
#: The 2025-11-25 methods the extension removed: -32601 in the stateless era.
REMOVED: Final = frozenset({TASKS_RESULT, TASKS_LIST})
ACK: Final = {"resultType": "complete"}
#: ``notifications/tasks`` (params: the task as ``tasks/get`` would answer it), sent on the
#: ``subscriptions/listen`` streams whose filter's ``taskIds`` name the task.
STATUS_NOTIFICATION: Final = NotificationSpec[Any](
    revision="2026-07-28",
    method=NOTIFICATIONS_TASKS,
    handler_name="",
    directions=frozenset({Direction.SERVER_TO_CLIENT}),
    notification_type=None,
    params_type=None,
    params_required=True,
)

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]


class _Wire(BaseModel):
    # Validators built on first use: only a 2026-07-28 session that uses tasks needs them.
    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class _Params(_Wire):
    taskId: StrictStr


class GetTaskParams(_Params):
    """``tasks/get``: the task to report on."""


class CancelTaskParams(_Params):
    """``tasks/cancel``: the task to stop (cooperative; terminal tasks stay as they are)."""


class UpdateTaskParams(_Params):
    """``tasks/update``: answers to some or all of the task's outstanding ``inputRequests``."""

    inputResponses: dict[str, Any]


class _Task(_Wire):
    taskId: StrictStr
    status: TaskStatus
    statusMessage: StrictStr | None = None
    createdAt: StrictStr
    lastUpdatedAt: StrictStr
    ttlMs: StrictInt | None
    pollIntervalMs: StrictInt | None = None


class CreateTaskResult(_Task):
    """What a request answered as a task returns: the task itself, flat, ``resultType: task``."""

    resultType: Literal["task"] = "task"


class GetTaskResult(_Task):
    """``tasks/get``: the task with what its status carries (``DetailedTask``)."""

    resultType: Literal["complete"] = "complete"
    inputRequests: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


def _task(record: TaskRecord) -> dict[str, Any]:
    data: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": iso_time(record.created_at),
        "lastUpdatedAt": iso_time(record.last_updated_at),
        "ttlMs": record.ttl,
    }
    if record.poll_interval is not None:
        data["pollIntervalMs"] = record.poll_interval
    if record.status_message is not None:
        data["statusMessage"] = record.status_message
    return data


def create_result(record: TaskRecord) -> dict[str, Any]:
    """The ``CreateTaskResult`` of ``record`` (no outcome, no input requests, no state)."""
    return {**_task(record), "resultType": "task"}


def detailed(record: TaskRecord, input_requests: dict[str, Any] | None) -> dict[str, Any]:
    """The ``DetailedTask`` of ``record``: its outcome inlined once terminal (the result as the
    request would have answered it, without the v1 related-task ``_meta``), or its pending
    ``input_requests`` while it waits for them."""
    data = _task(record)
    if record.status == "input_required":
        data["inputRequests"] = dict(input_requests or {})
    elif record.status == "completed":
        data["result"] = record.result or {}
    elif record.status == "failed" and record.error is not None:
        error: dict[str, Any] = {"code": record.error.code, "message": record.error.message}
        if record.error.data is not None:
            error["data"] = record.error.data
        data["error"] = error
    return data
