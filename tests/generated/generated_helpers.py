"""Shared helpers of the generated-model tests: IRs, generated modules, adapters and strategies.

Everything is cached per process: the IR of a revision is built once, and so is the pydantic
``TypeAdapter`` and the hypothesis strategy of each definition. The IR is needed at collection time
(tests are parametrised by definition), so these are plain functions and not fixtures.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import hypothesis_jsonschema._canonicalise as hjs_canonicalise
import jsonschema
import hypothesis_jsonschema._from_schema as hjs_from_schema
import hypothesis_jsonschema._resolve as hjs_resolve
import mcpbind.generated
from hypothesis import strategies as st
from hypothesis.internal.conjecture import utils as conjecture_utils
from hypothesis_jsonschema import from_schema
from hypothesis_jsonschema._encode import encode_canonical_json
from mcpbind.codegen.ir import Definition, RevisionIR, build_ir
from mcpbind.codegen.ir.fixups import apply_fixups
from mcpbind.codegen.ir.refs import definitions_of, ref_name
from mcpbind.codegen.load import load_revision
from pydantic import TypeAdapter

REVISIONS: tuple[str, ...] = mcpbind.generated.REVISIONS
JSON = Any


@functools.cache
def ir_of(revision: str) -> RevisionIR:
    return build_ir(load_revision(revision))


def types_of(revision: str) -> ModuleType:
    module: ModuleType = mcpbind.generated.load(revision).types
    return module


def class_of(revision: str, name: str) -> Any:
    """The generated class (model or type alias) of definition ``name``."""
    return getattr(types_of(revision), ir_of(revision).definitions[name].class_name)


@functools.cache
def adapter_of(revision: str, name: str) -> TypeAdapter[Any]:
    return TypeAdapter(class_of(revision, name))


def definitions(revision: str) -> dict[str, Definition]:
    return ir_of(revision).definitions


def canonical(value: JSON) -> str:
    """JSON text that ignores key order but not value types: ``50`` and ``50.0`` differ."""
    return json.dumps(value, sort_keys=True)


# --- The schema itself, as a JSON Schema validator --------------------------------------------------


@functools.cache
def schema_document(revision: str) -> dict[str, Any]:
    """The revision's ``schema.json`` with the generator's named fix-ups applied: what its models
    were generated from (the fix-ups only say what ``schema.ts`` says and the file does not)."""
    document = copy.deepcopy(load_revision(revision).document)
    apply_fixups(definitions_of(document))
    return document


def schema_pointer(revision: str, name: str) -> str:
    """Where definition ``name`` is in the document: its own entry, or the inline object it was
    hoisted from; in the document's own spelling (``definitions`` in draft-07, ``$defs`` after)."""
    definition = definitions(revision)[name]
    pointer = definition.origin or f"#/$defs/{name}"
    if "$defs" not in schema_document(revision):
        pointer = pointer.replace("#/$defs/", "#/definitions/", 1)
    return pointer


@functools.cache
def schema_validator(revision: str, name: str) -> Any:
    """A ``jsonschema`` validator of definition ``name``, of the draft the file declares."""
    document = schema_document(revision)
    cls = jsonschema.validators.validator_for(document)
    return cls({**document, "$ref": schema_pointer(revision, name)})


def schema_errors(revision: str, name: str, instance: JSON) -> list[str]:
    """Why ``instance`` is not a valid ``name`` per the schema file (empty when it is)."""
    errors = schema_validator(revision, name).iter_errors(instance)
    return [f"{list(e.absolute_path)}: {e.message}" for e in errors]


def round_trip(revision: str, name: str, instance: JSON) -> JSON:
    """Validate ``instance`` with the generated class of ``name`` and dump it back to JSON data."""
    adapter = adapter_of(revision, name)
    value = adapter.validate_python(instance)
    return adapter.dump_python(value, mode="json", by_alias=True, exclude_unset=True)


# --- Bounded schemas -------------------------------------------------------------------------------

# Keywords that annotate and never constrain; dropped before generation, since hypothesis-jsonschema
# canonicalises (and JSON-encodes) every subschema it meets and long descriptions only slow it down.
ANNOTATIONS = frozenset({"description", "title", "examples", "default", "$comment"})
# Keywords whose value is data, not a schema: copied as they are.
DATA_KEYWORDS = frozenset({"const", "enum", "required"})
# How many times a recursive definition may be expanded inside itself (see generation_schema).
RECURSION_DEPTH = 2
# How many properties beyond the required ones a drawn object may have (see generation_schema).
EXTRA_PROPERTIES = 3


def _refs_in(node: Any, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        target = ref_name(node)
        if target is not None:
            out.add(target)
        for value in node.values():
            _refs_in(value, out)
    elif isinstance(node, list):
        for value in node:
            _refs_in(value, out)
    return out


@functools.cache
def recursive_definitions(revision: str) -> frozenset[str]:
    """Definitions that reach themselves through ``$ref`` (2026-07-28: JSONValue, JSONObject)."""
    graph = {name: _refs_in(d.schema, set()) for name, d in definitions(revision).items()}
    found: set[str] = set()
    for start, targets in graph.items():
        seen: set[str] = set()
        todo = list(targets)
        while todo:
            name = todo.pop()
            if name == start:
                found.add(start)
                break
            if name not in seen:
                seen.add(name)
                todo.extend(graph[name])
    return frozenset(found)


def _required(node: dict[str, Any]) -> set[str]:
    """Property names ``node`` requires, its ``allOf`` members' included."""
    names = set(node.get("required", []))
    for member in node.get("allOf", []):
        if isinstance(member, dict):
            names |= _required(member)
    return names


class _Inliner:
    """Builds generation schemas of one revision; a definition reached twice is one shared object."""

    def __init__(self, revision: str) -> None:
        self.defs: dict[str, Any] = ir_of(revision).bundled_schema()["$defs"]
        self.cyclic = recursive_definitions(revision)
        self.done: dict[tuple[str, bool], Any] = {}

    def definition(self, name: str, stack: tuple[str, ...] = (), cap: bool = True) -> Any:
        if name in self.cyclic:  # never shared: its expansion depends on the stack
            return self.node(self.defs[name], (*stack, name), cap)
        key = (name, cap)
        if key not in self.done:
            self.done[key] = self.node(self.defs[name], (), cap)
        return self.done[key]

    def node(self, node: Any, stack: tuple[str, ...], cap: bool) -> Any:
        if isinstance(node, list):
            return [self.node(v, stack, cap) for v in node]
        if not isinstance(node, dict):
            return node
        target = ref_name(node)
        if (
            target is not None
        ):  # siblings of a $ref are annotations only (hoisting keeps descriptions)
            if target in self.cyclic and stack.count(target) >= RECURSION_DEPTH:
                # The leaf is `false`: it matches nothing, so the branch that would recurse further
                # is not taken (a JSONObject becomes {}, a JSONArray [], a JSONValue a scalar). Any
                # other leaf could admit instances the real schema rejects; `false` only removes
                # choices.
                return False
            return self.definition(target, stack, cap)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ANNOTATIONS:
                continue
            if key == "properties":
                out[key] = {p: self.node(sub, stack, True) for p, sub in value.items()}
            elif key in DATA_KEYWORDS:
                out[key] = value
            elif key == "allOf":
                # Members merge into this object: the cap applies to the merged whole, here.
                out[key] = [self.node(member, stack, False) for member in value]
            else:
                out[key] = self.node(value, stack, True)
        if cap and (out.get("type") == "object" or "properties" in out or "allOf" in out):
            out["maxProperties"] = len(_required(out)) + EXTRA_PROPERTIES
        return out


@functools.cache
def _inliner(revision: str) -> _Inliner:
    return _Inliner(revision)


def generation_schema(revision: str, name: str) -> Any:
    """The definition's schema with every ``$ref`` replaced by its target, made cheap to draw from.

    The target is the IR's bundled ``$defs`` entry (what ``{"$ref": "#/$defs/<name>", "$defs":
    ir.bundled_schema()["$defs"]}`` means). We inline ourselves instead of handing hypothesis-
    jsonschema the ``$defs``: (1) it resolves a ``$ref`` by inlining and cannot handle a definition
    that refers to itself (it recurses until RecursionError), so references to a recursive
    definition (2026-07-28: JSONValue, JSONObject) are expanded RECURSION_DEPTH times and then cut;
    (2) its resolution merges and canonicalises at every ``$ref``, which took seconds for each big
    definition.

    Two more changes keep ~750 definitions within a couple of minutes, and both only narrow what is
    drawn (every instance still satisfies the real schema): annotations are dropped, and every
    object gets ``maxProperties`` = its required properties + EXTRA_PROPERTIES, so that an instance
    holds a few optional or unknown properties at each level rather than a dozen.
    """
    return _inliner(revision).definition(name)


# base64 text for `format: byte` (hypothesis-jsonschema knows no such format and would draw any text).
BASE64_TEXT = st.binary(max_size=24).map(lambda raw: base64.b64encode(raw).decode("ascii"))
CUSTOM_FORMATS: dict[str, st.SearchStrategy[str]] = {"byte": BASE64_TEXT}


@functools.cache
def strategy_for(revision: str, name: str) -> st.SearchStrategy[JSON]:
    return from_schema(generation_schema(revision, name), custom_formats=CUSTOM_FORMATS)


# --- hypothesis-jsonschema shims ------------------------------------------------------------------


class _ManyWithMore(conjecture_utils.many):  # type: ignore[misc]
    """``many`` with the ``more()`` loop that hypothesis-jsonschema 0.23.1 calls.

    hypothesis 6.170.10 replaced ``while elements.more():`` by ``for _ in elements:`` inside a
    ``with`` block; hypothesis-jsonschema (0.23.1, its newest release) still calls ``more()`` and
    fails with AttributeError on every object schema. This drives the new protocol the old way.
    """

    _iterator: Iterator[None] | None = None

    def more(self) -> bool:
        if self._iterator is None:
            self.__enter__()
            self._iterator = iter(self)
        for _ in self._iterator:
            return True
        self.__exit__(None)
        return False


_FROM_SCHEMA_NAME = "__from_schema"  # hypothesis-jsonschema's module-level workers
_MERGED_NAME = "merged_as_strategies"
_CANONICALISH_NAME = "canonicalish"
_VALIDATOR_CLASS_NAME = "_get_validator_class"
_CANONICALISH_MODULES = (hjs_canonicalise, hjs_from_schema, hjs_resolve)


class _CanonicalMemo:
    """``canonicalish`` by the canonical JSON text of its input, each answer a fresh copy.

    hypothesis-jsonschema canonicalises every subschema anew (encoding it to JSON, and building a
    validator for each ``const`` and ``enum``), and the inlined definitions repeat the same
    subschemas hundreds of times: this made building the strategies of one revision take ~20 s.
    The function is pure, and its callers may mutate what it returns, so each hit is a copy.
    """

    def __init__(self, original: Callable[[Any], dict[str, Any]]) -> None:
        self.original = original
        self.answers: dict[str, str] = {}

    def __call__(self, schema: Any) -> dict[str, Any]:
        if isinstance(schema, bool):
            return self.original(schema)
        key = encode_canonical_json(schema)
        answer = self.answers.get(key)
        if answer is None:
            answer = self.answers[key] = encode_canonical_json(self.original(schema))
        result: dict[str, Any] = json.loads(answer)
        return result


class _StrategyMemo:
    """Strategies by schema: first by object identity (cheap), then by JSON text (shared).

    hypothesis-jsonschema passes the same subschema objects on every draw, so identity hits are the
    common case; the JSON key also shares one strategy between definitions that embed the same
    subschema. Entries keep their schemas alive, so an ``id`` is never reused for another object.
    """

    def __init__(self) -> None:
        self.by_id: dict[tuple[int, ...], tuple[tuple[object, ...], st.SearchStrategy[JSON]]] = {}
        self.by_json: dict[str, st.SearchStrategy[JSON]] = {}

    def get(
        self, schemas: tuple[object, ...], build: Callable[[], st.SearchStrategy[JSON]]
    ) -> st.SearchStrategy[JSON]:
        ids = tuple(map(id, schemas))
        entry = self.by_id.get(ids)
        if entry is not None and all(a is b for a, b in zip(entry[0], schemas, strict=True)):
            return entry[1]
        try:
            text = json.dumps(schemas, sort_keys=True)
        except TypeError:
            return build()
        strategy = self.by_json.get(text)
        if strategy is None:
            strategy = self.by_json[text] = build()
        self.by_id[ids] = (schemas, strategy)
        return strategy


@contextmanager
def hypothesis_jsonschema_shims() -> Iterator[None]:
    """Make hypothesis-jsonschema work with this hypothesis, and fast enough for ~750 definitions.

    1. ``many.more()`` (see _ManyWithMore), only where hypothesis lacks it.
    2. Memoise the schema -> strategy conversion. hypothesis-jsonschema converts the subschemas
       of an object's properties anew on every draw (canonicalising, merging and JSON-encoding
       each one each time), which made one draw of a big union take a second. The conversion is
       a pure function of the JSON schema, so its strategy can be reused. The alphabet and the
       custom formats are left out of the key: every call made while this is active comes from
       strategy_for (UTF-8, no ``allow_x00`` change, CUSTOM_FORMATS).

    3. Memoise ``canonicalish`` (see _CanonicalMemo) and skip the metaschema check of every
       merged subschema (see _validator_class): together 3x faster strategies.

    All are undone on exit, so other tests see hypothesis-jsonschema as installed.
    """
    original_utils = hjs_from_schema.cu
    original_from_schema: Callable[..., st.SearchStrategy[JSON]] = getattr(
        hjs_from_schema, _FROM_SCHEMA_NAME
    )
    original_merged: Callable[..., st.SearchStrategy[JSON]] = getattr(hjs_from_schema, _MERGED_NAME)
    original_canonicalish = getattr(hjs_canonicalise, _CANONICALISH_NAME)
    original_validator_class = getattr(hjs_canonicalise, _VALIDATOR_CLASS_NAME)
    single, merged = _StrategyMemo(), _StrategyMemo()
    canonical_memo = _CanonicalMemo(original_canonicalish)

    def memo_from_schema(schema: Any, **kwargs: Any) -> st.SearchStrategy[JSON]:
        return single.get((schema,), lambda: original_from_schema(schema, **kwargs))

    def memo_merged(schemas: list[Any], **kwargs: Any) -> st.SearchStrategy[JSON]:
        # The list is new on every call, its members are not: key on a tuple of them.
        return merged.get(tuple(schemas), lambda: original_merged(schemas, **kwargs))

    if not hasattr(conjecture_utils.many, "more"):
        hjs_from_schema.cu = _CompatUtils()  # type: ignore[assignment]
    setattr(hjs_from_schema, _FROM_SCHEMA_NAME, memo_from_schema)
    setattr(hjs_from_schema, _MERGED_NAME, memo_merged)
    for module in _CANONICALISH_MODULES:
        setattr(module, _CANONICALISH_NAME, canonical_memo)
    setattr(hjs_canonicalise, _VALIDATOR_CLASS_NAME, _validator_class)
    try:
        yield
    finally:
        hjs_from_schema.cu = original_utils
        setattr(hjs_from_schema, _FROM_SCHEMA_NAME, original_from_schema)
        setattr(hjs_from_schema, _MERGED_NAME, original_merged)
        for module in _CANONICALISH_MODULES:
            setattr(module, _CANONICALISH_NAME, original_canonicalish)
        setattr(hjs_canonicalise, _VALIDATOR_CLASS_NAME, original_validator_class)


def _validator_class(schema: Any) -> Any:
    """The validator class for ``schema``, without first checking ``schema`` against its
    metaschema: every schema here comes from an official schema file, and that check of each
    merged subschema was most of the time spent building the strategies."""
    return jsonschema.validators.validator_for(schema)


class _CompatUtils:
    """Stands in for ``hypothesis.internal.conjecture.utils`` inside hypothesis-jsonschema."""

    many = _ManyWithMore

    def __getattr__(self, name: str) -> Any:
        return getattr(conjecture_utils, name)


# --- Valid messages to start from -----------------------------------------------------------------

# 2026-07-28 (stateless) requests carry the negotiation in `_meta`; earlier revisions need nothing.
STATELESS_REQUEST_META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "ExampleClient", "version": "1.0.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def has_property(revision: str, name: str, prop: str) -> bool:
    return prop in definitions(revision)[name].schema.get("properties", {})


def call_tool_params(revision: str) -> dict[str, Any]:
    """A valid ``CallToolRequestParams`` of ``revision``."""
    params: dict[str, Any] = {"name": "get_weather", "arguments": {"location": "New York"}}
    if "_meta" in definitions(revision)["CallToolRequestParams"].schema.get("required", []):
        params["_meta"] = dict(STATELESS_REQUEST_META)
    return params


def call_tool_request(revision: str) -> dict[str, Any]:
    """A valid ``CallToolRequest`` of ``revision`` (``jsonrpc``/``id`` where the schema has them)."""
    request: dict[str, Any] = {"method": "tools/call", "params": call_tool_params(revision)}
    if has_property(revision, "CallToolRequest", "jsonrpc"):
        request = {"jsonrpc": "2.0", "id": 7, **request}
    return request
