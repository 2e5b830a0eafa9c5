"""A plain-text result fitted to a revision without its classes or the shaping machinery.

Apart from ``_shaping`` so that a server whose tools return text never imports that module
(its content conversion and pruning): loaded with the first result that needs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = ["shape_plain"]


def shape_plain(
    data: dict[str, Any], members: tuple[str, ...], cache: dict[str, Any]
) -> dict[str, Any] | None:
    """``_shaping.shape_result`` of a result whose content is plain text blocks (the same in every
    revision), from the members its class declares (``MethodSpec.result_members``: read
    without creating the class and its content classes); None for any other content."""
    content: JsonValue = data.get("content")
    if type(content) is not list:
        return None
    block: JsonValue
    for block in content:
        if type(block) is not dict or len(block) != 2 or block.get("type") != "text":
            return None
    out: dict[str, Any] = {}
    for key in members:
        if key in data:
            out[key] = data[key]
        elif key in cache:
            out[key] = cache[key]
        elif key == "resultType":
            out[key] = "complete"
    return out
