"""One revision's generated bindings, seen from one side of a session.

Wraps a ``mcpbind.generated.vYYYY_MM_DD`` module: which requests and notifications this side
receives and sends, and cached validators for params and results. Nothing here names a method;
it all comes from the generated tables.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any, Union, get_args, get_origin

from mcpbind import generated
from mcpbind.generated.support import Direction, MCPModel, MethodSpec, NotificationSpec
from pydantic import BaseModel, Field
from pydantic_core import SchemaValidator

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["Bindings", "adapter", "dump", "dumper", "is_model", "validator"]


@functools.cache
def adapter(tp: Any) -> TypeAdapter[Any]:
    """A cached ``TypeAdapter`` for a class, alias or union from the generated code.

    A union of generated models that all hold a constant of one name with distinct values (a
    method table's ``CallToolResult | InputRequiredResult``, by ``resultType``) is decided by
    that discriminator, never by trying each member in turn.
    """
    # Here, not at the top: a model's validator is its own, so a server whose methods take and
    # give models (every stdio server's) never loads pydantic's ``type_adapter`` module.
    from pydantic import TypeAdapter

    key = _discriminator(tp)
    # Annotated's tuple form: ``tp`` is a value here, which the subscript form may not hold.
    form: Any = tp if key is None else Annotated[(tp, Field(discriminator=key))]
    return TypeAdapter(form)


def _discriminator(tp: Any) -> str | None:
    if get_origin(tp) not in (Union, types.UnionType):
        return None
    members = get_args(tp)
    if not all(isinstance(m, type) and issubclass(m, MCPModel) for m in members):
        return None
    names: list[set[str]] = [set(m.__const_values__) for m in members]
    shared = names[0].intersection(*names[1:])
    for key in sorted(shared):
        values = [m.__const_values__[key] for m in members]
        if len(set(values)) == len(values):
            return str(key)
    return None


@functools.cache
def validator(tp: Any) -> Callable[[Any], Any]:
    """The fastest way to validate a plain value into ``tp``, looked up once per type.

    For a model, its core validator's own method: what ``model_validate`` calls, without the
    Python wrapper around it (it runs for every request's params). Asking for it builds a
    deferred model's validator now. Else an adapter's core validator, likewise: the adapter's
    own ``validate_python`` passes eight keywords on, each call (a seventh of validating a
    small union, as a cross-era result check does per request).
    """
    model: object = tp  # narrowed below, while ``tp`` stays what the adapter takes
    if isinstance(model, type) and issubclass(model, BaseModel):
        validate: Callable[[Any], Any] = model.__pydantic_validator__.validate_python
        return validate
    found = adapter(tp)
    core = found.validator
    return core.validate_python if isinstance(core, SchemaValidator) else found.validate_python


@functools.cache
def is_model(cls: Any) -> bool:
    """Whether ``cls`` is a pydantic model class, looked up once per class (``isinstance``
    against ``BaseModel`` goes through ``ABCMeta`` every time)."""
    return issubclass(cls, BaseModel)


@functools.cache
def dumper(cls: Any) -> Callable[[Any], Any]:
    """``cls``'s core serializer, bound to ``dump``'s arguments: looked up once per class (a
    class attribute of a model goes through pydantic's metaclass every time)."""
    return functools.partial(
        cls.__pydantic_serializer__.to_python, mode="json", by_alias=True, exclude_unset=True
    )


def dump(value: object) -> Any:
    """A model (or a value holding models) as JSON-ready data, without unset optional fields.

    ``exclude_unset``, not ``exclude_none``: an explicit ``null`` (a nullable field, a JSON value
    in tool arguments or structured content) is data and must reach the peer. Calls the model's
    core serializer directly, as ``model_dump`` does after checking its arguments, and tells a
    model by a cached look at its class (an ``isinstance`` against ``BaseModel`` goes through
    ``ABCMeta`` every time).
    """
    cls: Any = type(value)
    if cls is dict or value is None or not is_model(cls):
        return value
    return dumper(cls)(value)


class Bindings:
    """A revision's tables oriented for one side: what it receives, what it may send.

    Built from a revision's module, or by ``Bindings.load`` from its name alone: then the module
    is imported the first time its tables are read. A server's sessions start on the latest
    revision and a handshake moves most of them to another one, so a revision no peer speaks is
    never imported (import time and memory of a whole revision's models).
    """

    def __init__(self, module: ModuleType, local: Direction) -> None:
        self.__dict__["module"] = module
        self._orient(module.REVISION, module.ERA, local)

    def _orient(self, revision: str, era: str, local: Direction) -> None:
        self.revision = revision
        self.era = era
        self.local = local
        self.remote = (
            Direction.SERVER_TO_CLIENT
            if local is Direction.CLIENT_TO_SERVER
            else Direction.CLIENT_TO_SERVER
        )

    @classmethod
    def load(cls, revision: str, local: Direction) -> Bindings:
        """``revision``'s bindings; ``LookupError`` if it was not generated."""
        return _load(revision, local)

    @functools.cached_property
    def module(self) -> ModuleType:
        """The revision's generated package (imported on first use)."""
        return generated.load(self.revision)

    @functools.cached_property
    def methods(self) -> Mapping[str, MethodSpec[Any, Any]]:
        methods: Mapping[str, MethodSpec[Any, Any]] = self.module.METHODS
        return methods

    @functools.cached_property
    def notifications(self) -> Mapping[str, NotificationSpec[Any]]:
        notifications: Mapping[str, NotificationSpec[Any]] = self.module.NOTIFICATIONS
        return notifications

    # What the peer sends us travels in the remote direction.
    @functools.cached_property
    def incoming_requests(self) -> dict[str, MethodSpec[Any, Any]]:
        return {name: spec for name, spec in self.methods.items() if self.remote in spec.directions}

    @functools.cached_property
    def incoming_notifications(self) -> dict[str, NotificationSpec[Any]]:
        return {
            name: spec
            for name, spec in self.notifications.items()
            if self.remote in spec.directions
        }

    def stub(self, sender: Any) -> Any:
        """The generated stub this side calls: ``ClientStub`` for a client; for a server its
        ``ServerStub``, or the ``InputRequestStub`` (a ``ServerStub`` that also asks the client,
        inside an ``InputRequiredResult``) of a revision whose server sends no requests."""
        client_module = self.module.client
        if self.local is Direction.CLIENT_TO_SERVER:
            return client_module.ClientStub(sender)
        return getattr(client_module, "InputRequestStub", client_module.ServerStub)(sender)


@functools.cache
def _load(revision: str, local: Direction) -> Bindings:
    if revision not in generated.ERAS:
        generated.load(revision)  # raises the LookupError that lists the revisions there are
    bindings = Bindings.__new__(Bindings)
    # The class's own helper, from its loader (one module, not a method: functools.cache).
    bindings._orient(revision, generated.ERAS[revision], local)  # pyright: ignore[reportPrivateUsage]
    return bindings
