"""Parsed JSON as the client reads it: an authorization server's answers are checked by shape
before any field is used, and these say what a check found in types the checkers follow."""

from __future__ import annotations

from typing import Any, cast

__all__ = ["json_object", "string_list"]


def json_object(value: object) -> dict[str, Any] | None:
    """``value`` if it is a JSON object (parsed JSON's keys are always strings), else None."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def string_list(value: object) -> list[str] | None:
    """A copy of ``value`` if it is a JSON array of strings, else None."""
    if not isinstance(value, list):
        return None
    items = cast("list[object]", value)
    strings = [item for item in items if isinstance(item, str)]
    return strings if len(strings) == len(items) else None
