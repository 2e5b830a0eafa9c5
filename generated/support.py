# The source of ``mcpbind.generated.support``. ``mcpbind generate`` copies this file byte for byte
# from ``codegen/emit/support.py`` to ``generated/support.py``: edit it here (where ruff, mypy and
# pyright check it), then regenerate; an edit of the copy is drift (``mcpbind generate --check``).
"""What every generated revision shares: the model base class and the method-table types.

Import it as ``mcpbind.generated.support``. The runtime (``mcpbind.runtime``) implements
``RequestSender`` and reads ``MethodSpec`` tables; nothing here depends on the runtime, so the
bindings can be used on their own.
"""

from __future__ import annotations

import functools
import importlib
import operator
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import FunctionType
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    Final,
    Generic,
    Literal,
    Protocol,
    TypedDict,
    TypeVar,
    cast,
    get_args,
    get_origin,
)

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
)
from pydantic_core import PydanticCustomError, PydanticUndefined, core_schema

__all__ = [
    "ABSENT_IF_NONE",
    "Direction",
    "JSONInteger",
    "JSONNumber",
    "MCPModel",
    "MethodSpec",
    "NotificationSpec",
    "PaginatedMethodSpec",
    "ProgressCallback",
    "RequestOptions",
    "RequestSender",
    "Revision",
    "deferred",
    "define_on_use",
]


def _integral(value: float) -> int:
    if not value.is_integer():
        raise PydanticCustomError(
            "int_from_float", "Input should be a valid integer, got a number with a fractional part"
        )
    return int(value)


class _Integer:
    """JSON Schema's ``integer``: a JSON number with a zero fractional part (draft-07 and 2020-12
    alike), so ``1e20`` and ``1.0`` are integers and become the ``int`` they equal; ``true`` and
    ``"1"`` are not. Any size: JSON sets no bound, and Python's ``int`` has none."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.union_schema(
            [
                core_schema.int_schema(strict=True),
                core_schema.no_info_after_validator_function(
                    _integral, core_schema.float_schema(strict=True, allow_inf_nan=False)
                ),
            ],
            mode="left_to_right",
            custom_error_type="int_type",
        )


class _Number:
    """JSON Schema's ``number``: an integer stays an ``int`` (``50`` is not re-sent as ``50.0``),
    a fraction a ``float``; no bool, no string, and no infinity or NaN (JSON has neither)."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.union_schema(
            [
                core_schema.int_schema(strict=True),
                core_schema.float_schema(strict=True, allow_inf_nan=False),
            ],
            mode="left_to_right",
            custom_error_type="float_type",
        )


JSONInteger = Annotated[int, _Integer()]
JSONNumber = Annotated[int | float, _Number()]

#: The marker of an optional field whose schema refuses ``null``: ``None`` there means "absent",
#: so it is never written, whether it was left unset or given explicitly (``description=None``).
#: A C-level predicate: it runs for every such field a dump writes.
ABSENT_IF_NONE: Final[Any] = Field(exclude_if=functools.partial(operator.is_, None))


class MCPModel(BaseModel):
    """Base of every generated model.

    Open (``extra="allow"``): the protocol allows extension everywhere, so unknown fields survive
    a round trip. Serialised by alias (``_meta``, ``$schema``). Parsing reads aliases only, so
    a message's own unknown key ``meta`` stays an extra and is never taken for ``_meta``; the
    keyword constructor also accepts the Python names (``Result(meta=...)``).

    Constant fields (``jsonrpc``, ``method``, ``type``) are required when parsing, as the schema
    says (a default would let a union member, or an inline object, claim a message that lacks
    them, and would add the key on the way back), and default to their one value when a model is
    built by keyword, so ``model_dump(exclude_unset=True)`` writes a complete message while
    leaving out every optional field nobody set. ``None`` in an optional field the schema does
    not let be ``null`` is never written (see ``ABSENT_IF_NONE``); a ``null`` the schema allows
    (a JSON value, ``Error.data``) is data and is kept. That also covers an unknown key spelled
    like a field's Python name (``meta``): pydantic counts it in ``model_fields_set``, but the
    field holds ``None`` and is not written, while the key itself stays an extra.
    """

    model_config = ConfigDict(
        extra="allow",
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
        defer_build=True,
    )
    if TYPE_CHECKING:
        # Declared for type checkers only: pydantic evaluates every annotation of a model's
        # bases again for each subclass, and these (strings, under the future import) cost a
        # compile each time, for every generated class.
        __const_values__: ClassVar[dict[str, Any]]
        __aliases__: ClassVar[dict[str, str]]
    __const_values__ = {}
    __aliases__ = {}

    def __init__(self, /, **data: Any) -> None:
        aliases = self.__aliases__
        if aliases:
            for name, alias in aliases.items():
                if name in data and alias not in data:
                    data[alias] = data.pop(name)
        for key, value in self.__const_values__.items():
            data.setdefault(key, value)
        # What ``BaseModel.__init__`` does, without passing the keywords on once more (a fifth
        # of building a small model); no generated model has a validator that could replace
        # the instance, which is all the rest of it checks.
        self.__pydantic_validator__.validate_python(data, self_instance=self)

    # Not a "custom init" to pydantic: parsing (``model_validate``) must not call it, or the
    # translations above would apply to messages too.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        inherited: dict[str, Any] = {}
        for base in reversed(cls.__mro__[1:]):
            inherited.update(getattr(base, "__const_values__", {}))
        consts: dict[str, Any] = {}
        for name, info in cls.__pydantic_fields__.items():
            args = get_args(info.annotation)
            if get_origin(info.annotation) is not Literal or len(args) != 1:
                continue
            key = info.alias or name
            if info.default == args[0] or (
                info.default is PydanticUndefined and inherited.get(key) == args[0]
            ):
                # Required to the validator; the class keeps its default for type checkers and
                # the constructor fills it in. The class is not built yet (``defer_build``).
                info.default = PydanticUndefined
                consts[key] = args[0]
        cls.__const_values__ = consts
        cls.__aliases__ = {
            name: info.alias
            for name, info in cls.__pydantic_fields__.items()
            if info.alias is not None and info.alias != name
        }


class _OnUse:
    """The definitions of a generated ``types`` module, each run the first time it is asked for.

    ``table`` maps each name to the module beside ``types`` that holds the function defining it
    (``_<name>``) and the names its definition reads (bases, field types, an alias's members), in
    the module's order, which puts whatever a definition evaluates before it. Asking for a name
    runs what it reaches and is not defined yet, in that order, into the module's namespace: a
    function runs with that namespace as its globals, so a class is created as if written there
    (its ``__module__`` is ``types``); it is created once (``is`` and ``isinstance`` hold), and
    pydantic finds every class a field names there, quoted or not. A definitions module is
    imported when one of its functions is first needed: the code of the others is never loaded.
    """

    def __init__(
        self, namespace: dict[str, Any], table: dict[str, tuple[str, tuple[str, ...]]]
    ) -> None:
        self.namespace = namespace
        self.table = table
        self.order = {name: index for index, name in enumerate(table)}
        self.package = namespace["__name__"].rpartition(".")[0]
        # Two threads asking for one class must get one class.
        self.lock = threading.RLock()

    def get(self, name: str) -> Any:
        if name not in self.table:
            module = self.namespace["__name__"]
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        with self.lock:
            if name not in self.namespace:
                self.define(name)
        return self.namespace[name]

    def define(self, name: str) -> None:
        reached: set[str] = set()
        pending = [name]
        while pending:
            current = pending.pop()
            if current not in reached and current not in self.namespace:
                reached.add(current)
                pending.extend(self.table[current][1])
        for current in sorted(reached, key=self.order.__getitem__):
            module = importlib.import_module(f"{self.package}.{self.table[current][0]}")
            definer = getattr(module, f"_{current}")
            value = FunctionType(definer.__code__, self.namespace, definer.__name__)()
            if isinstance(value, type) and value.__name__ == current:
                # Created in a function, it would be ``_Tool.<locals>.Tool``: pickle looks a
                # class up by its qualified name in its module, where ``Tool`` is.
                value.__qualname__ = current
            self.namespace[current] = value

    def names(self) -> list[str]:
        return sorted({*self.namespace, *self.table})


def define_on_use(
    namespace: dict[str, Any], table: dict[str, tuple[str, tuple[str, ...]]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A generated ``types`` module's ``__getattr__`` and ``__dir__`` (PEP 562): each class is
    defined when it is first read (``types.Tool``, ``from types import Tool``, pickle), with what
    it needs. Importing a revision then costs a fraction of defining its ~170 classes;
    ``types.pyi`` holds the same classes, as module-level definitions, for type checkers."""
    on_use = _OnUse(namespace, table)
    return on_use.get, on_use.names


class Direction(StrEnum):
    """Who sends a message."""

    CLIENT_TO_SERVER = "client_to_server"
    SERVER_TO_CLIENT = "server_to_client"


ParamsT = TypeVar("ParamsT")
ResultT = TypeVar("ResultT")
ClassT = TypeVar("ClassT", bound=type)
T = TypeVar("T")
_MISSING: Final = object()


class _Deferred:
    """A class a table names now and looks up when it is first read (see :func:`deferred`)."""

    __slots__ = ("resolve",)

    def __init__(self, resolve: Callable[[], Any]) -> None:
        self.resolve = resolve


def deferred(resolve: Callable[[], T]) -> T:
    """``resolve()``, called the first time the spec field given it is read: ``deferred(lambda:
    types.Tool)`` for a field of ``MethodSpec``, ``PaginatedMethodSpec``, ``NotificationSpec``
    or ``Revision`` that holds a class.

    A generated method table names every class of its revision; looked up at once, they would
    all be created when the table is imported (``types`` defines a class on first use). Typed as
    what ``resolve`` returns, which is what reading the field gives.
    """
    return cast(T, _Deferred(resolve))


class _DeferredField:
    """A spec's class field, on its class: consulted only while an instance holds a
    :func:`deferred` value for it, which it resolves into the instance's own attribute. Not a data
    descriptor, so from then on the instance's attribute answers, as fast as any other."""

    def __init__(self, name: str, default: Any) -> None:
        self.name = name
        self.default = default

    def __get__(self, instance: object | None, owner: type) -> Any:
        if instance is None:
            if self.default is _MISSING:
                raise AttributeError(self.name)
            return self.default
        pending: _Deferred = instance.__dict__["__deferred__"][self.name]
        value = instance.__dict__[self.name] = pending.resolve()
        return value


def _deferrable(*names: str) -> Callable[[ClassT], ClassT]:
    """Let the dataclass's fields ``names`` be given with :func:`deferred` (``_take_deferred``)."""

    def install(cls: ClassT) -> ClassT:
        for name in names:
            setattr(cls, name, _DeferredField(name, cls.__dict__.get(name, _MISSING)))
        return cls

    return install


def _take_deferred(instance: object) -> None:
    """Move each :func:`deferred` value out of ``instance``'s attributes, for its class's field to
    resolve on first read (a frozen dataclass's ``__post_init__``)."""
    attributes = instance.__dict__
    deferred = {k: v for k, v in attributes.items() if isinstance(v, _Deferred)}
    if deferred:
        for name in deferred:
            del attributes[name]
        attributes["__deferred__"] = deferred


def _resolved_state(instance: object) -> dict[str, Any]:
    """The state to pickle: every deferred field resolved, no callables left."""
    for name in instance.__dict__.get("__deferred__", {}):
        getattr(instance, name)
    return {k: v for k, v in instance.__dict__.items() if k != "__deferred__"}


@_deferrable("request_type", "params_type", "result_type", "task_result_type")
@dataclass(frozen=True)
class MethodSpec(Generic[ParamsT, ResultT]):
    """One request method of a revision: its classes, directions and guarding capabilities.

    The ``*_type`` fields hold a model class, a type alias or a union: validate with a pydantic
    ``TypeAdapter``. ``params_type`` is None for a method whose messages carry no params.
    ``capabilities`` maps a direction to the receiver's capability (a dotted path) that must be
    advertised before the method may be sent that way. ``lifecycle`` marks the handshake's own
    messages, which a runtime's lifecycle sends, never its user. ``page_items`` names the list
    property of a paginated result (``"tools"``), None for a method that does not paginate.

    A request that may be task-augmented (its params take a ``task``) names what it returns then,
    ``task_result_type`` (that revision's ``CreateTaskResult``), and ``task_capability``, the path
    in the receiver's capabilities that says it accepts the task form
    (``("tasks", "requests", "tools", "call")``); both are None for any other request. A runtime
    validates the result of a request whose params carry ``task`` against ``task_result_type``.

    ``result_members`` are the members of the result's complete class on the wire (aliases:
    ``_meta``), in the order its serializer writes them: what a runtime shaping a result for this
    revision can read without creating the class; None where the schema does not list them
    flat (a result made of ``allOf`` parts).

    A ``*_type`` given as :func:`deferred` is looked up the first time it is read (the generated
    tables do so, and a method nobody calls never creates its classes); the hash leaves the
    classes out, so hashing a spec creates none.
    """

    revision: str
    method: str
    handler_name: str
    directions: frozenset[Direction]
    request_type: Any = field(hash=False)
    params_type: Any = field(hash=False)
    params_required: bool
    result_type: Any = field(hash=False)
    result_link: str
    capabilities: Mapping[Direction, str] = field(default_factory=dict[Direction, str], hash=False)
    lifecycle: bool = False
    page_items: str | None = None
    task_result_type: Any = field(default=None, hash=False)
    task_capability: tuple[str, ...] | None = None
    result_members: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        _take_deferred(self)

    def __getstate__(self) -> dict[str, Any]:
        return _resolved_state(self)


ItemT = TypeVar("ItemT")


@_deferrable("item_type")
@dataclass(frozen=True)
class PaginatedMethodSpec(MethodSpec[ParamsT, ResultT], Generic[ParamsT, ResultT, ItemT]):
    """A list method (``tools/list``): its result pages hold ``ItemT`` items under ``page_items``.

    The item type is a type parameter so that ``client.list_all(methods.TOOLS_LIST)`` is
    ``list[Tool]`` statically; ``item_type`` holds the same class for the runtime.
    """

    item_type: Any = field(default=None, hash=False)


@_deferrable("notification_type", "params_type")
@dataclass(frozen=True)
class NotificationSpec(Generic[ParamsT]):
    """One notification method of a revision (its ``*_type`` fields as ``MethodSpec``'s)."""

    revision: str
    method: str
    handler_name: str
    directions: frozenset[Direction]
    notification_type: Any = field(hash=False)
    params_type: Any = field(hash=False)
    params_required: bool
    lifecycle: bool = False

    def __post_init__(self) -> None:
        _take_deferred(self)

    def __getstate__(self) -> dict[str, Any]:
        return _resolved_state(self)


ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]


class RequestOptions(TypedDict, total=False):
    """Per-request options a stub passes through to the runtime untouched."""

    timeout: float | None
    progress: ProgressCallback | None


class RequestSender(Protocol):
    """The two calls a generated stub needs; ``mcpbind.runtime`` sessions implement them."""

    async def send_request(
        self,
        spec: MethodSpec[Any, ResultT],
        params: MCPModel | None,
        options: RequestOptions | None = None,
    ) -> ResultT: ...

    async def send_notification(
        self, spec: NotificationSpec[Any], params: MCPModel | None
    ) -> None: ...


ClientStubT = TypeVar("ClientStubT")
ServerStubT = TypeVar("ServerStubT")
ImplementationT = TypeVar("ImplementationT")
ServerCapabilitiesT = TypeVar("ServerCapabilitiesT")


@_deferrable("client_stub", "server_stub", "implementation", "server_capabilities")
@dataclass(frozen=True)
class Revision(Generic[ClientStubT, ServerStubT, ImplementationT, ServerCapabilitiesT]):
    """One revision's bindings as a typed value (each revision package's ``BINDINGS``).

    A runtime client bound to it (``Client(transport, bindings=v2025_11_25.BINDINGS)``) is typed
    by it: its stub is this revision's ``ClientStub``, and what the server told about itself is
    this revision's ``Implementation`` and ``ServerCapabilities``, all checked statically.
    """

    name: str
    era: str
    # Each of these four may be given with ``deferred`` (as ``MethodSpec``'s classes): the stubs'
    # module is imported when a client first binds to them. Not hashed: a hash would resolve them.
    client_stub: Callable[[RequestSender], ClientStubT] = field(hash=False)
    server_stub: Callable[[RequestSender], ServerStubT] = field(hash=False)
    implementation: type[ImplementationT] = field(hash=False)
    server_capabilities: type[ServerCapabilitiesT] = field(hash=False)
    # The factories are parametrised so that strict checkers know the empty tables' types.
    methods: Mapping[str, MethodSpec[Any, Any]] = field(
        default_factory=dict[str, MethodSpec[Any, Any]], hash=False
    )
    notifications: Mapping[str, NotificationSpec[Any]] = field(
        default_factory=dict[str, NotificationSpec[Any]], hash=False
    )

    def __post_init__(self) -> None:
        _take_deferred(self)

    def __getstate__(self) -> dict[str, Any]:
        return _resolved_state(self)
