"""Cursor pagination of every list the app answers (``utilities/pagination.md``).

The cursor is opaque to the client: the offset of the next page, base64-encoded. A cursor this
server did not issue is invalid params (-32602), as the spec asks.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import TypeVar

from mcpbind.runtime.core.errors import INVALID_PARAMS, McpError

__all__ = ["page"]

T = TypeVar("T")

_PREFIX = "o:"


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_PREFIX}{offset}".encode()).decode("ascii")


def _offset(cursor: str) -> int:
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
    except (binascii.Error, UnicodeError, ValueError):
        text = ""
    if not text.startswith(_PREFIX) or not text[len(_PREFIX) :].isdigit():
        raise McpError(INVALID_PARAMS, "Invalid params: unknown cursor", {"cursor": cursor})
    return int(text[len(_PREFIX) :])


def page(items: Sequence[T], cursor: str | None, size: int | None) -> tuple[list[T], str | None]:
    """The page of ``items`` that ``cursor`` starts (the first without one), of at most
    ``size`` items (all with None), and the cursor of the next page (None after the last)."""
    start = 0 if cursor is None else _offset(cursor)
    if size is None:
        return list(items[start:]), None
    end = start + size
    return list(items[start:end]), (_cursor(end) if end < len(items) else None)
