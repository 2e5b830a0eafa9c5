"""``JsonValue``: what a JSON document parses to, for annotating values read off the wire.

An annotation only: assigning a parsed value (typed ``Any``) to a ``JsonValue`` local costs
nothing at run time, and a ``type(value) is dict`` check then narrows it to ``dict[str, Any]``
for the type checkers (narrowing a bare ``Any`` gives ``dict[Unknown, Unknown]``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["JsonValue"]

JsonValue = dict[str, Any] | list[Any] | str | int | float | bool | None
