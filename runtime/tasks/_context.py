"""What a task's handler talks to the requestor through: its own context and peer sender.

A task's handler outlives the request that created it, so it gets a context of its own: the
same session and progress token (progress keeps flowing for the task's life, tasks.md "Task
Progress Notifications"), and a peer whose requests carry the related-task ``_meta`` and move
the task to ``input_required`` while they wait for the answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mcpbind.generated.names import META_RELATED_TASK
from mcpbind.generated.support import MCPModel, MethodSpec, NotificationSpec, RequestOptions
from mcpbind.runtime.core.bindings import dump
from mcpbind.runtime.core.context import RequestContext, RequestId

__all__ = ["TaskRequestContext", "TaskSender", "related", "task_context"]

ResultT = TypeVar("ResultT")


def related(data: dict[str, Any] | None, task_id: str) -> dict[str, Any]:
    """``data`` with the related-task key in its ``_meta``."""
    out = dict(data or {})
    meta = dict(out.get("_meta") or {})
    meta[META_RELATED_TASK] = {"taskId": task_id}
    out["_meta"] = meta
    return out


class TaskSender:
    """A ``RequestSender`` for a task's handler: tags what it sends with the task, and calls
    ``waiting(+1)`` / ``waiting(-1)`` around each request (the manager's ``input_required``)."""

    __slots__ = ("_context", "_task_id", "_waiting")

    def __init__(
        self,
        context: RequestContext,
        task_id: str,
        waiting: Callable[[int], Awaitable[None]],
    ) -> None:
        self._context = context
        self._task_id = task_id
        self._waiting = waiting

    async def send_request(
        self,
        spec: MethodSpec[Any, ResultT],
        params: MCPModel | dict[str, Any] | None,
        options: RequestOptions | None = None,
    ) -> ResultT:
        body = related(dump(params), self._task_id)
        await self._waiting(1)
        try:
            return await self._context.session.send_request(spec, body, options)
        finally:
            await self._waiting(-1)

    async def send_notification(self, spec: NotificationSpec[Any], params: MCPModel | None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": spec.method}
        message["params"] = related(dump(params), self._task_id)
        await self._context.session.send_raw(message)


class TaskRequestContext(RequestContext):
    """The context of a task's handler. What it sends is not tied to the request that created
    the task, which was answered long ago (on HTTP that request's stream is closed): it goes
    where the transport sends unrelated messages (the GET stream), tagged with the task."""

    __slots__ = ("sender",)
    sender: TaskSender

    @property
    def progress_related_id(self) -> RequestId | None:
        return None

    async def send_notification(self, spec: NotificationSpec[Any], params: MCPModel | None) -> None:
        await self.sender.send_notification(spec, params)

    def send_through(self, sender: TaskSender) -> None:
        """Send through ``sender``, the ``peer`` stub's calls included."""
        self.sender = sender
        self._peer = self.session.bindings.stub(sender)


def task_context(
    context: RequestContext, task_id: str, waiting: Callable[[int], Awaitable[None]]
) -> RequestContext:
    """A copy of ``context`` for the task's handler, whose peer is a ``TaskSender``."""
    copy = TaskRequestContext(
        context.session,
        context.request_id,
        context.method,
        context.meta,
        context.transport_context,
    )
    copy.send_through(TaskSender(copy, task_id, waiting))
    return copy
