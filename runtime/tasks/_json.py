"""Parsed JSON as the tasks extension reads it: a peer's capabilities, results and
notification params are checked by shape before any field is used."""

from __future__ import annotations

from typing import Any, cast

__all__ = ["json_object"]


def json_object(value: object) -> dict[str, Any] | None:
    """``value`` if its type is exactly ``dict`` (what a JSON object parses to), else None."""
    return cast("dict[str, Any]", value) if type(value) is dict else None
