"""Python names derived from schema names: handler methods, stub methods, table constants."""

from __future__ import annotations

import keyword
import re


def snake(name: str) -> str:
    """``ListResourceTemplates`` -> ``list_resource_templates``; ``URLElicitation`` -> ``url_elicitation``."""
    words = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", words)
    result = re.sub(r"[^0-9A-Za-z]+", "_", words).strip("_").lower()
    return result + "_" if keyword.iskeyword(result) else result


def stem(definition: str, suffix: str) -> str:
    return (
        definition[: -len(suffix)]
        if definition.endswith(suffix) and definition != suffix
        else definition
    )


def constant(method: str) -> str:
    """``tools/call`` -> ``TOOLS_CALL``; ``notifications/message`` -> ``NOTIFICATIONS_MESSAGE``."""
    return re.sub(r"[^0-9A-Za-z]+", "_", method).strip("_").upper()
