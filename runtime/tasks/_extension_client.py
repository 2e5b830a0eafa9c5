"""The requestor's side of the 2026-07-28 tasks extension: a ``tools/call`` the server may answer
with a task, and the handle that follows it (``tasks/get``, ``tasks/update``, ``tasks/cancel``).

The client opts in per request: its ``_meta`` capabilities name the extension for this call
only, and only if the server advertised the extension in ``server/discover`` (otherwise it is a
``CapabilityError`` before anything is sent). The server decides: the answer is a task, or the
tool's result itself (a quick tool, or one that does not run as a task), and the handle covers
both. While the task waits for input, ``result()`` answers its ``inputRequests`` with the
client's own handlers (those that answer multi round-trip requests) and delivers them with
``tasks/update``. ``watch()`` follows the task by the extension's ``notifications/tasks`` on a
``subscriptions/listen`` stream instead of polling. The extension's methods are not in the
revision's schema, so their specs are made here from the handwritten wire types.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import anyio
from mcpbind.generated.names import (
    META_CLIENT_CAPABILITIES as CLIENT_CAPABILITIES,
    META_SUBSCRIPTION_ID,
    NOTIFICATIONS_TASKS,
    TASKS_CANCEL,
    TASKS_GET,
    TASKS_UPDATE,
    TOOLS_CALL,
)
from mcpbind.generated.support import Direction, MethodSpec, RequestOptions
from mcpbind.runtime.core.bindings import dump, validator
from mcpbind.runtime.core.capabilities import merge
from mcpbind.runtime.core.errors import CapabilityError, InvalidResultError, McpError
from mcpbind.runtime.core.routing import OutgoingCall
from mcpbind.runtime.eras.stateless_client import StatelessClient
from pydantic import ValidationError

from ._json import json_object
from ._manager import CANCELLED_ERROR
from ._store import TERMINAL
from ._wire import (
    TASKS_EXTENSION,
    CancelTaskParams,
    CreateTaskResult,
    GetTaskParams,
    GetTaskResult,
    UpdateTaskParams,
)

if TYPE_CHECKING:
    from mcpbind.runtime.core.session import Session

    from ._sides import TaskClient

__all__ = ["ExtensionTaskHandle", "call_tool_with_tasks"]

_OPT_IN: Final[dict[str, Any]] = {"extensions": {TASKS_EXTENSION: {}}}
_DEFAULT_POLL_MS: Final = 500


def _spec(method: str, params: Any, result: Any) -> MethodSpec[Any, Any]:
    return MethodSpec(
        revision="2026-07-28",
        method=method,
        handler_name="",
        directions=frozenset({Direction.CLIENT_TO_SERVER}),
        request_type=None,
        params_type=params,
        params_required=True,
        result_type=result,
        result_link="",
    )


SPECS: Final = {
    TASKS_GET: _spec(TASKS_GET, GetTaskParams, GetTaskResult),
    TASKS_UPDATE: _spec(TASKS_UPDATE, UpdateTaskParams, dict),
    TASKS_CANCEL: _spec(TASKS_CANCEL, CancelTaskParams, dict),
}


def _stateless(client: TaskClient) -> StatelessClient:
    """The client's stateless-era lifecycle, whose ``_meta`` and input answers the extension's
    requests use."""
    lifecycle = client.lifecycle
    if not isinstance(lifecycle, StatelessClient):
        raise CapabilityError(
            f"the {TASKS_EXTENSION} extension needs a client of the stateless era "
            "(a protocol_version of 2026-07-28 or later)"
        )
    return lifecycle


def _meta(client: TaskClient, session: Session) -> dict[str, Any]:
    """The per-request ``_meta`` of this client, its capabilities naming the extension."""
    meta = dict(_stateless(client).meta(client, session.bindings))
    meta[CLIENT_CAPABILITIES] = merge(meta[CLIENT_CAPABILITIES], _OPT_IN)
    return meta


def _check_offered(session: Session) -> None:
    extensions = json_object(session.peer.capabilities.get("extensions"))
    if extensions is None or json_object(extensions.get(TASKS_EXTENSION)) is None:
        raise CapabilityError(
            f"the server did not advertise the {TASKS_EXTENSION} extension in server/discover; "
            "a request is not sent in its task form"
        )


class ExtensionTaskHandle:
    """A ``tools/call`` the server may have answered as a task: ``task`` (its latest known
    state as JSON data, None if the server answered directly), ``status()``, ``result()``,
    ``update()``, ``cancel()``."""

    def __init__(
        self, client: TaskClient, result_type: Any, task: dict[str, Any] | None, direct: Any = None
    ) -> None:
        self._client = client
        self.result_type = result_type
        self.task: dict[str, Any] | None = task
        self._direct = direct

    @property
    def task_id(self) -> str | None:
        return None if self.task is None else str(self.task["taskId"])

    async def _send(self, method: str, params: dict[str, Any]) -> Any:
        session = self._client.session
        body = {**params, "_meta": _meta(self._client, session)}
        options: RequestOptions = {"timeout": None}
        raw = await session.send_request_raw(SPECS[method], body, options)
        try:
            return dump(validator(SPECS[method].result_type)(raw))
        except ValidationError as exc:
            raise InvalidResultError(f"the result of {method!r} is malformed: {exc}") from exc

    async def status(self) -> dict[str, Any]:
        """``tasks/get``: the task's state, with its outcome or ``inputRequests`` inlined."""
        if self.task is None:
            return {"status": "completed", "result": dump(self._direct)}
        task: dict[str, Any] = await self._send(TASKS_GET, {"taskId": self.task_id})
        self.task = task
        return task

    async def update(self, responses: Mapping[str, Any]) -> None:
        """``tasks/update``: answers to some of the task's outstanding ``inputRequests``."""
        if self.task is not None:
            await self._send(
                TASKS_UPDATE, {"taskId": self.task_id, "inputResponses": dict(responses)}
            )

    async def cancel(self) -> None:
        """``tasks/cancel``: ask the server to stop the task (a terminal task stays as it is)."""
        if self.task is not None:
            await self._send(TASKS_CANCEL, {"taskId": self.task_id})

    async def result(self) -> Any:
        """The tool's result once the task is done, as the revision's ``CallToolResult``:
        polls at the server's ``pollIntervalMs``, answering input requests on the way. A failed
        task raises its ``McpError``; a cancelled one ``McpError`` -32603."""
        if self.task is None:
            return self._direct
        state = self.task
        while True:
            status = state.get("status")
            if status in TERMINAL and (
                status == "cancelled" or "result" in state or "error" in state
            ):
                break  # a CreateTaskResult may say terminal too, without the outcome
            if status == "input_required" and state.get("inputRequests"):
                await self.update(await self._answers(state["inputRequests"]))
            else:
                await anyio.sleep((state.get("pollIntervalMs") or _DEFAULT_POLL_MS) / 1000)
            state = await self.status()
        if status == "failed":
            error: dict[str, Any] = state.get("error") or {}
            raise McpError(
                int(error.get("code", CANCELLED_ERROR)),
                str(error.get("message", "the task failed")),
                error.get("data"),
            )
        if status == "cancelled":
            raise McpError(CANCELLED_ERROR, "the task was cancelled")
        try:
            return validator(self.result_type)(state.get("result"))
        except ValidationError as exc:
            raise InvalidResultError(f"the task's result is not a tool result: {exc}") from exc

    @asynccontextmanager
    async def watch(self) -> AsyncGenerator[AsyncIterator[dict[str, Any]], None]:
        """The task's states as the server announces them (``notifications/tasks`` on a
        ``subscriptions/listen`` stream for this task): ``async with handle.watch() as states:
        async for state in states: ...``, each the task as ``tasks/get`` answers it (``task``
        follows). The first is read with ``tasks/get`` once the stream is open (nothing is
        missed in between); iteration ends after a terminal state, or after that first one if
        the server did not agree to announce this task. Entering raises what the server
        answered instead of acknowledging (-32021 from a server without the extension)."""
        if self.task is None:
            yield _once({"status": "completed", "result": dump(self._direct)})
            return
        session = self._client.session
        meta = {CLIENT_CAPABILITIES: _meta(self._client, session)[CLIENT_CAPABILITIES]}
        async with self._client.listen(task_ids=[str(self.task_id)], meta=meta) as stream:
            acknowledged: dict[str, Any] = getattr(stream, "acknowledged", {})
            agreed: list[str] = acknowledged.get("taskIds") or []
            yield self._states(stream if self.task_id in agreed else None)

    async def _states(self, stream: Any) -> AsyncIterator[dict[str, Any]]:
        state = await self.status()
        yield state
        if stream is None or state.get("status") in TERMINAL:
            return
        seen = (state.get("status"), state.get("lastUpdatedAt"))
        async for notification in stream:
            params = json_object(notification.params)
            if notification.method != NOTIFICATIONS_TASKS or params is None:
                continue
            if params.get("taskId") != self.task_id:
                continue
            if (params.get("status"), params.get("lastUpdatedAt")) == seen:
                continue  # announced as the first tasks/get read it
            state = {k: v for k, v in params.items() if k != "_meta"}
            meta: dict[str, Any] = dict(params.get("_meta") or {})
            meta.pop(META_SUBSCRIPTION_ID, None)
            if meta:
                state["_meta"] = meta
            self.task = state
            seen = (state.get("status"), state.get("lastUpdatedAt"))
            yield state
            if state.get("status") in TERMINAL:
                return

    async def _answers(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        client = self._client
        return await _stateless(client).answer_input(client, client.session, TOOLS_CALL, requests)


async def _once(state: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    yield state


async def call_tool_with_tasks(
    client: TaskClient, name: str, arguments: Mapping[str, Any] | None = None
) -> ExtensionTaskHandle:
    """``tools/call`` with the extension opted into for this request (stateless era)."""
    session = client.session
    _check_offered(session)
    spec = session.bindings.methods[TOOLS_CALL]
    params: dict[str, Any] = {"name": name, "_meta": _meta(client, session)}
    if arguments is not None:
        params["arguments"] = dict(arguments)
    call = OutgoingCall(session, spec, params, {"timeout": None})
    raw = await _stateless(client).send(client, call)  # MRTR rounds first
    try:
        answer = json_object(raw)
        if answer is not None and answer.get("resultType") == "task":
            task = dump(validator(CreateTaskResult)(raw))
            return ExtensionTaskHandle(client, spec.result_type, task)
        return ExtensionTaskHandle(client, spec.result_type, None, validator(spec.result_type)(raw))
    except ValidationError as exc:
        raise InvalidResultError(f"the result of 'tools/call' is malformed: {exc}") from exc
