"""Tasks (2025-11-25): long-running requests answered at once with a task, polled for later.

``TaskSupport`` (with a ``TaskStore``, ``InMemoryTaskStore`` by default) is the receiver's side,
attached with ``server.enable_tasks()`` / ``client.enable_tasks()``; ``TaskHandle`` is the
requestor's (``await client.call_tool_as_task(...)``).
"""

from ._extension import ExtensionTaskContext, TasksExtension, start_task
from ._extension_client import ExtensionTaskHandle
from ._handle import TaskHandle, call_as_task, call_tool_as_task
from ._manager import CLIENT_METHODS, SERVER_METHODS, TaskDirectory, TaskSupport, ToolTaskSupport
from ._store import (
    TERMINAL,
    InMemoryTaskStore,
    TaskLimitError,
    TaskRecord,
    TaskStatus,
    TaskStore,
)
from ._wire import TASKS_EXTENSION

__all__ = [
    "CLIENT_METHODS",
    "SERVER_METHODS",
    "TASKS_EXTENSION",
    "TERMINAL",
    "ExtensionTaskContext",
    "ExtensionTaskHandle",
    "InMemoryTaskStore",
    "TaskDirectory",
    "TaskHandle",
    "TaskLimitError",
    "TaskRecord",
    "TaskStatus",
    "TaskStore",
    "TaskSupport",
    "TasksExtension",
    "ToolTaskSupport",
    "call_as_task",
    "call_tool_as_task",
    "start_task",
]
