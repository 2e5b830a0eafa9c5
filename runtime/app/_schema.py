"""JSON schemas from plain typed functions: the arguments model and the structured output type.

The rules follow what users of the official Python SDK's ``MCPServer`` expect, so the same
function advertises the same schemas on both: an arguments model named ``<fn>Arguments`` built
from the signature (``Annotated[..., Field(...)]`` honoured, unannotated parameters taken as
strings, the context parameter left out), and an output type from the return annotation:
models, TypedDicts, dataclasses and ``dict[str, T]`` as they are, anything else wrapped as
``{"result": ...}`` in a model named ``<fn>Output``. Content blocks, ``bytes`` and
``CallToolResult`` returns have no output schema (they are what the model reads, not data).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import typing
from collections.abc import Callable
from types import GenericAlias, NoneType, UnionType
from typing import TYPE_CHECKING, Annotated, Any, NotRequired, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model
from typing_extensions import TypedDict, is_typeddict

from ._depends import dependency_of

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from ._resolve import Plan

__all__ = [
    "CONTENT_TYPE_NAMES",
    "Signature",
    "context_parameter",
    "is_content_class",
    "is_context",
    "output_type",
    "read_signature",
]

#: The generated content block classes (any revision), by class name.
CONTENT_TYPE_NAMES = frozenset(
    {"TextContent", "ImageContent", "AudioContent", "ResourceLink", "EmbeddedResource"}
)


class _Arguments(BaseModel):
    """Base of the generated arguments models; any value type a signature names is allowed."""

    model_config = ConfigDict(arbitrary_types_allowed=True)


class _DeferredArguments(_Arguments):
    """Base of the arguments models whose validator and schema cannot fail to build (plain
    scalar parameters): built when the function is first called or listed, so a function
    never used costs its class only (not its pydantic validator and serializer)."""

    model_config = ConfigDict(defer_build=True)


#: Parameter types whose arguments model builds whatever the function (``_DeferredArguments``).
_PLAIN: frozenset[Any] = frozenset({str, int, float, bool, NoneType})


def _is_plain(annotation: Any, default: Any) -> bool:
    """Whether a parameter is a plain scalar (or an optional one) with a plain default: its
    model's build cannot fail, so deferring it cannot move an error from registration."""
    if default is not inspect.Parameter.empty and type(default) not in _PLAIN:
        return False
    if get_origin(annotation) in (typing.Union, UnionType):
        return all(arg in _PLAIN for arg in get_args(annotation))
    return annotation in _PLAIN


def is_content_class(tp: Any) -> bool:
    """Whether ``tp`` is one of the generated content block classes (of any revision)."""
    return (
        isinstance(tp, type)
        and issubclass(tp, BaseModel)
        and tp.__name__ in CONTENT_TYPE_NAMES
        and tp.__module__.startswith("mcpbind.generated.")
    )


def _is_generated(tp: Any, name: str) -> bool:
    return (
        isinstance(tp, type)
        and tp.__name__ == name
        and tp.__module__.startswith("mcpbind.generated.")
    )


def _classes(annotation: Any) -> tuple[Any, ...]:
    """The classes an annotation names: itself, a union's members, a generic's origin
    (``Context[AppState]`` is a ``Context``), ``Annotated``'s type."""
    origin = get_origin(annotation)
    if origin is None:
        return (annotation,)
    if origin is Annotated:
        return _classes(get_args(annotation)[0])
    if origin in (typing.Union, UnionType):
        return tuple(c for arg in get_args(annotation) for c in _classes(arg))
    return (origin,)


def is_context(annotation: Any, context_cls: type) -> bool:
    """Whether ``annotation`` is ``context_cls`` (generic or not, or ``| None``)."""
    return any(isinstance(c, type) and issubclass(c, context_cls) for c in _classes(annotation))


def context_parameter(hints: dict[str, Any], context_cls: type) -> str | None:
    """The parameter annotated with ``context_cls`` (or ``context_cls | None``), if any."""
    for name, annotation in hints.items():
        if name != "return" and is_context(annotation, context_cls):
            return name
    return None


class Signature:
    """What a function's signature says: its arguments model, the name of its context
    parameter, whether it is a coroutine function, the parameters in order (the client's),
    and its dependencies (``Depends``; None when it has none, the plain call's cue)."""

    # A plain class: a dataclass compiles its methods when defined, about 2.5 M instructions
    # of every app's start-up (4.4 M frozen); nothing compares or copies these by field.
    __slots__ = (
        "_make",
        "_model",
        "context",
        "dependencies",
        "fn",
        "hints",
        "is_async",
        "parameters",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        model: type[BaseModel] | Callable[[], type[BaseModel]],
        context: str | None,
        is_async: bool,
        parameters: dict[str, inspect.Parameter],
        hints: dict[str, Any],
        dependencies: dict[str, Plan] | None = None,
    ) -> None:
        self.fn = fn
        # A class, or (plain scalar fields, which cannot fail to make) the call that makes it.
        self._model: type[BaseModel] | None = model if isinstance(model, type) else None
        self._make: Callable[[], type[BaseModel]] | None = (
            None if isinstance(model, type) else model
        )
        self.context = context
        self.is_async = is_async
        self.parameters = parameters
        self.hints = hints
        self.dependencies = dependencies

    @property
    def model(self) -> type[BaseModel]:
        """The arguments model: made by the first call or listing when deferred."""
        if self._model is None:
            assert self._make is not None
            self._model, self._make = self._make(), None
        return self._model

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.model.model_json_schema(by_alias=True)


def read_signature(fn: Callable[..., Any], context_cls: type, model_name: str) -> Signature:
    """Read ``fn``'s signature into an arguments model; ``TypeError`` for one that cannot be
    served (positional-only or ``*args`` parameters, names starting with ``_``)."""
    target = fn
    while isinstance(target, functools.partial):
        target = target.func
    if not (inspect.isfunction(target) or inspect.ismethod(target)) and callable(target):
        call = getattr(target, "__call__", None)  # noqa: B004 - an instance's own __call__
        target = call if inspect.ismethod(call) else target
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except NameError as exc:
        raise TypeError(f"cannot resolve the type annotations of {model_name!r}: {exc}") from exc
    signature = inspect.signature(fn)
    context = context_parameter(hints, context_cls)
    fields: dict[str, Any] = {}
    parameters: dict[str, inspect.Parameter] = {}
    dependencies: dict[str, Plan] = {}
    plain = True
    for name, param in signature.parameters.items():
        if name == context:
            continue
        marker = dependency_of(hints.get(name), param.default)
        if marker is not None:
            # Planning and resolving are loaded by the first function with a dependency.
            from ._resolve import plan

            try:
                dependencies[name] = plan(marker, lambda tp: is_context(tp, context_cls))
            except TypeError as exc:
                raise TypeError(f"{model_name}: parameter {name!r}: {exc}") from None
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise TypeError(f"{model_name}: parameter {name!r} must be a plain named parameter")
        if name.startswith("_"):
            raise TypeError(f"{model_name}: parameter {name!r} must not start with '_'")
        parameters[name] = param
        annotation = hints.get(name, Any)
        metadata: list[Any] = []
        if name not in hints:
            metadata.append(WithJsonSchema({"title": name, "type": "string"}))
        # Unannotated: ``Any`` with a string schema, which builds as surely as ``str``.
        plain = plain and _is_plain(hints.get(name, str), param.default)
        field_name, kwargs = name, {}
        shadows = hasattr(BaseModel, name)
        # A name pydantic may warn of or refuse is made at once, so its message stays here.
        plain = plain and not (shadows or name.startswith("model_"))
        if shadows and callable(getattr(BaseModel, name)):
            # A name pydantic's BaseModel uses (``json``, ``copy``...): kept on the wire by alias.
            field_name, kwargs = f"field_{name}", {"alias": name}
        typed = Annotated[(annotation, *metadata, Field(**kwargs))]  # type: ignore[valid-type]
        if param.default is inspect.Parameter.empty:
            fields[field_name] = typed
        else:
            fields[field_name] = (typed, param.default)
    model: type[BaseModel] | Callable[[], type[BaseModel]]
    if plain:
        # Plain scalars under plain names: neither the class nor its validator can fail to
        # build, so both wait for the first call or listing (no registration error moves).
        model = functools.partial(
            create_model, f"{model_name}Arguments", __base__=_DeferredArguments, **fields
        )
    else:
        model = create_model(f"{model_name}Arguments", __base__=_Arguments, **fields)
    return Signature(
        fn,
        model,
        context,
        inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(target),
        parameters,
        hints,
        dependencies or None,
    )


def _returns_content(tp: Any) -> bool:
    """Whether a return annotation is content (blocks, bytes), bare or in a list or union."""
    origin = get_origin(tp)
    if origin is Annotated:
        return _returns_content(get_args(tp)[0])
    if origin in (list, tuple, typing.Union, UnionType) or origin is typing.Sequence:
        return any(_returns_content(arg) for arg in get_args(tp) if arg is not NoneType)
    if origin is not None:
        return False
    return tp is bytes or is_content_class(tp)


class OutputType:
    """The structured output of a tool: the type results are validated against, its JSON
    schema (an object), and whether results are wrapped as ``{"result": ...}``.

    ``plain`` is the return annotation when it is a bare ``str``, ``int`` or ``bool`` (not
    ``float``, whose adapter makes an ``int`` a float): a value of exactly that type is
    ``{"result": value}`` as validated and dumped, so such a type's adapter and schema
    (``make``: its ``<fn>Output`` model) are built by the first listing or the first value of
    another type, not by the first call.
    """

    __slots__ = ("_adapter", "_make", "_schema", "plain", "wrap")

    def __init__(
        self,
        adapter: TypeAdapter[Any] | None,
        schema: dict[str, Any] | None,
        wrap: bool,
        plain: type | None = None,
        make: Callable[[], tuple[TypeAdapter[Any], dict[str, Any]]] | None = None,
    ) -> None:
        self._adapter = adapter
        self._schema = schema
        self._make = make
        self.wrap = wrap
        self.plain = plain

    def _built(self) -> tuple[TypeAdapter[Any], dict[str, Any]]:
        if self._adapter is None or self._schema is None:
            assert self._make is not None
            self._adapter, self._schema = self._make()
        return self._adapter, self._schema

    @property
    def adapter(self) -> TypeAdapter[Any]:
        return self._built()[0]

    @property
    def schema(self) -> dict[str, Any]:
        return self._built()[1]


def _inline_root(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema whose root is a bare ``$ref`` (a recursive model) with that definition inlined,
    since ``outputSchema`` must be an object schema at its root; ``$defs`` is kept for the
    references inside it."""
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return schema
    definition = schema["$defs"][ref.removeprefix("#/$defs/")]
    return {**definition, **{k: v for k, v in schema.items() if k != "$ref"}}


def _from_class(cls: type) -> Any:
    """A plain annotated class as a model of its annotated attributes (defaults kept)."""
    hints = typing.get_type_hints(cls)
    if not hints:
        return None
    fields: dict[str, Any] = {}
    for name, hint in hints.items():
        if name.startswith("_"):
            continue
        default = getattr(cls, name, inspect.Parameter.empty)
        fields[name] = hint if default is inspect.Parameter.empty else (hint, default)
    return create_model(cls.__name__, __config__=ConfigDict(from_attributes=True), **fields)


def _readable_typeddict(cls: Any) -> Any:
    """A ``typing.TypedDict`` as an equivalent ``typing_extensions`` one, which pydantic reads
    on Python 3.11 too (it refuses the former there); others unchanged."""
    if sys.version_info >= (3, 12) or type(cls).__module__ != "typing":
        return cls
    hints = typing.get_type_hints(cls, include_extras=True)
    items = {
        key: hint if key in cls.__required_keys__ else NotRequired[hint]
        for key, hint in hints.items()
    }
    rebuilt = typing.cast(Callable[[str, dict[str, Any]], Any], TypedDict)(cls.__name__, items)
    rebuilt.__doc__ = cls.__doc__
    rebuilt.__module__ = cls.__module__
    return rebuilt


def output_type(fn_name: str, annotation: Any) -> OutputType | None:
    """The structured output ``annotation`` (a return annotation) gives, or None: none when
    it is missing, content, a ``CallToolResult``, or a type pydantic cannot describe."""
    if annotation is inspect.Parameter.empty or _returns_content(annotation):
        return None
    bare = get_args(annotation)[0] if get_origin(annotation) is Annotated else annotation
    if _is_generated(bare, "CallToolResult"):
        return None
    model: Any
    wrap = False
    origin = get_origin(bare)
    if isinstance(bare, type) and not isinstance(bare, GenericAlias) and origin is None:
        cls: type[Any] = bare
        if is_typeddict(cls):
            model = _readable_typeddict(cls)
        elif issubclass(cls, BaseModel) or dataclasses.is_dataclass(cls):
            model = cls
        elif cls in (str, int, float, bool, NoneType):
            model, wrap = None, True
        else:
            model = _from_class(cls)
            if model is None:
                return None
    elif bare is None:
        model, wrap = None, True
    elif origin is dict and get_args(bare)[:1] == (str,):
        model = Annotated[bare, Field(title=f"{fn_name}DictOutput")]
    else:
        model, wrap = None, True
    if wrap:
        if annotation is str or annotation is int or annotation is bool:
            # Always described: its adapter and schema built when first needed (``plain``).
            return OutputType(
                None, None, True, annotation, functools.partial(_wrapped, fn_name, annotation)
            )
        model = create_model(f"{fn_name}Output", result=annotation)
    try:
        adapter, schema = _described(model)
    except Exception:  # pydantic cannot describe it: plain content, like the SDK
        return None
    return OutputType(adapter, schema, wrap)


def _wrapped(fn_name: str, annotation: Any) -> tuple[TypeAdapter[Any], dict[str, Any]]:
    """The adapter and schema of ``{"result": annotation}``, a model named ``<fn>Output``."""
    return _described(create_model(f"{fn_name}Output", result=annotation))


def _described(model: Any) -> tuple[TypeAdapter[Any], dict[str, Any]]:
    """An output type's adapter and its serialization schema, inlined at the root."""
    # Here, not at the top, as in ``core.bindings``: an app whose tools return plain scalars
    # never loads pydantic's ``type_adapter`` module.
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(model)
    return adapter, _inline_root(adapter.json_schema(mode="serialization"))
