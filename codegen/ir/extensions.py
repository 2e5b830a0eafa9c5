"""Protocol extensions whose methods no pinned ``schema.json`` holds.

The 2026-07-28 tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663) has its own
``schema.ts``, outside the protocol's schema, and the runtime speaks it (``mcpbind.runtime.tasks``).
Its method names are stated here, the one place where the generator names methods by hand, so
that the generated names module (``mcpbind.generated.names``) holds every method the runtime
speaks. Two of them (``tasks/get``, ``tasks/cancel``) are also 2025-11-25 methods.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EXTENSIONS", "Extension"]


@dataclass(frozen=True)
class Extension:
    """An extension's identifier (its key in ``capabilities.extensions``) and its methods."""

    identifier: str
    label: str
    requests: tuple[str, ...]
    notifications: tuple[str, ...]


EXTENSIONS: tuple[Extension, ...] = (
    Extension(
        identifier="io.modelcontextprotocol/tasks",
        label="tasks extension",
        requests=("tasks/get", "tasks/update", "tasks/cancel"),
        notifications=("notifications/tasks",),
    ),
)
