"""Validating a function's arguments and calling it: sync functions in a worker thread.

A validation failure becomes ``ArgumentsError`` whose message names each argument and what was
wrong with it, in words a model can act on (``argument 'a': Input should be a valid integer,
got 'x'``).
"""

from __future__ import annotations

import functools
import inspect
from contextlib import AsyncExitStack
from typing import Any

from mcpbind.runtime.core.bindings import validator
from pydantic import BaseModel, ValidationError

from ._schema import Signature
from ._threads import run_sync

__all__ = ["ArgumentsError", "call", "describe_errors", "validate"]


class ArgumentsError(ValueError):
    """Arguments that do not fit a function's signature; the message says which and why."""


def describe_errors(exc: ValidationError, what: str = "argument") -> str:
    """A validation error as one line per problem: where, what was expected, what was given."""
    lines: list[str] = []
    for error in exc.errors(include_url=False, include_context=False):
        where = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        line = f"{what} {where!r}: {error['msg']}"
        if error["type"] != "missing" and "input" in error:
            shown = repr(error["input"])
            line += f", got {shown if len(shown) <= 80 else shown[:77] + '...'}"
        lines.append(line)
    return "; ".join(lines)


def validate(signature: Signature, arguments: dict[str, Any], what: str) -> dict[str, Any]:
    """``arguments`` validated into keyword arguments of ``signature``'s function."""
    try:
        model = validator(signature.model)(arguments)
    except ValidationError as exc:
        raise ArgumentsError(f"Invalid arguments for {what}: {describe_errors(exc)}") from None
    values = model.__dict__
    return {keyword: values[name] for keyword, name in _keywords(signature.model)}


@functools.cache
def _keywords(model: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    """(keyword, field name) of each of an arguments model's fields, read once per model (a
    model's ``model_fields`` is a class property, rebuilt on every read)."""
    return tuple((field.alias or name, name) for name, field in model.model_fields.items())


async def call(
    signature: Signature, kwargs: dict[str, Any], context: Any, resolved: bool = False
) -> Any:
    """Call the function: awaited if async, else in a worker thread (never blocking the loop);
    its dependencies resolved first unless ``resolved`` (they are in ``kwargs``)."""
    if signature.dependencies is not None and not resolved:
        return await _call_with_dependencies(signature, kwargs, context)
    if signature.context is not None:
        kwargs = {**kwargs, signature.context: context}
    if signature.is_async:
        return await signature.fn(**kwargs)
    result = await run_sync(functools.partial(signature.fn, **kwargs))
    if inspect.isawaitable(result):  # a callable that hides a coroutine (a partial, a wrapper)
        result = await result
    return result


async def _call_with_dependencies(
    signature: Signature, kwargs: dict[str, Any], context: Any
) -> Any:
    """``call`` with the dependencies resolved first and their cleanups run after, seeing
    the call's exception if it raised (or was cancelled)."""
    from ._resolve import close, resolve  # loaded by the first function with a dependency

    assert signature.dependencies is not None
    stack = AsyncExitStack()
    try:
        values = await resolve(signature.dependencies, context, stack)
        result = await call(signature, {**kwargs, **values}, context, resolved=True)
    except BaseException as exc:
        await close(stack, exc)
        raise
    await close(stack, None)
    return result
