"""A tool's time limit: the call is cancelled and its answer is an ``isError`` result.

An async tool is cancelled where it waits. A sync tool runs in a worker thread, which cannot be
killed: the result comes back at the limit all the same (``_threads.abandoning``), the thread
runs on to its end, and whatever it returns then is dropped.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from ._results import text_block
from ._threads import abandoning

__all__ = ["check_timeout", "timed"]

logger = logging.getLogger("mcpbind.app")


def check_timeout(timeout: float | None, what: str) -> float | None:
    """``timeout`` if it is None or a positive finite number of seconds; ``ValueError`` else."""
    if timeout is not None and not (timeout > 0 and math.isfinite(timeout)):
        raise ValueError(f"{what}: timeout must be a positive number of seconds, not {timeout!r}")
    return timeout


async def timed(
    run: Callable[[], Awaitable[dict[str, Any]]], timeout: float | None, name: str
) -> dict[str, Any]:
    """``run()``'s result, or after ``timeout`` seconds a result saying the tool timed out."""
    if timeout is None:
        return await run()
    with anyio.move_on_after(timeout), abandoning():
        return await run()
    logger.warning("tool %r timed out after %g s", name, timeout)
    message = f"Tool {name!r} timed out after {timeout:g} seconds"
    return {"content": [text_block(message)], "isError": True}
