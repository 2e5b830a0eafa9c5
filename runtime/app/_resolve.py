"""How a ``Depends`` parameter is got: its plan, read from the signatures at registration, and
its value resolved per request (each function called once unless it opted out of the cache,
generators' cleanups run after the call). Apart from ``_depends`` (the marker, read at every
registration) so that an app without dependencies never loads it.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Coroutine
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from types import TracebackType
from typing import Any, Literal

import anyio

from ._depends import Dependency, dependency_of
from ._threads import run_sync

__all__ = ["Plan", "close", "plan", "resolve"]


Kind = Literal["async", "sync", "async_gen", "gen"]


class Plan:
    """How to get one dependency's value: its function, how to call it, the parameter that
    takes the ``Context``, and the dependencies its other parameters need (compared by
    identity; read-only by convention)."""

    __slots__ = ("context", "fn", "kind", "needs", "use_cache")

    def __init__(
        self,
        fn: Callable[..., Any],
        kind: Kind,
        use_cache: bool,
        context: str | None,
        needs: tuple[tuple[str, Plan], ...],
    ) -> None:
        self.fn = fn
        self.kind = kind
        self.use_cache = use_cache
        self.context = context
        self.needs = needs


def _target(fn: Callable[..., Any]) -> Callable[..., Any]:
    """What to read a dependency's annotations and kind from: a partial's function, an
    object's ``__call__``."""
    target = fn
    while isinstance(target, functools.partial):
        target = target.func
    if not (inspect.isfunction(target) or inspect.ismethod(target)):
        call = getattr(target, "__call__", None)  # noqa: B004 - an instance's own __call__
        target = call if inspect.ismethod(call) else target
    return target


def _kind(fn: Callable[..., Any]) -> Kind:
    target = _target(fn)
    if inspect.isasyncgenfunction(target):
        return "async_gen"
    if inspect.isgeneratorfunction(target):
        return "gen"
    if inspect.iscoroutinefunction(target):
        return "async"
    return "sync"


def plan(
    marker: Dependency,
    is_context: Callable[[Any], bool],
    _seen: tuple[Callable[..., Any], ...] = (),
) -> Plan:
    """The ``Plan`` of ``marker``'s function; ``TypeError`` for a parameter that is neither a
    ``Context``, a dependency nor defaulted, and for a dependency that needs itself."""
    fn = marker.fn
    name = getattr(fn, "__name__", repr(fn))
    if fn in _seen:
        raise TypeError(f"dependency {name!r} depends on itself")
    try:
        hints = typing.get_type_hints(_target(fn), include_extras=True)
    except (NameError, TypeError) as exc:
        raise TypeError(
            f"cannot resolve the type annotations of dependency {name!r}: {exc}"
        ) from exc
    context = None
    needs: list[tuple[str, Plan]] = []
    for param_name, param in inspect.signature(fn).parameters.items():
        annotation = hints.get(param_name)
        inner = dependency_of(annotation, param.default)
        if inner is not None:
            needs.append((param_name, plan(inner, is_context, (*_seen, fn))))
        elif annotation is not None and is_context(annotation):
            context = param_name
        elif param.default is inspect.Parameter.empty and param.kind not in (
            param.VAR_POSITIONAL,
            param.VAR_KEYWORD,
        ):
            raise TypeError(
                f"dependency {name!r}: parameter {param_name!r} must be a Context, a "
                f"Depends(...) or have a default"
            )
    return Plan(fn, _kind(fn), marker.use_cache, context, tuple(needs))


async def resolve(plans: dict[str, Plan], context: Any, stack: AsyncExitStack) -> dict[str, Any]:
    """The values of ``plans`` for one request (each function called once unless it opted
    out of the cache); generators' cleanups are pushed on ``stack``."""
    cache: dict[Callable[..., Any], Any] = {}
    return {name: await _value(each, context, stack, cache) for name, each in plans.items()}


async def _value(
    each: Plan, context: Any, stack: AsyncExitStack, cache: dict[Callable[..., Any], Any]
) -> Any:
    if each.use_cache and each.fn in cache:
        return cache[each.fn]
    kwargs = {name: await _value(need, context, stack, cache) for name, need in each.needs}
    if each.context is not None:
        kwargs[each.context] = context
    fn = each.fn
    if each.kind == "async":
        value = await fn(**kwargs)
    elif each.kind == "sync":
        value = await run_sync(functools.partial(fn, **kwargs))
        if inspect.isawaitable(value):  # a callable hiding a coroutine (an async __call__)
            value = await value
    elif each.kind == "async_gen":
        manager = asynccontextmanager(fn)(**kwargs)
        value = await manager.__aenter__()
        stack.push_async_exit(_never_suppressing(manager.__aexit__))
    else:
        sync_manager = contextmanager(fn)(**kwargs)
        value = await run_sync(sync_manager.__enter__)
        stack.push_async_exit(_never_suppressing(_in_thread(sync_manager.__exit__)))
    if each.use_cache:
        cache[each.fn] = value
    return value


Exit = Callable[
    [type[BaseException] | None, BaseException | None, TracebackType | None],
    Coroutine[Any, Any, Any],
]


def _in_thread(exit_: Callable[..., Any]) -> Exit:
    async def run(*exc_info: Any) -> Any:
        return await run_sync(exit_, *exc_info)

    return run


def _never_suppressing(exit_: Exit) -> Exit:
    """A generator's cleanup that cannot swallow the call's exception (one that catches it
    without re-raising would otherwise turn a failure into an empty result)."""

    async def run(*exc_info: Any) -> bool:
        await exit_(*exc_info)
        return False

    return run


async def close(stack: AsyncExitStack, exc: BaseException | None) -> None:
    """Run the cleanups, shielded: they run in full also when the request was cancelled."""
    with anyio.CancelScope(shield=True):
        if exc is None:
            await stack.aclose()
        else:
            await stack.__aexit__(type(exc), exc, exc.__traceback__)
