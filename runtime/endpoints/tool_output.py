"""``call_tool(..., output=Model)``: a tool's ``structuredContent`` as the caller's own type."""

from __future__ import annotations

from typing import Any, TypeVar

from mcpbind.runtime.core.bindings import validator
from mcpbind.runtime.core.errors import RuntimeFailure
from pydantic import ValidationError

__all__ = ["ToolOutputError", "structured_output"]

T = TypeVar("T")


class ToolOutputError(RuntimeFailure):
    """A tool's result is not the ``output=`` type asked for: it is an error (``isError``), it
    has no ``structuredContent``, or that does not validate. ``result`` is the whole
    ``CallToolResult``."""

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result


def structured_output(name: str, result: Any, output: type[T]) -> T:
    """``result.structuredContent`` validated as ``output`` (a pydantic model, a dataclass, a
    ``TypedDict``... anything pydantic validates); ``ToolOutputError`` if it is not one."""
    wanted = getattr(output, "__name__", repr(output))
    if getattr(result, "isError", False):
        texts = [
            text
            for block in getattr(result, "content", None) or ()
            if type(text := getattr(block, "text", None)) is str
        ]
        why = f": {' '.join(texts)}" if texts else ""
        raise ToolOutputError(f"tool {name!r} failed{why}", result)
    data = getattr(result, "structuredContent", None)
    if data is None:
        raise ToolOutputError(
            f"tool {name!r} returned no structuredContent to read as {wanted} "
            "(a tool declares it with an outputSchema)",
            result,
        )
    target: Any = output  # a class, for the validator cache (mypy cannot tell it hashable)
    try:
        value: T = validator(target)(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or '(root)'}: {error['msg']}"
            for error in exc.errors(include_url=False)
        )
        raise ToolOutputError(
            f"tool {name!r} returned structuredContent that does not validate as {wanted}: {problems}",
            result,
        ) from exc
    return value
