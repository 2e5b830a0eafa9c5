"""What the tasks feature asks of the endpoint it serves, as protocols.

The endpoints open the tasks feature (``enable_tasks``, ``call_tool_as_task``); tasks never
import them back, and name only these protocols, which ``Client`` and ``Server`` satisfy.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, TypeVar, runtime_checkable

from mcpbind.generated.support import MethodSpec, NotificationSpec
from mcpbind.runtime.core.session import RequestContext, Session
from mcpbind.runtime.eras.lifecycle import ClientSide

__all__ = ["Registry", "TaskClient"]

P = TypeVar("P")
R = TypeVar("R")


@runtime_checkable
class Registry(Protocol):
    """Where the tasks feature registers the handlers it adds (an ``Endpoint``)."""

    def add_handler(
        self, spec: MethodSpec[P, R], handler: Callable[[P, RequestContext], Awaitable[R]]
    ) -> None: ...

    def add_notification_handler(
        self, spec: NotificationSpec[P], handler: Callable[[P, Session], Awaitable[None]]
    ) -> None: ...


class TaskClient(ClientSide, Protocol):
    """What calling a tool as a task reads of the ``Client`` it goes through: a client side of
    a lifecycle (the stateless one sends the call, and reads that), its session and lifecycle,
    and its ``subscriptions/listen`` (for the extension's status notifications)."""

    @property
    def session(self) -> Session: ...

    @property
    def lifecycle(self) -> object: ...

    def listen(
        self, *, task_ids: Sequence[str] = (), meta: Mapping[str, Any] | None = None
    ) -> AbstractAsyncContextManager[AsyncIterable[Any]]: ...
