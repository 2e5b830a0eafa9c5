"""``remember``: the one bound every hot-path lookup cache shares."""

from __future__ import annotations

from mcpbind.runtime.core.bounded import remember


def test_a_cache_keeps_values_until_full_then_starts_over() -> None:
    cache: dict[str, int] = {}
    assert remember(cache, "a", 1, 2) == 1
    assert remember(cache, "b", 2, 2) == 2
    assert cache == {"a": 1, "b": 2}
    assert remember(cache, "a", 3, 2) == 3  # full: emptied first, so never above the limit
    assert cache == {"a": 3}
