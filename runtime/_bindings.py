"""One revision's generated bindings, seen from one side of a session.

Wraps a ``mcpbind.generated.vYYYY_MM_DD`` module: which requests and notifications this side
receives and sends, and cached validators for params and results. Nothing here names a method;
it all comes from the generated tables.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from mcpbind import generated
from mcpbind.generated._support import Direction, MethodSpec, NotificationSpec
from pydantic import BaseModel, TypeAdapter

__all__ = ["Bindings", "adapter", "dump", "validator"]


@functools.cache
def adapter(tp: Any) -> TypeAdapter[Any]:
    """A cached ``TypeAdapter`` for a class, alias or union from the generated code."""
    return TypeAdapter(tp)


def validator(tp: Any) -> Callable[[Any], Any]:
    """The fastest way to validate a plain value into ``tp``: a model's own method, else an adapter."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp.model_validate
    return adapter(tp).validate_python


def dump(value: Any) -> Any:
    """A model (or a value holding models) as JSON-ready data, without unset optional fields.

    ``exclude_unset``, not ``exclude_none``: an explicit ``null`` (a nullable field, a JSON value
    in tool arguments or structured content) is data and must reach the peer.
    """
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return value


class Bindings:
    """A revision's tables oriented for one side: what it receives, what it may send."""

    def __init__(self, module: ModuleType, local: Direction) -> None:
        self.module = module
        self.revision: str = module.REVISION
        self.era: str = module.ERA
        self.local = local
        self.remote = (
            Direction.SERVER_TO_CLIENT
            if local is Direction.CLIENT_TO_SERVER
            else Direction.CLIENT_TO_SERVER
        )
        self.methods: Mapping[str, MethodSpec[Any, Any]] = module.METHODS
        self.notifications: Mapping[str, NotificationSpec[Any]] = module.NOTIFICATIONS
        # What the peer sends us travels in the remote direction.
        self.incoming_requests = {
            name: spec for name, spec in self.methods.items() if self.remote in spec.directions
        }
        self.incoming_notifications = {
            name: spec
            for name, spec in self.notifications.items()
            if self.remote in spec.directions
        }

    @classmethod
    def load(cls, revision: str, local: Direction) -> Bindings:
        """Import ``revision``'s bindings; ``LookupError`` if it was not generated."""
        return _load(revision, local)

    def stub(self, sender: Any) -> Any:
        """The generated stub this side calls: ``ClientStub`` for a client, ``ServerStub`` for a server."""
        client_module = self.module.client
        cls = (
            client_module.ClientStub
            if self.local is Direction.CLIENT_TO_SERVER
            else client_module.ServerStub
        )
        return cls(sender)


@functools.cache
def _load(revision: str, local: Direction) -> Bindings:
    return Bindings(generated.load(revision), local)
