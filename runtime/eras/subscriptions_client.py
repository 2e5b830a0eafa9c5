"""``subscriptions/listen`` on the client: one long-lived request, its notifications as an
async iterator (``basic/patterns/subscriptions.md``).

Every notification of a subscription carries the listen request's JSON-RPC id in
``_meta["io.modelcontextprotocol/subscriptionId"]``, the acknowledgement first. The session
picks request ids itself and tells them through ``REQUEST_SENT`` before the request leaves, so
the client registers each subscription under its id (a retry's new id replacing the old one)
before anything for it can come back.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = [
    "ListenNotification",
    "Subscription",
]

logger = logging.getLogger("mcpbind.runtime")

#: Notifications a subscription may hold before its reader takes them; beyond, they are dropped
#: (and logged) rather than block the session's reading task.
BUFFER: Final = 1024


@dataclass(frozen=True, slots=True)
class ListenNotification:
    """One notification of a subscription: its method and params (typed by the revision's
    notification class when it knows the method, else the raw dict)."""

    method: str
    params: Any


@dataclass(eq=False)
class Subscription:
    """An open ``subscriptions/listen``: iterate it for its notifications.

    ``requested`` is the filter sent, ``acknowledged`` the subset the server agreed to honour
    and ``refused`` the names requested but not acknowledged (for ``resourceSubscriptions``,
    the URIs). Iteration ends when the server ends the subscription gracefully; an abrupt end
    raises the error that ended the request.
    """

    requested: dict[str, Any]
    request_id: int | str | None = None
    acknowledged: dict[str, Any] = field(default_factory=dict[str, Any])
    refused: list[str] = field(default_factory=list[str])
    acknowledged_at_all: bool = False
    ready: anyio.Event = field(default_factory=anyio.Event)
    error: BaseException | None = None
    _send: MemoryObjectSendStream[ListenNotification] | None = None
    _receive: MemoryObjectReceiveStream[ListenNotification] | None = None

    def __post_init__(self) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[ListenNotification](BUFFER)

    def acknowledge(self, params: Mapping[str, Any]) -> None:
        """The server's acknowledgement: record what it agreed to, then let the opener go."""
        agreed: JsonValue = params.get("notifications")
        self.acknowledged = dict(agreed) if isinstance(agreed, Mapping) else {}
        refused: list[str] = []
        wanted: JsonValue
        for key, wanted in self.requested.items():
            got: JsonValue = self.acknowledged.get(key)
            if isinstance(wanted, list):
                have: set[Any] = set(got) if isinstance(got, list) else set()
                refused.extend(f"{key}:{uri}" for uri in wanted if uri not in have)
            elif wanted and not got:
                refused.append(key)
        self.refused = refused
        self.acknowledged_at_all = True
        if refused:
            logger.info("the server did not acknowledge %s of the subscription", refused)
        self.ready.set()

    def deliver(self, notification: ListenNotification) -> None:
        assert self._send is not None
        try:
            self._send.send_nowait(notification)
        except anyio.WouldBlock:
            logger.warning(
                "dropped %s: subscription %r has %d unread notifications",
                notification.method,
                self.request_id,
                BUFFER,
            )
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def end(self, error: BaseException | None) -> None:
        """The listen request finished: ``error`` None for a graceful end."""
        if self.error is None:
            self.error = error
        self.ready.set()
        if self._send is not None:
            self._send.close()

    def close(self) -> None:
        if self._send is not None:
            self._send.close()
        if self._receive is not None:
            self._receive.close()

    def __aiter__(self) -> AsyncIterator[ListenNotification]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[ListenNotification]:
        assert self._receive is not None
        try:
            async for notification in self._receive:
                yield notification
        except anyio.ClosedResourceError:
            return
        if self.error is not None:
            raise self.error
