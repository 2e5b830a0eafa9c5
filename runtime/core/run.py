"""Running an async main function on the fastest event loop at hand, and telling which runs.

uvloop, where it is installed (it is a dependency on CPython outside Windows), makes each
event-loop pass cheaper; on this machine it raised sequential ``tools/call`` round trips over
stdio by about a third. Without it, plain asyncio.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import sniffio

__all__ = ["on_asyncio", "run"]

T = TypeVar("T")


def run(main: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``anyio.run(main, *args)`` on uvloop when it is installed, else on asyncio."""
    import importlib.util  # here, not at the top: only programs that run a loop need it

    options = {"use_uvloop": True} if importlib.util.find_spec("uvloop") is not None else {}
    return anyio.run(main, *args, backend="asyncio", backend_options=options)


def on_asyncio() -> bool:
    """True inside an asyncio (or uvloop) loop, where the runtime may use asyncio directly
    (the runtime asks ``loop_path.loop_path()`` instead, once per session)."""
    try:
        return sniffio.current_async_library() == "asyncio"
    except sniffio.AsyncLibraryNotFoundError:
        return False
