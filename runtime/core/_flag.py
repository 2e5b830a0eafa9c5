"""A one-shot event whose ``anyio.Event`` is made only once somebody waits for it.

``anyio.Event()`` costs about 9 us on asyncio (a backend lookup per construction), and a
session of one stateless HTTP request made three of them that nobody ever waited for.
"""

from __future__ import annotations

import anyio

__all__ = ["Flag"]


class Flag:
    """Set once; ``wait()`` returns once it is set. The event behind it exists only if needed."""

    __slots__ = ("_event", "_set")

    def __init__(self) -> None:
        self._set = False
        self._event: anyio.Event | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True
        if self._event is not None:
            self._event.set()

    @property
    def event(self) -> anyio.Event:
        """The ``anyio.Event`` behind the flag (set already if the flag is), made on first use."""
        if self._event is None:
            self._event = anyio.Event()
            if self._set:
                self._event.set()
        return self._event

    async def wait(self) -> None:
        if not self._set:
            await self.event.wait()
