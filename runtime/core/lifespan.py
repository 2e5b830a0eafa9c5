"""A server's lifespan: one async context manager entered once, however many transports serve it.

``Server(..., lifespan=fn)`` (and ``App``) run ``fn(server)`` around serving: stdio, each HTTP
app's ASGI lifespan, an in-memory transport. Those may overlap (an HTTP app and a legacy SSE app
of one server in one process, many in-memory clients), so the first one in enters the context
manager and owns it, later ones share its value, and the owner exits it once the last of them
has left: the value lives exactly as long as something serves. The exit runs shielded, so it
also runs when serving ends by cancellation (Ctrl-C, SIGTERM), and bounded: after
``shutdown_timeout`` seconds (``DEFAULT_SHUTDOWN_TIMEOUT``) it is cancelled, one warning line
names the server, and shutting down goes on, so an exit part that hangs (a pool that never
drains) cannot keep the process from ending.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final, Generic

import anyio
from typing_extensions import TypeVar

__all__ = [
    "DEFAULT_SHUTDOWN_TIMEOUT",
    "LifespanNotRunning",
    "LifespanStartupError",
    "SharedLifespan",
    "check_shutdown_timeout",
]

logger = logging.getLogger("mcpbind.runtime")

T = TypeVar("T", default=Any)

#: Seconds a lifespan's exit part may take before shutting down goes on without it.
DEFAULT_SHUTDOWN_TIMEOUT: Final = 5.0


def check_shutdown_timeout(timeout: float | None) -> float | None:
    """``timeout`` if it is None (wait as long as the exit part takes) or a positive finite
    number of seconds; ``ValueError`` (``TypeError`` for a non-number) else."""
    if timeout is None:
        return None
    if type(timeout) not in (int, float):
        raise TypeError(f"shutdown_timeout must be a number of seconds, not {timeout!r}")
    if not (timeout > 0 and math.isfinite(timeout)):
        raise ValueError(f"shutdown_timeout must be a positive number of seconds, not {timeout!r}")
    return timeout


class LifespanStartupError(RuntimeError):
    """The lifespan raised while being entered: the server cannot serve. The message is one
    line naming the server and the original exception (kept as ``__cause__``)."""


class LifespanNotRunning(RuntimeError):
    """The lifespan's value was asked for while nothing had entered it."""


class SharedLifespan(Generic[T]):
    """``factory()``'s context manager, entered by the first ``shared()`` and exited after the
    last, its exit given ``shutdown_timeout`` seconds at most (None: no bound); ``label``
    names the server in errors."""

    def __init__(
        self,
        factory: Callable[[], AbstractAsyncContextManager[T]],
        label: str,
        shutdown_timeout: float | None = DEFAULT_SHUTDOWN_TIMEOUT,
    ) -> None:
        self.factory = factory
        self.label = label
        self.shutdown_timeout = check_shutdown_timeout(shutdown_timeout)
        self.running = False
        self._value: Any = None
        self._users = 0
        self._starting: anyio.Event | None = None
        self._idle: anyio.Event | None = None

    @property
    def value(self) -> T:
        """What the context manager yielded; ``LifespanNotRunning`` while it is not entered."""
        if not self.running:
            raise LifespanNotRunning(
                f"the lifespan of {self.label} is not running: serve it (run_stdio, an HTTP app "
                f"under its ASGI lifespan or run(), memory_transport) or enter running()"
            )
        value: T = self._value
        return value

    @asynccontextmanager
    async def shared(self) -> AsyncGenerator[T, None]:
        """The lifespan entered while the block runs (entered here, or shared with whoever
        entered it first); ``LifespanStartupError`` if entering it raised."""
        while self._starting is not None:
            await self._starting.wait()
        if self.running:
            self._users += 1
            try:
                yield self._value
            finally:
                self._users -= 1
                if self._users == 0 and self._idle is not None:
                    self._idle.set()
            return
        starting = self._starting = anyio.Event()
        try:
            manager = self.factory()
            try:
                value = await manager.__aenter__()
            except Exception as exc:
                said = " ".join(str(exc).split())  # one line, whatever the exception says
                raise LifespanStartupError(
                    f"{self.label} failed to start: its lifespan raised "
                    f"{type(exc).__name__}" + (f": {said}" if said else "")
                ) from exc
        finally:
            self._starting = None
            starting.set()
        self._value, self.running = value, True
        try:
            yield value
        finally:
            with anyio.CancelScope(shield=True):
                while self._users:
                    self._idle = anyio.Event()
                    await self._idle.wait()
                self._idle = None
                self._value, self.running = None, False
                await self._exit(manager)

    async def _exit(self, manager: AbstractAsyncContextManager[T]) -> None:
        """Leave ``manager``, cancelled after ``shutdown_timeout`` with one warning line."""
        timeout = self.shutdown_timeout
        with anyio.move_on_after(math.inf if timeout is None else timeout) as scope:
            await manager.__aexit__(None, None, None)
        if scope.cancelled_caught:
            logger.warning(
                "the lifespan of %s did not exit within %g s (shutdown_timeout): shutting down "
                "without it",
                self.label,
                timeout,
            )
