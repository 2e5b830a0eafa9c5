"""Completion of prompt arguments and resource template variables (``completion/complete``).

A completion function takes the prefix typed so far (and, if it has a second parameter, the
other arguments already given, from the request's ``context.arguments``) and returns the
candidates; sync or async. Without one, an argument typed with a ``Literal`` or an ``Enum`` is
completed from its values. At most 100 values are sent (the spec's limit), with ``total`` and
``hasMore`` telling the rest.
"""

from __future__ import annotations

import enum
import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Annotated, Any, get_args, get_origin

from ._threads import run_sync

__all__ = ["Completer", "completion_result", "values_of"]

#: The spec's cap on ``completion.values``.
MAX_VALUES = 100

Completer = Callable[..., Any]


def values_of(annotation: Any) -> list[str] | None:
    """The values of a ``Literal`` or ``Enum`` annotation (optional or ``Annotated``), as text."""
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) is typing.Literal:
        return [str(v) for v in get_args(annotation)]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return [str(m.value) for m in annotation]
    args = [a for a in get_args(annotation) if a is not type(None)]
    if len(args) == 1 and args[0] is not annotation:
        return values_of(args[0])
    return None


async def complete(fn: Completer, prefix: str, arguments: dict[str, str]) -> list[str]:
    """Run a completion function (a sync one in a worker thread)."""
    takes = len(inspect.signature(fn).parameters)
    args: tuple[Any, ...] = (prefix, arguments) if takes >= 2 else (prefix,)
    if inspect.iscoroutinefunction(fn):
        found = await fn(*args)
    else:
        found = await run_sync(fn, *args)
    return [str(v) for v in found]


def completion_result(values: Sequence[str]) -> dict[str, Any]:
    """A ``CompleteResult``'s data: the first 100 values, the total, whether there are more."""
    shown = list(values[:MAX_VALUES])
    return {
        "completion": {"values": shown, "total": len(values), "hasMore": len(values) > len(shown)}
    }
