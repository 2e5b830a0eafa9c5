"""The receiver's side of the 2026-07-28 tasks extension (``io.modelcontextprotocol/tasks``).

In the stateless era the server, not the client, decides that a request becomes a task
(SEP-2663 "server-directed"): a ``tools/call`` of a tool whose ``taskSupport`` is ``optional``
or ``required``, from a client whose capabilities (per request, in ``_meta``) name the
extension, is answered with a flat ``CreateTaskResult`` and its handler runs on. A client that
did not name it gets the tool's ordinary result, or for a ``required`` tool the "missing
required client capability" error (-32021); so do ``tasks/get``, ``tasks/update`` and
``tasks/cancel``. ``tasks/result`` and ``tasks/list`` are gone (-32601).

The task starts before the handler runs, unless the tool is ``deferred``: its handler first
gathers input by multi round-trip results as any tool does, and calls ``start_task(context)``
when it is ready to go on in the background (composition of MRTR and tasks); a deferred handler
that returns before that answers its request directly (the "immediate result" shortcut). Once
the task exists, what the handler asks of the client (``context.peer.elicit(...)``) parks the
task in ``input_required`` with the request under a key in ``inputRequests``; ``tasks/update``
delivers answers, any subset at a time, and the task works on once none is outstanding.

A client that opens ``subscriptions/listen`` with ``notifications.taskIds`` (naming the extension
in that request's capabilities, else -32021) gets ``notifications/tasks`` on that stream at each
status change of those of the tasks that are its own (the acknowledgement lists them; another
identity's ids, or unknown ones, are left out, as ``tasks/get`` would not find them either).

A task's handler does not belong to the HTTP request that created it: on asyncio it runs in a
task of its own, so it outlives the per-request session of the stateless era. Without an
authenticated identity, the task id (192 random bits) is what grants access to a task.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Collection, Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

import anyio
from mcpbind.generated.names import TASKS_CANCEL, TASKS_GET, TOOLS_CALL
from mcpbind.generated.support import Direction, MCPModel, MethodSpec, RequestOptions
from mcpbind.runtime.core.bindings import dump, validator
from mcpbind.runtime.core.capabilities import has_capability
from mcpbind.runtime.core.context import RequestContext, RequestId
from mcpbind.runtime.core.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    CapabilityError,
    ConnectionClosedError,
    McpError,
)
from mcpbind.runtime.core.routing import Route
from pydantic import BaseModel, ValidationError

from ._json import json_object
from ._store import TaskRecord, finally_finish, task_not_found
from ._wire import (
    ACK,
    METHODS,
    REMOVED,
    STATUS_NOTIFICATION,
    TASKS_EXTENSION,
    CancelTaskParams,
    GetTaskParams,
    UpdateTaskParams,
    create_result,
    detailed,
)

if TYPE_CHECKING:
    import asyncio  # annotations only: the tasks come from the fast path seam

    from mcpbind.runtime.core.session import Session

    from ._manager import TaskSupport

__all__ = ["ExtensionTaskContext", "TasksExtension", "missing_extension", "start_task"]

logger = logging.getLogger("mcpbind.runtime")

ResultT = TypeVar("ResultT")
_TASK_TOOLS: Final = frozenset({"optional", "required"})
#: The most task ids one ``subscriptions/listen`` may name.
MAX_LISTENED: Final = 1000
#: How long announcing a status change may take before it is given up (seconds).
_ANNOUNCE: Final = 5.0


def missing_extension(what: str) -> McpError:
    """-32021 naming the extension, shaped like the schema's ``requiredCapabilities``."""
    return McpError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Missing required client capability: {what} needs the {TASKS_EXTENSION} extension",
        {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
    )


def negotiated(capabilities: object) -> bool:
    """Whether a client's capabilities (of this very request) name the extension."""
    fields = json_object(capabilities)
    extensions = json_object(fields.get("extensions")) if fields is not None else None
    return extensions is not None and json_object(extensions.get(TASKS_EXTENSION)) is not None


@dataclass(eq=False)
class _Input:
    """One outstanding input request of a task, and the client's answer once it came."""

    request: dict[str, Any]
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: Any = None


@dataclass(eq=False)
class _Run:
    """One ``tools/call`` that may become a task: the task once started, else its direct
    outcome; the handler's job; its outstanding input requests."""

    capabilities: dict[str, Any]
    record: TaskRecord | None = None
    created: dict[str, Any] | None = None
    decided: anyio.Event = field(default_factory=anyio.Event)
    data: Any = None
    error: McpError | None = None
    job: asyncio.Task[None] | None = None
    pending: dict[str, _Input] = field(default_factory=dict[str, _Input])
    asked: int = 0


class ExtensionTaskContext(RequestContext):
    """The context of a handler that may run as a task: ``peer`` asks by multi round-trip
    results until the task starts, then by the task's ``inputRequests``. What it notifies is
    dropped once the request's own session is gone (a task's progress has no stream then)."""

    __slots__ = ("extension", "run")
    extension: TasksExtension
    run: _Run

    @property
    def peer(self) -> Any:
        if self._peer is None:
            bindings = self.rounds.bindings if self.rounds is not None else self.session.bindings
            self._peer = bindings.stub(_TaskInputSender(self))
        return self._peer

    @property
    def progress_related_id(self) -> RequestId | None:
        return None if self.run.record is not None else self.request_id

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        with contextlib.suppress(ConnectionClosedError):
            await super().report_progress(progress, total, message)

    async def send_notification(self, spec: Any, params: MCPModel | None) -> None:
        with contextlib.suppress(ConnectionClosedError):
            await super().send_notification(spec, params)


class _TaskInputSender:
    """``context.peer``'s sender for a handler that may run as a task."""

    __slots__ = ("_context",)

    def __init__(self, context: ExtensionTaskContext) -> None:
        self._context = context

    async def send_request(
        self,
        spec: MethodSpec[Any, ResultT],
        params: MCPModel | dict[str, Any] | None,
        options: RequestOptions | None = None,
    ) -> ResultT:
        context = self._context
        if context.run.record is None:
            rounds = context.rounds
            if rounds is None:
                raise CapabilityError(f"{spec.method!r} cannot be asked of the client here")
            return rounds.ask(spec, params, None)  # type: ignore[no-any-return]
        return await context.extension.ask(context.run, spec, params)  # type: ignore[no-any-return]

    async def send_notification(self, spec: Any, params: MCPModel | None) -> None:
        await self._context.send_notification(spec, params)


async def start_task(context: RequestContext) -> bool:
    """Answer the request being handled with a ``CreateTaskResult`` now, and go on as its task
    (the handler's return value becomes the task's result). For handlers of ``deferred`` tools;
    False (and nothing happens) where the request cannot become a task, so the same handler
    serves clients without the extension directly."""
    if not isinstance(context, ExtensionTaskContext):
        return False
    if context.run.record is None:
        await context.extension.begin(context.run, context)
    return True


class TasksExtension:
    """The extension's side of a ``TaskSupport`` (its store, its tools' ``taskSupport``);
    ``deferred`` names the tools whose handlers start their task themselves."""

    def __init__(self, support: TaskSupport, deferred: Collection[str] = ()) -> None:
        self.support = support
        self.deferred = frozenset(deferred)
        self._runs: dict[str, _Run] = {}
        self.jobs = support.jobs
        #: Sends ``notifications/tasks`` to the listening streams (set when attached to a server
        #: that has ``subscriptions/listen``; its ``broadcast`` reaches every worker's).
        self.broadcast: Callable[[Any, Any], Awaitable[int]] | None = None

    def __len__(self) -> int:
        """Tasks whose handlers still run (a finished one keeps only its store record)."""
        return len(self._runs)

    @staticmethod
    def owner(context: RequestContext) -> Hashable:
        """Whom a task belongs to: the token's subject and client; without one, anyone who
        holds its unguessable id (stateless requests share no session to scope it by)."""
        auth = context.auth
        if auth is not None:
            return ("auth", getattr(auth, "subject", None), getattr(auth, "client_id", None))
        return ("anyone",)

    # -- routing ----------------------------------------------------------------------------

    def route(
        self,
        session: Session,
        method: str,
        params: dict[str, Any] | None,
        decided: Route | McpError,
    ) -> Route | McpError:
        """What the stateless lifecycle ``decided`` for a request, with the extension's say."""
        capabilities = session.peer.capabilities
        if method in METHODS:
            if not (isinstance(decided, McpError) and decided.code == METHOD_NOT_FOUND):
                return decided  # refused for another reason (its _meta), or served by a handler
            if not negotiated(capabilities):
                return missing_extension(method)
            handler = {TASKS_GET: self._get, TASKS_CANCEL: self._cancel}.get(method, self._update)
            return Route(None, handler)
        if method in REMOVED:
            return McpError(
                METHOD_NOT_FOUND,
                f"Method not found: {method} is not part of the tasks extension",
                {"method": method},
            )
        if method != TOOLS_CALL or not isinstance(decided, Route) or decided.handler is None:
            return decided
        name = params.get("name") if params else None
        support = self.support.tool_support(name) if type(name) is str else None
        if support not in _TASK_TOOLS:
            return decided  # a legacy ``params.task`` hint promotes nothing
        if not negotiated(capabilities):
            if support == "required":
                return missing_extension(f"tool {name!r}")
            return decided
        assert type(name) is str
        return Route(None, functools.partial(self._call, decided, name))

    # -- a tools/call that may become a task -------------------------------------------------

    async def _call(
        self, route: Route, name: str, raw: dict[str, Any] | None, context: RequestContext
    ) -> Any:
        params = route.parse_params(raw)  # invalid params: -32602 before any task exists
        run = _Run(dict(context.session.peer.capabilities))
        job_context = ExtensionTaskContext(
            context.session, context.request_id, context.method, context.meta,
            context.transport_context,
        )  # fmt: skip
        job_context.extension = self
        job_context.run = run
        if name not in self.deferred:
            await self.begin(run, context)  # durable before the CreateTaskResult leaves
        run.job = self.jobs.spawn(self._job(run, route, params, raw, job_context), context.session)
        try:
            await run.decided.wait()
        except BaseException:
            if run.record is None and run.job is not None:
                run.job.cancel()  # the request was cancelled before its task existed
            raise
        if run.created is not None:
            assert run.record is not None
            try:
                await self.support.share(run.record)
            except McpError:
                if run.job is not None:
                    run.job.cancel()
                raise
            return run.created
        if run.error is not None:
            raise run.error
        return run.data

    async def begin(self, run: _Run, context: RequestContext) -> None:
        """Create the task of ``run``: from now on its request is answered by it."""
        record = await self.support.store.create(self.owner(context), None)
        run.record = record
        run.created = create_result(record)  # as created: the handler may finish before it leaves
        self._runs[record.task_id] = run
        run.decided.set()

    async def _job(
        self,
        run: _Run,
        route: Route,
        params: Any,
        raw: dict[str, Any] | None,
        context: ExtensionTaskContext,
    ) -> None:
        assert route.handler is not None
        error: McpError | None = None
        data: Any = None
        try:
            try:
                data = route.dump_result(await route.handler(params, context), raw)
            except McpError as exc:
                error = exc
            except Exception as exc:
                error = McpError(INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
            record = run.record
            if record is None:
                run.data, run.error = data, error
                return
            dumped = json_object(data)
            if error is None and dumped is not None and dumped.get("resultType") != "complete":
                error = McpError(INTERNAL_ERROR, "the task's handler did not return a result")
            if error is not None:
                finished = await self.support.store.finish(
                    record, "failed", None, error, error.message
                )
            else:
                finished = await self.support.store.finish(record, "completed", data, None)
            if finished:
                await self.announce(record)
        finally:
            run.pending.clear()
            run.job = None
            record = run.record
            if record is not None:
                self._runs.pop(record.task_id, None)  # no input can be pending any more
                if not record.terminal:  # cancelled under it
                    stop = McpError(INTERNAL_ERROR, "the task's handler was stopped")
                    await finally_finish(self.support.store, record, stop)
                    if record.terminal:
                        await self.announce(record)
            if record is None and run.data is None and run.error is None:
                run.error = McpError(INTERNAL_ERROR, "the request's handler was stopped")
            run.decided.set()

    async def ask(
        self, run: _Run, spec: MethodSpec[Any, Any], params: MCPModel | dict[str, Any] | None
    ) -> Any:
        """Put a request to the client among the task's ``inputRequests``; its answer, once
        ``tasks/update`` brings it."""
        record = run.record
        assert record is not None
        needed = spec.capabilities.get(Direction.SERVER_TO_CLIENT)
        if Direction.SERVER_TO_CLIENT not in spec.directions or (
            needed is not None and not has_capability(run.capabilities, needed)
        ):
            raise CapabilityError(f"the client cannot be asked {spec.method!r} (capabilities)")
        run.asked += 1
        key = f"{spec.method}#{run.asked}"
        request: dict[str, Any] = {"method": spec.method}
        body = dump(params)
        if body is not None:
            request["params"] = body
        slot = run.pending[key] = _Input(request)
        record.input_requests = {k: s.request for k, s in run.pending.items()}
        message = "waiting for the client's input"
        if await self.support.store.update(record, "input_required", message):
            await self.announce(record, run)
        try:
            await slot.answered.wait()
        finally:
            run.pending.pop(key, None)
        try:
            return validator(spec.result_type)(slot.answer)
        except ValidationError as exc:
            raise McpError(
                INVALID_PARAMS, f"inputResponses[{key!r}] is not a {spec.method} result"
            ) from exc

    # -- tasks/get, tasks/update, tasks/cancel ----------------------------------------------

    async def _find(self, raw: Any, model: type[BaseModel], context: RequestContext) -> Any:
        try:
            params: Any = validator(model)(raw or {})
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_context=False, include_input=False)
            raise McpError(INVALID_PARAMS, "Invalid params", errors) from None
        record = await self.support.store.get(self.owner(context), params.taskId)
        if record is None:
            raise task_not_found(params.taskId)
        return params, record

    async def _get(self, raw: Any, context: RequestContext) -> Any:
        _, record = await self._find(raw, GetTaskParams, context)
        run = self._runs.get(record.task_id)
        requests: dict[str, Any] | None
        if run is not None:
            requests = {k: slot.request for k, slot in run.pending.items()}
        else:  # running elsewhere (a shared store): as the store last had them
            requests = record.input_requests if record.status == "input_required" else None
        return {**detailed(record, requests), **ACK}

    async def _update(self, raw: Any, context: RequestContext) -> Any:
        """Deliver answers; those to keys not outstanding are ignored. The answered requests
        leave ``inputRequests`` at once, and the task works on when none is left."""
        params, record = await self._find(raw, UpdateTaskParams, context)
        run = self._runs.get(record.task_id)
        if run is None or record.terminal:
            return dict(ACK)
        answered: list[_Input] = []
        for key, answer in params.inputResponses.items():
            slot = run.pending.pop(key, None)
            if slot is not None:
                slot.answer = answer
                answered.append(slot)
        try:
            if not run.pending and record.status == "input_required":
                record.input_requests = None
                # Working before the handler wakes: else it may end first (the store's write
                # awaits) and the move to working, refused, is never announced.
                if await self.support.store.update(record, "working", None):
                    await self.announce(record, run)
        finally:
            for slot in answered:
                slot.answered.set()
        return dict(ACK)

    async def _cancel(self, raw: Any, context: RequestContext) -> Any:
        """Stop the task; an empty ack either way (idempotent on a terminal task)."""
        _, record = await self._find(raw, CancelTaskParams, context)
        if not record.terminal:
            stop = McpError(INTERNAL_ERROR, "The task was cancelled by request")
            if await self.support.store.finish(
                record, "cancelled", None, stop, "Cancelled by request."
            ):
                await self.announce(record)
            self.stop(record.task_id)
        return dict(ACK)

    # -- notifications/tasks ----------------------------------------------------------------

    async def announce(self, record: TaskRecord, run: _Run | None = None) -> None:
        """``notifications/tasks`` for ``record``'s new status, to the streams listening for it
        (tasks-extension: servers MAY): the task as ``tasks/get`` answers it. Best effort: a
        listener that misses one still has ``tasks/get``."""
        broadcast = self.broadcast
        if broadcast is None or not self.support.notify:
            return
        requests = {k: slot.request for k, slot in run.pending.items()} if run else None
        params = detailed(record, requests)
        with anyio.CancelScope(shield=True), anyio.move_on_after(_ANNOUNCE):
            try:
                await broadcast(STATUS_NOTIFICATION, params)
            except Exception as exc:  # nobody's request depends on it
                logger.warning("notifications/tasks for %s not sent: %s", record.task_id, exc)

    async def accept_listen(self, requested: Any, context: RequestContext) -> list[str] | None:
        """What of a ``subscriptions/listen`` filter's ``taskIds`` is honoured: the requestor's
        own tasks among them (None: none). -32021 for a client that did not name the extension
        in the request, -32602 for what is not a list of task ids."""
        if not negotiated(context.session.peer.capabilities):
            raise missing_extension("task status notifications (notifications.taskIds)")
        listed = cast("list[object]", requested) if type(requested) is list else None
        task_ids = [t for t in listed if type(t) is str] if listed is not None else None
        if listed is None or task_ids is None or len(task_ids) != len(listed):
            raise McpError(INVALID_PARAMS, "notifications.taskIds must be an array of task ids")
        if len(task_ids) > MAX_LISTENED:
            raise McpError(
                INVALID_PARAMS, f"notifications.taskIds names more than {MAX_LISTENED} tasks"
            )
        owner = self.owner(context)
        found = [
            task_id
            for task_id in dict.fromkeys(task_ids)
            if await self.support.store.get(owner, task_id) is not None
        ]
        return found or None

    @staticmethod
    def listened(accepted: Any, params: Mapping[str, Any]) -> bool:
        """Whether a status notification ``params`` goes to a stream that got ``accepted``."""
        return params.get("taskId") in accepted

    def stop(self, task_id: str) -> None:
        """Stop the handler of ``task_id`` if it runs here."""
        run = self._runs.get(task_id)
        if run is not None and run.job is not None:
            run.job.cancel()
