"""Which parts of two pydantic core schemas validate alike, and which dumps validate again.

Read node by node, conservatively: a node type or key outside ``_KEYS`` is not understood, and
nothing that holds it is shown equal, round-tripping or checkable alone (the callers then
validate in full). Names, titles, refs and metadata do not count; function validators compare
equal only when they are the same of pydantic's bound checks or the generated ``integer`` check.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Final, TypeGuard

from mcpbind.generated import support

__all__ = [
    "CONFIG",
    "Defs",
    "Schema",
    "checkable",
    "choice",
    "field_round_trips",
    "is_mapping",
    "is_sequence",
    "keys_of",
    "round_trips",
    "same",
    "understood",
]

Schema = dict[str, Any]
_MISSING: Final = object()


def is_mapping(value: Any) -> TypeGuard[dict[str, Any]]:
    """A core schema node, or a JSON object: a plain dict (typed for the checkers)."""
    return type(value) is dict


def is_sequence(value: Any) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    return isinstance(value, list | tuple)


#: The keys each node type may have; a node with any other key (or of another type) is not
#: understood, so nothing holding it is proven.
_KEYS: Final[Mapping[str, frozenset[str]]] = {
    name: frozenset({"type", "ref", "metadata", *keys})
    for name, keys in {
        "model": {"cls", "config", "custom_init", "root_model", "schema"},
        "model-fields": {"computed_fields", "fields", "model_name"},
        "model-field": {
            "schema",
            "serialization_alias",
            "serialization_exclude_if",
            "validation_alias",
        },
        "default": {"default", "schema"},
        "nullable": {"schema"},
        "definition-ref": {"schema_ref"},
        "str": {"strict", "min_length", "max_length", "pattern"},
        "int": {"strict", "ge", "le", "gt", "lt"},
        "float": {"strict", "allow_inf_nan", "ge", "le", "gt", "lt"},
        "bool": {"strict"},
        "none": set[str](),
        "any": set[str](),
        "literal": {"expected"},
        "list": {"items_schema", "min_length", "max_length"},
        "dict": {"keys_schema", "values_schema"},
        "union": {"choices", "custom_error_type", "mode"},
        "tagged-union": {"choices", "discriminator", "from_attributes", "strict"},
        "function-after": {"function", "schema"},
    }.items()
}
#: Keys that do not change what validates: names, refs, what is written and how.
_NOT_VALIDATION: Final = frozenset(
    {"ref", "metadata", "cls", "model_name", "serialization_alias", "serialization_exclude_if"}
)
#: Model config keys understood (anything else, ``strict`` say, is not); ``title`` and the
#: serializer's own do not change what validates.
CONFIG: Final = frozenset(
    {
        "extra_fields_behavior",
        "serialize_by_alias",
        "title",
        "validate_by_alias",
        "validate_by_name",
    }
)
_CONFIG_NOT_VALIDATION: Final = frozenset({"title", "serialize_by_alias"})
#: Function validators that only check (or, ``_integral``, turn ``1.0`` into the ``1`` it equals):
#: what they accept they return in a form that validates again.
_PYDANTIC_CHECKS: Final = "pydantic._internal._validators"
_CHECKS: Final = frozenset({"_integral"})


def _known_check(function: Any) -> bool:
    inner = function.func if isinstance(function, functools.partial) else function
    module = getattr(inner, "__module__", None)
    name = getattr(inner, "__name__", None)
    if module == _PYDANTIC_CHECKS and isinstance(name, str) and name.endswith("_validator"):
        return True
    return module == support.__name__ and name in _CHECKS and inner is getattr(support, name, None)


def _same_function(a: Any, b: Any) -> bool:
    if isinstance(a, functools.partial) and isinstance(b, functools.partial):
        return a.func is b.func and a.args == b.args and a.keywords == b.keywords
    return a is b


class Defs:
    """The ``ref`` -> node table of one core schema (its ``definitions`` and inline refs)."""

    def __init__(self, schema: Schema) -> None:
        self.table: dict[str, Schema] = {}
        self._collect(schema)

    def _collect(self, node: Any) -> None:
        if is_mapping(node):
            ref = node.get("ref")
            if isinstance(node.get("type"), str) and isinstance(ref, str):
                self.table.setdefault(ref, node)
            for key, value in node.items():
                if key != "metadata":
                    self._collect(value)
        elif is_sequence(node):
            for item in node:
                self._collect(item)

    def resolve(self, node: Schema) -> Schema | None:
        while node.get("type") in ("definition-ref", "definitions"):
            if node["type"] == "definitions":
                node = node["schema"]
                continue
            found = self.table.get(node["schema_ref"])
            if found is None:
                return None
            node = found
        return node


def understood(node: Schema) -> bool:
    allowed = _KEYS.get(node.get("type"))  # type: ignore[arg-type]
    return allowed is not None and node.keys() <= allowed


def same(a: Any, b: Any, da: Defs, db: Defs, assumed: set[tuple[int, int]]) -> bool:
    """Whether nodes ``a`` and ``b`` validate exactly the same values (False: not shown)."""
    ra, rb = da.resolve(a), db.resolve(b)
    if ra is None or rb is None:
        return False
    pair = (id(ra), id(rb))
    if pair in assumed:  # a recursive type met again: equal if the rest is (all is conjunction)
        return True
    assumed.add(pair)
    kind = ra["type"]
    if kind != rb["type"] or not understood(ra) or not understood(rb):
        return False
    for key in (ra.keys() | rb.keys()) - _NOT_VALIDATION:
        va, vb = ra.get(key, _MISSING), rb.get(key, _MISSING)
        if va is _MISSING or vb is _MISSING:
            return False
        if not _same_value(kind, key, va, vb, da, db, assumed):
            return False
    return True


def _same_value(
    kind: str, key: str, va: Any, vb: Any, da: Defs, db: Defs, assumed: set[tuple[int, int]]
) -> bool:
    if key == "config":
        if not (is_mapping(va) and is_mapping(vb)):
            return False
        if not (va.keys() <= CONFIG and vb.keys() <= CONFIG):
            return False
        keys = (va.keys() | vb.keys()) - _CONFIG_NOT_VALIDATION
        return all(va.get(k, _MISSING) == vb.get(k, _MISSING) for k in keys)
    if key == "function":
        return (
            va.get("type") == vb.get("type") == "no-info"
            and _known_check(va["function"])
            and _same_function(va["function"], vb["function"])
        )
    if key == "fields" or (kind == "tagged-union" and key == "choices"):
        return va.keys() == vb.keys() and all(
            same(va[name], vb[name], da, db, assumed) for name in va
        )
    if kind == "union" and key == "choices":
        return len(va) == len(vb) and all(
            same(choice(x), choice(y), da, db, assumed) for x, y in zip(va, vb, strict=True)
        )
    if is_mapping(va) and isinstance(va.get("type"), str):
        return is_mapping(vb) and same(va, vb, da, db, assumed)
    if key == "computed_fields":
        return bool(va == vb == [])
    if key in ("default", "expected"):
        # ``1 == True``: the values and their types must match.
        return bool(_typed(va) == _typed(vb))
    return bool(va == vb) and type(va) is type(vb)


def _typed(value: Any) -> Any:
    if is_sequence(value):
        return [_typed(item) for item in value]
    return (value.__class__, value)


def choice(node: Any) -> Any:
    """A union's choice: a node, or a (node, label) pair."""
    if isinstance(node, tuple):
        labelled: tuple[Any, ...] = node  # pyright: ignore[reportUnknownVariableType]
        return labelled[0]
    return node


def keys_of(config: Mapping[str, Any], name: str, field: Schema) -> tuple[str, frozenset[str]]:
    """The key a field is written under (``by_alias=True``) and the keys it is read from."""
    written = field.get("serialization_alias") or name
    alias = field.get("validation_alias")
    read: set[str] = set()
    if config.get("validate_by_alias", True):
        read.add(alias if isinstance(alias, str) else name)
    if config.get("validate_by_name", False):
        read.add(name)
    if alias is not None and not isinstance(alias, str):
        read = set()  # AliasPath / AliasChoices: not followed here
    return written, frozenset(read)


def round_trips(node: Any, defs: Defs, seen: set[int]) -> bool:
    """Whether every value ``node`` validates is dumped (``mode="json"``, by alias, unset fields
    left out) as data that ``node`` validates again."""
    found = defs.resolve(node)
    if found is None or not understood(found):
        return False
    if id(found) in seen:
        return True
    seen.add(id(found))
    kind = found["type"]
    match kind:
        case "str" | "int" | "bool" | "none" | "any":
            return True
        case "float":
            # NaN and infinity are written as null, which a float refuses.
            return found.get("allow_inf_nan") is False
        case "literal":
            return all(type(v) in (str, int, bool, type(None)) for v in found["expected"])
        case "default" | "nullable":
            return round_trips(found["schema"], defs, seen)
        case "list":
            return round_trips(found["items_schema"], defs, seen)
        case "dict":
            keys = defs.resolve(found["keys_schema"])
            return (
                keys is not None
                and keys == {"type": "str"}
                and round_trips(found["values_schema"], defs, seen)
            )
        case "union":
            return all(round_trips(choice(c), defs, seen) for c in found["choices"])
        case "tagged-union":
            return _tagged_round_trips(found, defs, seen)
        case "function-after":
            function = found["function"]
            return (
                function.get("type") == "no-info"
                and _known_check(function["function"])
                and round_trips(found["schema"], defs, seen)
            )
        case "model":
            return _model_round_trips(found, defs, seen)
        case _:
            return False


def _tagged_round_trips(node: Schema, defs: Defs, seen: set[int]) -> bool:
    tag = node["discriminator"]
    if not isinstance(tag, str):
        return False
    for value, choice in node["choices"].items():
        model = defs.resolve(choice)
        if model is None or model.get("type") != "model" or not round_trips(model, defs, seen):
            return False
        fields = model["schema"]["fields"]
        config = model.get("config", {})
        # The tag must always be written: a required literal of exactly this value.
        holder = [
            f
            for n, f in fields.items()
            if tag in keys_of(config, n, f)[1] and keys_of(config, n, f)[0] == tag
        ]
        if len(holder) != 1:
            return False
        literal = defs.resolve(holder[0]["schema"])
        if literal is None or literal.get("type") != "literal" or literal["expected"] != [value]:
            return False
    return True


def _model_round_trips(node: Schema, defs: Defs, seen: set[int]) -> bool:
    config = node.get("config", {})
    if node.get("custom_init") or node.get("root_model") or not config.keys() <= CONFIG:
        return False
    inner = defs.resolve(node["schema"])
    if inner is None or inner.get("type") != "model-fields" or not understood(inner):
        return False
    if inner.get("computed_fields"):
        return False
    return all(
        field_round_trips(config, name, field, defs, seen)
        for name, field in inner["fields"].items()
    )


def field_round_trips(
    config: Mapping[str, Any], name: str, field: Schema, defs: Defs, seen: set[int]
) -> bool:
    if not understood(field):
        return False
    written, read = keys_of(config, name, field)
    if written not in read:
        return False
    schema = defs.resolve(field["schema"])
    # A field left out of the dump (``exclude_if``) must be one that may be absent.
    if "serialization_exclude_if" in field and (schema is None or schema["type"] != "default"):
        return False
    return round_trips(field["schema"], defs, seen)


def checkable(node: Any, defs: Defs, seen: set[int]) -> bool:
    """Whether ``node`` validates the same alone as inside its model: nothing in it reads other
    fields or the model's config (only understood nodes, no function but the known checks)."""
    found = defs.resolve(node)
    if found is None or not understood(found):
        return False
    if id(found) in seen:
        return True
    seen.add(id(found))
    if found["type"] == "model":
        return found.get("config", {}).keys() <= CONFIG and not found.get("custom_init")
    if found["type"] == "function-after":
        function = found["function"]
        if function.get("type") != "no-info" or not _known_check(function["function"]):
            return False
    return all(checkable(child, defs, seen) for child in _children(found))


def _children(node: Schema) -> list[Any]:
    children: list[Any] = []
    for key in ("schema", "items_schema", "keys_schema", "values_schema"):
        if key in node:
            children.append(node[key])
    choices = node.get("choices")
    if is_mapping(choices):
        children.extend(choices.values())
    elif is_sequence(choices):
        children.extend(choice(c) for c in choices)
    return children
