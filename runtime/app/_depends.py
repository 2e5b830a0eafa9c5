"""Dependencies: ``Depends(fn)`` parameters, resolved per request and hidden from the schemas.

``db: Annotated[DB, Depends(get_db)]`` (or ``db: DB = Depends(get_db)``) gives a tool, resource
or prompt function what ``get_db`` returns, called for each request: a plain or ``async``
function's return value, or what a (sync or async) generator yields, its code after the
``yield`` running once the call is over, whether it returned, raised or was cancelled.
A dependency's own parameters are a ``Context`` and other dependencies; one used twice in a
request is called once (``use_cache=False`` calls it each time). The plan (what to call, in
which order, with what) is read from the signatures at registration, so a function without
dependencies is called exactly as before. The marker is here, read at every registration; how a
dependency is planned and resolved is in ``_resolve.py``, imported with the first function that
has one (an app without dependencies never loads it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Annotated, Any, TypeVar, get_args, get_origin, overload

__all__ = ["Dependency", "Depends", "dependency_of"]

T = TypeVar("T")


class Dependency:
    """The marker ``Depends`` returns: what to call, and whether to reuse its value within one
    request (compared by identity; read-only by convention)."""

    # A plain class: a dataclass compiles its methods when defined, about 2.5 M instructions
    # of every app's start-up (4.4 M frozen); nothing compares or copies these by field.
    __slots__ = ("fn", "use_cache")

    def __init__(self, fn: Callable[..., Any], use_cache: bool = True) -> None:
        self.fn = fn
        self.use_cache = use_cache


@overload
def Depends(fn: Callable[..., AsyncIterator[T]], *, use_cache: bool = True) -> T: ...
@overload
def Depends(fn: Callable[..., Coroutine[Any, Any, T]], *, use_cache: bool = True) -> T: ...
@overload
def Depends(fn: Callable[..., Iterator[T]], *, use_cache: bool = True) -> T: ...
@overload
def Depends(fn: Callable[..., T], *, use_cache: bool = True) -> T: ...
def Depends(fn: Callable[..., Any], *, use_cache: bool = True) -> Any:
    """A parameter given by calling ``fn`` for each request, not by the client: in
    ``Annotated[DB, Depends(get_db)]`` or as the default ``db: DB = Depends(get_db)``.

    ``fn`` may be a function, an ``async`` one, or a generator (sync or async) that yields the
    value once and cleans up after the call. It may take a ``Context`` and other dependencies.
    Typed as what ``fn`` gives, so ``db: DB = Depends(get_db)`` is checked against ``get_db``.
    """
    if not callable(fn):
        raise TypeError(f"Depends() takes a function, not {type(fn).__name__}")
    return Dependency(fn, use_cache)


def dependency_of(annotation: Any, default: Any) -> Dependency | None:
    """The ``Depends`` marker of a parameter: in its ``Annotated`` metadata, or its default."""
    if isinstance(default, Dependency):
        return default
    if get_origin(annotation) is Annotated:
        for extra in get_args(annotation)[1:]:
            if isinstance(extra, Dependency):
                return extra
    return None
