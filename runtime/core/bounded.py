"""Small lookup caches bounded the simplest way: when full, all is dropped.

The hot paths keep what a peer repeats request after request (header sets, ``Accept`` values,
``clientInfo``, request heads, owners): the few a client uses stay hit, and a peer varying them
without end only ever misses, never grows memory.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["remember"]

K = TypeVar("K")
V = TypeVar("V")


def remember(cache: dict[K, V], key: K, value: V, limit: int) -> V:
    """Keep ``value`` under ``key`` in ``cache`` (emptied first if it holds ``limit``); return it."""
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value
    return value
