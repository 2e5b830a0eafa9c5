"""A dict that tells its owner when it changes, so what is derived from it can be cached.

``Endpoint.extra_capabilities`` is public and mutable (the app layer and users write it), yet
the capabilities derived from it are needed on every stateless-era request: rather than
fingerprinting it each time, every change (at any depth: nested dicts are watched too)
invalidates the cache.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .jsonvalue import JsonValue

__all__ = ["WatchedDict", "plain"]


def _nothing() -> None:
    return None


def plain(value: JsonValue) -> Any:
    """A deep copy of ``value`` with every dict (watched or not) a plain ``dict``."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


class WatchedDict(dict[str, Any]):
    """A ``dict`` calling ``on_change`` after every change to it or to a dict nested in it
    (a dict stored in it is stored as a ``WatchedDict`` too)."""

    _on_change: Callable[[], None] = _nothing

    def __init__(
        self,
        items: Mapping[str, Any] | Iterable[tuple[str, Any]] = (),
        on_change: Callable[[], None] = _nothing,
    ) -> None:
        self._on_change = on_change
        super().__init__()
        for key, value in dict(items).items():
            super().__setitem__(key, self._watch(value))

    def _watch(self, value: JsonValue) -> Any:
        if isinstance(value, dict) and not (
            isinstance(value, WatchedDict) and value._on_change is self._on_change
        ):
            return WatchedDict(value, self._on_change)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, self._watch(value))
        self._on_change()

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self._on_change()

    def __ior__(self, other: Any) -> WatchedDict:  # type: ignore[override,misc]
        self.update(other)
        return self

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            super().__setitem__(key, self._watch(value))
        self._on_change()

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key in self:
            return self[key]
        self[key] = default
        return self[key]

    def pop(self, key: str, *default: Any) -> Any:
        found = key in self
        value = super().pop(key, *default)
        if found:
            self._on_change()
        return value

    def popitem(self) -> tuple[str, Any]:
        item = super().popitem()
        self._on_change()
        return item

    def clear(self) -> None:
        super().clear()
        self._on_change()

    def __reduce__(self) -> Any:
        """Copies and pickles are plain dicts: the owner's callback is not theirs."""
        return (dict, (plain(self),))
