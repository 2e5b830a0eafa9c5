"""Type guards for values parsed from JSON (a schema, a pins file, a diff config).

``json.loads`` gives ``Any``, and ``is_object(node)`` narrows that to a dict of unknown
keys and values, which a strict checker then follows everywhere. A parsed JSON object's keys are
strings and its values JSON, so these guards narrow to exactly that, checked at run time as
``isinstance`` is.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypeIs

__all__ = ["JSONArray", "JSONObject", "is_array", "is_object"]

JSONObject = dict[str, Any]
JSONArray = list[Any]


def is_object(value: object) -> TypeIs[JSONObject]:
    """A JSON object (a ``dict``; parsed JSON has only string keys)."""
    return isinstance(value, dict)


def is_array(value: object) -> TypeIs[JSONArray]:
    """A JSON array (a ``list``)."""
    return isinstance(value, list)
