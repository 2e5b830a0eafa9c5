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
import operator
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
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


class Direction(StrEnum):
    """Who sends a message."""

    CLIENT_TO_SERVER = "client_to_server"
    SERVER_TO_CLIENT = "server_to_client"


ParamsT = TypeVar("ParamsT")
ResultT = TypeVar("ResultT")


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
    """

    revision: str
    method: str
    handler_name: str
    directions: frozenset[Direction]
    request_type: Any
    params_type: Any
    params_required: bool
    result_type: Any
    result_link: str
    capabilities: Mapping[Direction, str] = field(default_factory=dict[Direction, str], hash=False)
    lifecycle: bool = False
    page_items: str | None = None
    task_result_type: Any = None
    task_capability: tuple[str, ...] | None = None


ItemT = TypeVar("ItemT")


@dataclass(frozen=True)
class PaginatedMethodSpec(MethodSpec[ParamsT, ResultT], Generic[ParamsT, ResultT, ItemT]):
    """A list method (``tools/list``): its result pages hold ``ItemT`` items under ``page_items``.

    The item type is a type parameter so that ``client.list_all(methods.TOOLS_LIST)`` is
    ``list[Tool]`` statically; ``item_type`` holds the same class for the runtime.
    """

    item_type: Any = None


@dataclass(frozen=True)
class NotificationSpec(Generic[ParamsT]):
    """One notification method of a revision."""

    revision: str
    method: str
    handler_name: str
    directions: frozenset[Direction]
    notification_type: Any
    params_type: Any
    params_required: bool
    lifecycle: bool = False


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


@dataclass(frozen=True)
class Revision(Generic[ClientStubT, ServerStubT, ImplementationT, ServerCapabilitiesT]):
    """One revision's bindings as a typed value (each revision package's ``BINDINGS``).

    A runtime client bound to it (``Client(transport, bindings=v2025_11_25.BINDINGS)``) is typed
    by it: its stub is this revision's ``ClientStub``, and what the server told about itself is
    this revision's ``Implementation`` and ``ServerCapabilities``, all checked statically.
    """

    name: str
    era: str
    client_stub: Callable[[RequestSender], ClientStubT]
    server_stub: Callable[[RequestSender], ServerStubT]
    implementation: type[ImplementationT]
    server_capabilities: type[ServerCapabilitiesT]
    # The factories are parametrised so that strict checkers know the empty tables' types.
    methods: Mapping[str, MethodSpec[Any, Any]] = field(
        default_factory=dict[str, MethodSpec[Any, Any]], hash=False
    )
    notifications: Mapping[str, NotificationSpec[Any]] = field(
        default_factory=dict[str, NotificationSpec[Any]], hash=False
    )
