"""The intermediate representation: what a revision defines, independent of how it is emitted.

Everything downstream (the emitters, ``mcpbind diff``) reads only these frozen dataclasses; nothing
here knows about Python source text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

JSONSchema = dict[str, Any]


class Direction(StrEnum):
    """Who sends a message. Values are stable: they appear in generated tables and diff output."""

    CLIENT_TO_SERVER = "client_to_server"
    SERVER_TO_CLIENT = "server_to_client"


class Era(StrEnum):
    """How a session starts: an ``initialize`` handshake, or stateless per-request negotiation."""

    HANDSHAKE = "handshake"
    STATELESS = "stateless"


class ResultLink(StrEnum):
    """How the result of a request method was found in the schema."""

    RESPONSE_ENVELOPE = "response-envelope"
    NAMING = "naming"
    EMPTY_RESULT = "empty-result"


@dataclass(frozen=True)
class Definition:
    """One schema definition: named by the schema, or hoisted from an inline object and named by place.

    ``schema`` is normalised: every nested object with properties is a ``$ref`` to its own
    definition, and every ``$ref`` reads ``#/$defs/<name>``.
    """

    name: str
    class_name: str
    schema: JSONSchema
    origin: str | None = None

    @property
    def hoisted(self) -> bool:
        return self.origin is not None


@dataclass(frozen=True)
class Method:
    """A request method: who may send it and which definitions carry its request, params and result.

    ``input_request``: the server never sends it as a request of its own, only inside a result
    (2026-07-28's ``InputRequest`` union, embedded in an ``InputRequiredResult``); the client
    still answers it, so its direction stays server-to-client.

    ``task_result``: the result definition a task-augmented call returns (``CreateTaskResult``),
    for a request whose params take a ``task``; ``task_capability`` the path, in the receiver's
    capabilities, that says it accepts the task form (``("tasks", "requests", "tools", "call")``).
    """

    method: str
    directions: tuple[Direction, ...]
    request: str
    params: str | None
    params_required: bool
    results: tuple[str, ...]
    result_link: ResultLink
    capabilities: tuple[tuple[Direction, str], ...]
    lifecycle: bool = False
    page_items: str | None = None
    input_request: bool = False
    task_result: str | None = None
    task_capability: tuple[str, ...] | None = None

    def capability_for(self, direction: Direction) -> str | None:
        """The receiver's capability (dotted path) that must be advertised for this direction."""
        for entry_direction, capability in self.capabilities:
            if entry_direction == direction:
                return capability
        return None


@dataclass(frozen=True)
class Notification:
    """A notification method and who may send it."""

    method: str
    directions: tuple[Direction, ...]
    notification: str
    params: str | None
    params_required: bool
    lifecycle: bool = False


@dataclass(frozen=True)
class CapabilityFlag:
    """One capability a side can advertise, as a path into its capabilities object."""

    side: str
    path: tuple[str, ...]
    kind: str

    @property
    def dotted(self) -> str:
        return ".".join(self.path)


@dataclass(frozen=True)
class FixupRecord:
    """A named schema-defect patch that was applied to this revision."""

    name: str
    pointer: str
    reason: str


@dataclass(frozen=True)
class RevisionIR:
    """A whole revision: its definitions, method table, capabilities and era.

    ``meta_keys``: the ``_meta`` keys it reserves for the protocol (see ``ir.meta``), sorted.
    """

    revision: str
    era: Era
    sha256: str
    spec_commit: str | None
    source: str
    definitions: dict[str, Definition]
    methods: tuple[Method, ...]
    notifications: tuple[Notification, ...]
    capabilities: tuple[CapabilityFlag, ...]
    fixups: tuple[FixupRecord, ...] = field(default=())
    meta_keys: tuple[str, ...] = field(default=())

    def method(self, name: str) -> Method:
        for entry in self.methods:
            if entry.method == name:
                return entry
        raise KeyError(name)

    def notification(self, name: str) -> Notification:
        for entry in self.notifications:
            if entry.method == name:
                return entry
        raise KeyError(name)

    def bundled_schema(self) -> JSONSchema:
        """A self-contained JSON Schema document holding every (normalised) definition."""
        return {"$defs": {name: d.schema for name, d in self.definitions.items()}}
