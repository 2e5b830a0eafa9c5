"""The receiver's side of tasks: ``TaskSupport`` runs task-augmented requests in the background
and answers ``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel``.

Attached to a ``Server`` (task-augmented ``tools/call``) or a ``Client`` (task-augmented
``sampling/createMessage`` and ``elicitation/create``) with ``endpoint.enable_tasks(...)``; the
endpoint's router hands it each request (``route``), and it turns the task form into a task
whose ``CreateTaskResult`` is answered at once. Tasks belong to whoever created them: the
authenticated identity when the transport has one (``context.auth``), else the session; any
other requestor gets the spec's "not found" for them.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Collection, Hashable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

import anyio
from mcpbind.generated import ERAS
from mcpbind.generated.names import (
    ELICITATION_CREATE,
    META_RELATED_TASK,
    NOTIFICATIONS_TASKS,
    NOTIFICATIONS_TASKS_STATUS,
    SAMPLING_CREATEMESSAGE,
    TASKS_GET,
    TOOLS_CALL,
)
from mcpbind.runtime.core.context import RequestContext
from mcpbind.runtime.core.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, McpError
from mcpbind.runtime.core.routing import Route
from mcpbind.runtime.eras.subscriptions import ExtraFilter, Subscriptions

from ._context import task_context
from ._extension import TasksExtension
from ._jobs import Jobs, per_request
from ._store import (
    InMemoryTaskStore,
    TaskRecord,
    TaskStatus,
    TaskStore,
    finally_finish,
    task_not_found,
)
from ._wire import TASKS_EXTENSION

if TYPE_CHECKING:
    from mcpbind.runtime.core.bindings import Bindings
    from mcpbind.runtime.core.session import Session

    from ._sides import Registry

__all__ = ["CANCELLED_ERROR", "TaskDirectory", "TaskSupport", "ToolTaskSupport"]

ToolTaskSupport = Literal["forbidden", "optional", "required"]
#: What ``tasks/result`` answers for a cancelled task: the request never produced a result.
CANCELLED_ERROR: Final = -32603
#: The ``subscriptions/listen`` filter member of the 2026-07-28 extension's status notifications.
TASK_IDS: Final = "taskIds"
#: Task-augmentable methods per receiving side, with their ``tasks.requests`` capability.
_SERVER_METHODS: Final = {TOOLS_CALL: ("tools", "call")}
_CLIENT_METHODS: Final = {
    SAMPLING_CREATEMESSAGE: ("sampling", "createMessage"),
    ELICITATION_CREATE: ("elicitation", "create"),
}


class TaskDirectory(Protocol):
    """Where the workers of one deployment learn which of them holds a task (the HTTP
    transport's shared state sets itself as ``TaskSupport.directory``), so that a ``tasks/*``
    request landing on another worker is forwarded to the one running it."""

    async def record_task(self, task_id: str, ttl_ms: int | None) -> None:
        """Record this worker as the holder of ``task_id`` for its ttl (raises if it cannot)."""
        ...


class TaskSupport:
    """Tasks for one endpoint: a ``store`` (default ``InMemoryTaskStore()``), the
    ``taskSupport`` of each tool (``tools``: a mapping or a function of the tool's name;
    absent means forbidden), ``page_size`` tasks per ``tasks/list`` page, whether to send
    ``notifications/tasks/status`` on each change (``notify``), and the tools whose handlers
    start their task themselves in the 2026-07-28 extension (``deferred``, see
    ``start_task``)."""

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        tools: Mapping[str, ToolTaskSupport] | Callable[[str], str | None] | None = None,
        page_size: int = 50,
        notify: bool = True,
        deferred: Collection[str] = (),
    ) -> None:
        self._store: TaskStore
        self.store = store if store is not None else InMemoryTaskStore()
        self._tools = tools
        self.page_size = page_size
        self.notify = notify
        self._methods: Mapping[str, tuple[str, str]] = {}
        self.local_server = False
        self.capabilities: dict[str, Any] = {}
        self._scopes: dict[str, anyio.CancelScope] = {}
        self._sessions: dict[str, Session] = {}
        self._waiting: dict[str, int] = {}
        self._session_keys: weakref.WeakKeyDictionary[Session, object] = weakref.WeakKeyDictionary()
        self.jobs = Jobs()
        #: The 2026-07-28 tasks extension over the same store and tools.
        self.extension = TasksExtension(self, deferred)
        #: Told of each task that a request on another worker may ask about (None: one process).
        self.directory: TaskDirectory | None = None

    @property
    def store(self) -> TaskStore:
        return self._store

    @store.setter
    def store(self, store: TaskStore) -> None:
        """A store, bound to ``stop`` (a shared one cancels through it what another process
        was asked to cancel)."""
        self._store = store
        store.bind(self.stop)

    def stop(self, task_id: str) -> None:
        """Stop the handler of task ``task_id`` if it runs here (its record says why)."""
        scope = self._scopes.get(task_id)
        if scope is not None:
            scope.cancel()
        self.extension.stop(task_id)

    # -- attaching --------------------------------------------------------------------------

    def attach(self, endpoint: Registry, receives: Mapping[str, tuple[str, str]]) -> None:
        """Register the ``tasks/*`` handlers on ``endpoint``; ``capabilities`` is then what it
        advertises (``tasks.list``, ``tasks.cancel``, ``tasks.requests`` of ``receives``)."""
        from mcpbind.generated.v2025_11_25 import methods as m  # only when tasks are enabled

        self._methods = receives
        self.local_server = TOOLS_CALL in receives
        subscriptions = getattr(endpoint, "subscriptions", None)
        if self.local_server and isinstance(subscriptions, Subscriptions):
            ext = self.extension
            subscriptions.extra[TASK_IDS] = ExtraFilter(
                NOTIFICATIONS_TASKS, ext.accept_listen, ext.listened
            )
            ext.broadcast = getattr(endpoint, "broadcast", None)
        endpoint.add_handler(m.TASKS_GET, self._get)
        endpoint.add_handler(m.TASKS_RESULT, self._result)
        endpoint.add_handler(m.TASKS_LIST, self._list)
        endpoint.add_handler(m.TASKS_CANCEL, self._cancel)
        requests: dict[str, Any] = {}
        for group, name in receives.values():
            requests.setdefault(group, {})[name] = {}
        self.capabilities = {"tasks": {"list": {}, "cancel": {}, "requests": requests}}

    def capabilities_for(self, bindings: Bindings) -> dict[str, Any]:
        """What to advertise under a revision: the 2025-11-25 ``tasks`` capability where the
        revision has ``tasks/*``, the extension under ``extensions`` in the stateless era
        (never a ``tasks`` member there)."""
        if TASKS_GET in bindings.incoming_requests:
            return self.capabilities
        if ERAS.get(bindings.revision) == "stateless" and self.local_server:
            # A client opts in per request instead (``call_tool_as_task``): declared for the
            # whole client, every ``call_tool`` of a task tool would come back as a task.
            return {"extensions": {TASKS_EXTENSION: {}}}
        return {}

    def route_stateless(
        self,
        session: Session,
        method: str,
        params: dict[str, Any] | None,
        decided: Route | McpError,
    ) -> Route | McpError:
        """A stateless-era request, as the lifecycle routed it, with the extension's say."""
        if self.local_server:
            return self.extension.route(session, method, params, decided)
        return decided

    def tool_support(self, name: str) -> str | None:
        """The ``execution.taskSupport`` of tool ``name`` (None: absent, i.e. forbidden)."""
        tools = self._tools
        if tools is None:
            return None
        return tools(name) if callable(tools) else tools.get(name)

    def owner(self, context: RequestContext) -> Hashable:
        """Whom a task belongs to: the token's subject and client, else the session; on a
        per-request session (``StreamableHTTPServer(stateless=True)``), whoever holds its id."""
        auth = context.auth
        if auth is not None:
            return ("auth", getattr(auth, "subject", None), getattr(auth, "client_id", None))
        if per_request(context):
            return ("anyone",)  # no session outlives the POST: the unguessable id is the key
        key = self._session_keys.get(context.session)
        if key is None:
            key = self._session_keys[context.session] = object()
        return ("session", id(key))

    # -- the task form of a request ---------------------------------------------------------

    def route(
        self, session: Session, method: str, params: dict[str, Any] | None, route: Route
    ) -> Route | McpError:
        """``route`` unchanged for an ordinary request; for the task form, a route that creates
        the task. Enforces the tools' ``taskSupport`` (-32601, tasks.md "Tool-Level
        Negotiation")."""
        if method not in self._methods or route.handler is None:
            return route
        if TASKS_GET not in session.bindings.methods:
            return route  # a revision without tasks: the request is served normally
        task = params.get("task") if params else None
        if method == TOOLS_CALL:
            name = params.get("name") if params else None
            support = self.tool_support(name) if isinstance(name, str) else None
            if task is not None and support not in ("optional", "required"):
                return McpError(
                    METHOD_NOT_FOUND, f"Tool {name!r} does not support task augmentation"
                )
            if task is None and support == "required":
                return McpError(METHOD_NOT_FOUND, f"Tool {name!r} requires task augmentation")
        if task is None:
            return route
        if not isinstance(task, dict):
            return McpError(INVALID_PARAMS, "params.task must be an object")
        return Route(None, functools.partial(self._create, route, method))

    async def share(self, record: TaskRecord) -> None:
        """Tell the ``directory`` (the other workers) that this one holds ``record``, before its
        ``CreateTaskResult`` leaves; if that fails the task is failed, and so is its request."""
        directory = self.directory
        if directory is None:
            return
        try:
            await directory.record_task(record.task_id, record.ttl)
        except Exception as exc:
            error = McpError(
                INTERNAL_ERROR, f"the task could not be shared with the other workers: {exc}"
            )
            await self.store.finish(record, "failed", None, error, error.message)
            raise error from exc

    async def _create(
        self, route: Route, method: str, raw: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        params = route.parse_params(raw)  # invalid params: -32602 before any task exists
        ttl = raw["task"].get("ttl")
        record = await self.store.create(self.owner(context), ttl if type(ttl) is int else None)
        alone = per_request(context)
        if alone:
            await self.share(record)  # a session's tasks are reached through its session
        self._sessions[record.task_id] = context.session
        job = task_context(context, record.task_id, functools.partial(self._input_wait, record))
        run = self._run(record, route, method, params, job)
        if alone:
            self.jobs.spawn(run, context.session)  # not ended with the POST's own session
        else:
            context.session.start_soon(lambda: run)
        return {"task": record.to_json()}

    async def _run(
        self, record: TaskRecord, route: Route, method: str, params: Any, context: RequestContext
    ) -> None:
        assert route.handler is not None
        scope = self._scopes[record.task_id] = anyio.CancelScope()
        try:
            with scope:
                try:
                    data = route.dump_result(await route.handler(params, context))
                except McpError as exc:
                    await self._finish(record, "failed", None, exc, exc.message)
                except Exception as exc:
                    error = McpError(INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
                    await self._finish(record, "failed", None, error, error.message)
                else:
                    failed = method == TOOLS_CALL and data.get("isError") is True
                    await self._finish(record, "failed" if failed else "completed", data, None)
        finally:
            self._scopes.pop(record.task_id, None)
            self._waiting.pop(record.task_id, None)
            if not record.terminal:  # the session ended under it
                error = McpError(INTERNAL_ERROR, "the session ended before the task finished")
                await finally_finish(self.store, record, error)
            self._sessions.pop(record.task_id, None)

    async def _input_wait(self, record: TaskRecord, delta: int) -> None:
        """A request of the task's handler to the requestor starts (+1) or ends (-1)."""
        count = self._waiting.get(record.task_id, 0) + delta
        self._waiting[record.task_id] = count
        if delta > 0 and count == 1:
            await self._set(record, "input_required", "waiting for the requestor's answer")
        elif count == 0:
            await self._set(record, "working", None)

    async def _set(self, record: TaskRecord, status: TaskStatus, message: str | None) -> None:
        if await self.store.update(record, status, message):
            await self._announce(record)

    async def _finish(
        self,
        record: TaskRecord,
        status: TaskStatus,
        result: dict[str, Any] | None,
        error: McpError | None,
        message: str | None = None,
    ) -> None:
        if await self.store.finish(record, status, result, error, message):
            await self._announce(record)

    async def _announce(self, record: TaskRecord) -> None:
        """``notifications/tasks/status`` to the creating session (tasks.md: receivers MAY)."""
        session = self._sessions.get(record.task_id)
        if not self.notify or session is None or session.closed:
            return
        message = {
            "jsonrpc": "2.0",
            "method": NOTIFICATIONS_TASKS_STATUS,
            "params": record.to_json(),
        }
        with anyio.CancelScope(shield=True):
            try:
                await session.send_raw(message)
            except Exception:  # the session closed meanwhile: polling still tells
                return

    # -- tasks/* ------------------------------------------------------------------------------

    async def _find(self, context: RequestContext, task_id: str) -> TaskRecord:
        record = await self.store.get(self.owner(context), task_id)
        if record is None:
            raise task_not_found(task_id)
        return record

    async def _get(self, params: Any, context: RequestContext) -> Any:
        return (await self._find(context, params.taskId)).to_json()

    async def _result(self, params: Any, context: RequestContext) -> Any:
        """Blocks until the task is terminal, then answers what the request would have."""
        record = await self.store.wait(await self._find(context, params.taskId))
        error = record.error
        if error is not None:
            raise McpError(error.code, error.message, error.data)
        meta = dict((record.result or {}).get("_meta") or {})
        meta[META_RELATED_TASK] = {"taskId": record.task_id}
        return {**(record.result or {}), "_meta": meta}

    async def _list(self, params: Any, context: RequestContext) -> Any:
        cursor = getattr(params, "cursor", None)
        page, next_cursor = await self.store.list(self.owner(context), cursor, self.page_size)
        result: dict[str, Any] = {"tasks": [record.to_json() for record in page]}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    async def _cancel(self, params: Any, context: RequestContext) -> Any:
        record = await self._find(context, params.taskId)
        if record.terminal:
            raise McpError(
                INVALID_PARAMS, f"Cannot cancel task: already in terminal status '{record.status}'"
            )
        error = McpError(CANCELLED_ERROR, "The task was cancelled by request")
        await self._finish(record, "cancelled", None, error, "The task was cancelled by request.")
        scope = self._scopes.get(record.task_id)
        if scope is not None:
            scope.cancel()
        return record.to_json()


SERVER_METHODS: Final = _SERVER_METHODS
CLIENT_METHODS: Final = _CLIENT_METHODS
