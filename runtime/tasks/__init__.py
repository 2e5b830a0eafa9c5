"""Tasks (2025-11-25): long-running requests answered at once with a task, polled for later.

``TaskSupport`` (with a ``TaskStore``, ``InMemoryTaskStore`` by default) is the receiver's side,
attached with ``server.enable_tasks()`` / ``client.enable_tasks()``; ``TaskHandle`` is the
requestor's (``await client.call_tool_as_task(...)``).

A feature layer the endpoints open on first use (``enable_tasks``, ``call_tool_as_task``);
it names them only through the protocols of ``_sides``. May import: ``eras``, ``transports``,
``core``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpbind.runtime._exports import install

if TYPE_CHECKING:
    from ._extension import (
        ExtensionTaskContext as ExtensionTaskContext,
        TasksExtension as TasksExtension,
        start_task as start_task,
    )
    from ._extension_client import ExtensionTaskHandle as ExtensionTaskHandle
    from ._handle import (
        TaskHandle as TaskHandle,
        call_as_task as call_as_task,
        call_tool_as_task as call_tool_as_task,
    )
    from ._manager import (
        CLIENT_METHODS as CLIENT_METHODS,
        SERVER_METHODS as SERVER_METHODS,
        TaskDirectory as TaskDirectory,
        TaskSupport as TaskSupport,
        ToolTaskSupport as ToolTaskSupport,
    )
    from ._store import (
        TERMINAL as TERMINAL,
        InMemoryTaskStore as InMemoryTaskStore,
        TaskLimitError as TaskLimitError,
        TaskRecord as TaskRecord,
        TaskStatus as TaskStatus,
        TaskStore as TaskStore,
        moves_to as moves_to,
        task_not_found as task_not_found,
    )
    from ._wire import TASKS_EXTENSION as TASKS_EXTENSION

install(globals())
