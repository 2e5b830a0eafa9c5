"""The requestor's side of tasks: send a request in its task form, get a ``TaskHandle``.

``await client.call_tool_as_task("slow", {...}, ttl=60000)`` sends ``tools/call`` with
``params.task`` and returns at once with the receiver's ``CreateTaskResult`` as a handle; the
handle polls (``status``), waits for the outcome (``result``: ``tasks/result``, which blocks
until the task is terminal, optionally after polling at the receiver's ``pollInterval``) and
cancels. The progress callback keeps receiving the task's progress for its whole life: the
request's progress token outlives its ``CreateTaskResult`` (tasks.md "Task Progress").
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import anyio
from mcpbind.generated.names import (
    NOTIFICATIONS_PROGRESS,
    TASKS_CANCEL,
    TASKS_GET,
    TASKS_RESULT,
    TOOLS_CALL,
)
from mcpbind.generated.support import MethodSpec, ProgressCallback, RequestOptions
from mcpbind.runtime.core.bindings import dump, validator
from mcpbind.runtime.core.capabilities import has_capability
from mcpbind.runtime.core.context import RelatedSender, RequestContext
from mcpbind.runtime.core.errors import CapabilityError

from ._extension_client import ExtensionTaskHandle, call_tool_with_tasks
from ._sides import Registry
from ._store import TERMINAL

if TYPE_CHECKING:
    from mcpbind.runtime.core.session import Session

__all__ = ["TaskHandle", "call_as_task", "call_tool_as_task"]

R = TypeVar("R")
_tokens = itertools.count(1)
#: Per endpoint: progress token -> the callback of the task that was given it.
_listeners: weakref.WeakKeyDictionary[Registry, dict[str, ProgressCallback]] = (
    weakref.WeakKeyDictionary()
)
_NO_TIMEOUT: RequestOptions = {"timeout": None}


def _listen(endpoint: Registry, session: Session, callback: ProgressCallback) -> str:
    """A fresh progress token whose notifications reach ``callback`` until ``_forget``."""
    listeners = _listeners.get(endpoint)
    if listeners is None:
        listeners = _listeners[endpoint] = {}
        spec = session.bindings.notifications.get(NOTIFICATIONS_PROGRESS)
        if spec is not None:
            table = listeners

            async def on_progress(params: Any, _session: Session) -> None:
                callback = table.get(getattr(params, "progressToken", None))  # type: ignore[arg-type]
                if callback is not None:
                    total = None if params.total is None else float(params.total)
                    await callback(float(params.progress), total, params.message)

            endpoint.add_notification_handler(spec, on_progress)
    token = f"task-progress-{next(_tokens)}"
    listeners[token] = callback
    return token


def _forget(endpoint: Registry | None, token: str | None) -> None:
    if endpoint is not None and token is not None:
        _listeners.get(endpoint, {}).pop(token, None)


class TaskHandle(Generic[R]):
    """A task the receiver created for our request: ``task_id``, ``task`` (its latest known
    state, as JSON data), ``status()``, ``result()``, ``cancel()``."""

    def __init__(
        self,
        sender: Any,
        session: Session,
        result_type: Any,
        task: dict[str, Any],
        progress: tuple[Registry, str] | None = None,
    ) -> None:
        self._sender = sender
        self._session = session
        self._result_type = result_type
        self.task: dict[str, Any] = task
        self._progress = progress

    @property
    def task_id(self) -> str:
        task_id: str = self.task["taskId"]
        return task_id

    def _spec(self, method: str) -> MethodSpec[Any, Any]:
        spec = self._session.bindings.methods.get(method)
        if spec is None:
            raise CapabilityError(f"revision {self._session.bindings.revision} has no {method}")
        return spec

    async def status(self) -> dict[str, Any]:
        """``tasks/get``: the task's current state (``status``, ``pollInterval``...)."""
        got = await self._sender.send_request(self._spec(TASKS_GET), {"taskId": self.task_id})
        self.task = dump(got)
        return self.task

    async def result(self, *, poll: bool = False) -> R:
        """The outcome of the request, exactly as it would have answered: its result, or its
        ``McpError``. ``poll=True`` first polls ``tasks/get`` at the receiver's ``pollInterval``
        until the task is terminal (or needs input), then asks ``tasks/result``."""
        try:
            while poll and self.task.get("status") not in (*TERMINAL, "input_required"):
                await anyio.sleep((self.task.get("pollInterval") or 1000) / 1000)
                await self.status()
            raw = await self._sender.send_request(
                self._spec(TASKS_RESULT), {"taskId": self.task_id}, _NO_TIMEOUT
            )
        finally:
            if self._progress is not None:
                _forget(*self._progress)
        outcome: R = validator(self._result_type)(dump(raw))
        return outcome

    async def cancel(self) -> dict[str, Any]:
        """``tasks/cancel``: the task's state, now ``cancelled`` (an already terminal task is
        the receiver's -32602)."""
        got = await self._sender.send_request(self._spec(TASKS_CANCEL), {"taskId": self.task_id})
        self.task = dump(got)
        if self._progress is not None:
            _forget(*self._progress)
        return self.task


async def call_as_task(
    via: Any,
    method: str,
    params: Mapping[str, Any] | Any,
    *,
    ttl: int | None = None,
    progress: ProgressCallback | None = None,
    timeout: float | None = None,
) -> TaskHandle[Any]:
    """Send ``method`` in its task form through ``via`` (a ``Client``, or a handler's
    ``RequestContext`` for a server asking its client) and return the ``TaskHandle``."""
    if isinstance(via, RequestContext):
        session: Session = via.session
        sender: Any = RelatedSender(session, via.request_id)
    else:
        session = via.session
        sender = via
    spec = session.bindings.methods.get(method)
    if spec is None or spec.task_result_type is None or spec.task_capability is None:
        raise CapabilityError(f"revision {session.bindings.revision} has no task form of {method}")
    needed = ".".join(spec.task_capability)
    if not has_capability(session.peer.capabilities, needed):
        raise CapabilityError(
            f"the receiver did not advertise {needed!r}, so {method} is not sent as a task"
        )
    body = dict(dump(params) or {})
    body["task"] = {} if ttl is None else {"ttl": ttl}
    endpoint = session.router if isinstance(session.router, Registry) else None
    listening: tuple[Registry, str] | None = None
    if progress is not None and endpoint is not None:
        token = _listen(endpoint, session, progress)
        listening = (endpoint, token)
        body["_meta"] = {**(body.get("_meta") or {}), "progressToken": token}
    try:
        # The runtime validates the answer as ``spec.task_result_type`` (``CreateTaskResult``).
        created = await sender.send_request(spec, body, {"timeout": timeout})
    except BaseException:
        if listening is not None:
            _forget(*listening)
        raise
    return TaskHandle(sender, session, spec.result_type, dump(created)["task"], listening)


async def call_tool_as_task(
    via: Any,
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    ttl: int | None = None,
    progress: ProgressCallback | None = None,
) -> TaskHandle[Any] | ExtensionTaskHandle:
    """``tools/call`` of tool ``name`` as a task; see ``call_as_task``. A client of the
    stateless era opts into the 2026-07-28 tasks extension for this call instead, and gets an
    ``ExtensionTaskHandle`` (``ttl`` and ``progress`` have no say there: the server decides)."""
    peer = getattr(getattr(via, "session", None), "peer", None)
    if not isinstance(via, RequestContext) and getattr(peer, "era", None) == "stateless":
        return await call_tool_with_tasks(via, name, arguments)
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = dict(arguments)
    return await call_as_task(via, TOOLS_CALL, params, ttl=ttl, progress=progress)
