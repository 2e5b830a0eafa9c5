"""Specific promises of the generated models, each checked in every revision where it applies."""

from __future__ import annotations

import importlib
import re
import typing
from typing import Any

import mcpbind.generated
import pytest
from generated_helpers import (
    REVISIONS,
    adapter_of,
    call_tool_params,
    canonical,
    class_of,
    definitions,
    has_property,
    round_trip,
    types_of,
)
from pydantic import BaseModel

# A 1x1 PNG: the base64 text must come back as sent (no Base64Str decoding or re-encoding).
PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
NESTED_META: dict[str, Any] = {
    "com.example/trace": {"id": "abc", "spans": [1, 2.5, None, {"deep": [True, "x"]}]},
    "progressToken": 50,
    "empty": {},
}
COERCING_FORMATS = ("byte", "uri", "uri-template", "uri-reference")


def assert_round_trip(revision: str, name: str, instance: Any) -> None:
    assert canonical(round_trip(revision, name, instance)) == canonical(instance)


def field_for(cls: type[BaseModel], json_name: str) -> tuple[str, Any]:
    """The (Python name, FieldInfo) of the field that reads JSON property ``json_name``."""
    for py_name, info in cls.model_fields.items():
        if (info.alias or py_name) == json_name:
            return py_name, info
    raise AssertionError(f"{cls.__name__} has no field for {json_name!r}")


def result_with(revision: str, **fields: Any) -> dict[str, Any]:
    """A valid ``Result`` (2026-07-28 requires ``resultType``) with ``fields`` added."""
    result: dict[str, Any] = dict(fields)
    if "resultType" in definitions(revision)["Result"].schema.get("required", []):
        result["resultType"] = "complete"
    return result


def _properties_with(keyword: str, values: tuple[str, ...]) -> list[tuple[str, str, str]]:
    return [
        (revision, name, prop)
        for revision in REVISIONS
        for name, definition in definitions(revision).items()
        for prop, schema in definition.schema.get("properties", {}).items()
        if isinstance(schema, dict) and schema.get(keyword) in values
    ]


FORMATTED = _properties_with("format", COERCING_FORMATS)
META_OWNERS = [
    (revision, name)
    for revision in REVISIONS
    for name, definition in definitions(revision).items()
    if "_meta" in definition.schema.get("properties", {})
]
SCHEMA_OWNERS = [
    (revision, name)
    for revision in REVISIONS
    for name, definition in definitions(revision).items()
    if "$schema" in definition.schema.get("properties", {})
]


# --- formats ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_byte_stays_str(revision: str) -> None:
    image = {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}
    value = adapter_of(revision, "ImageContent").validate_python(image)
    assert value.data == PNG_BASE64
    assert type(value.data) is str
    assert_round_trip(revision, "ImageContent", image)
    assert_round_trip(
        revision, "BlobResourceContents", {"uri": "file:///a.png", "blob": PNG_BASE64}
    )


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("uri", ["https://example.com", "file:///tmp/x y.txt", "custom:thing"])
def test_uri_stays_str(revision: str, uri: str) -> None:
    """No AnyUrl: ``https://example.com`` must not gain a trailing slash, odd URIs still pass."""
    resource = {"name": "r", "uri": uri}
    value = adapter_of(revision, "Resource").validate_python(resource)
    assert value.uri == uri
    assert type(value.uri) is str
    assert_round_trip(revision, "Resource", resource)


def test_formatted_properties_are_found() -> None:
    assert len(FORMATTED) > 50


@pytest.mark.parametrize(
    ("revision", "name", "prop"), FORMATTED, ids=[f"{r}-{n}.{p}" for r, n, p in FORMATTED]
)
def test_formatted_property_is_a_plain_str_field(revision: str, name: str, prop: str) -> None:
    """Every ``format: uri|byte|uri-template`` property is typed with ``str``, not a coercing type."""
    _, info = field_for(class_of(revision, name), prop)
    annotation = repr(info.annotation)
    assert "str" in annotation
    assert not re.search(r"Url|Base64|Bytes|bytes", annotation), annotation


# --- _meta and $schema -----------------------------------------------------------------------------


def test_meta_owners_are_found() -> None:
    assert len(META_OWNERS) > 100
    assert {revision for revision, _ in META_OWNERS} == set(REVISIONS)


@pytest.mark.parametrize(
    ("revision", "name"), META_OWNERS, ids=[f"{r}-{n}" for r, n in META_OWNERS]
)
def test_meta_field_has_alias(revision: str, name: str) -> None:
    py_name, _ = field_for(class_of(revision, name), "_meta")
    assert py_name == "meta"


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("meta", [NESTED_META, {}], ids=["nested", "empty"])
def test_meta_round_trips(revision: str, meta: dict[str, Any]) -> None:
    """Arbitrary nested ``_meta`` survives as sent, and an empty one is not dropped."""
    assert_round_trip(revision, "Result", result_with(revision, _meta=meta))
    if has_property(revision, "ProgressNotificationParams", "_meta"):
        params = {"progressToken": "t", "progress": 50, "_meta": meta}
        assert_round_trip(revision, "ProgressNotificationParams", params)


@pytest.mark.parametrize("revision", REVISIONS)
def test_meta_by_keyword_dumps_as_underscore_meta(revision: str) -> None:
    cls = class_of(revision, "Result")
    extra = {"resultType": "complete"} if "resultType" in cls.model_fields else {}
    dumped = cls(meta={"k": 1}, **extra).model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert dumped == {"_meta": {"k": 1}, **extra}


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("value", [[1, 2], None, "x"], ids=["list", "null", "str"])
def test_unknown_field_named_meta_stays_an_extra(revision: str, value: Any) -> None:
    """``meta`` (no underscore) is just an unknown property to the schema: kept as sent.

    It must not be read as the ``_meta`` field (whose Python name is ``meta``): that would reject
    a valid message (``meta: [1, 2]`` is not an object) or rename the key to ``_meta``.
    """
    assert_round_trip(revision, "Result", result_with(revision, meta=value))


def test_schema_owners_are_found() -> None:
    assert {name for _, name in SCHEMA_OWNERS} >= {"ToolInputSchema", "ToolOutputSchema"}


@pytest.mark.parametrize(
    ("revision", "name"), SCHEMA_OWNERS, ids=[f"{r}-{n}" for r, n in SCHEMA_OWNERS]
)
def test_dollar_schema_field(revision: str, name: str) -> None:
    field_for(class_of(revision, name), "$schema")
    instance = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"location": {"type": "string"}},
    }
    assert_round_trip(revision, name, instance)


@pytest.mark.parametrize(
    ("revision", "name"), SCHEMA_OWNERS, ids=[f"{r}-{n}" for r, n in SCHEMA_OWNERS]
)
@pytest.mark.parametrize("value", ["x", 1], ids=["str", "int"])
def test_unknown_field_named_schema_stays_an_extra(revision: str, name: str, value: Any) -> None:
    """``schema_`` (the Python name of ``$schema``) is an unknown property to the schema: kept as sent."""
    # ``properties`` is required by ElicitRequestFormParamsRequestedSchema, optional elsewhere.
    assert_round_trip(revision, name, {"type": "object", "properties": {}, "schema_": value})


# --- names ------------------------------------------------------------------------------------------


def test_annotated_does_not_shadow_typing_annotated() -> None:
    types = types_of("2024-11-05")
    assert definitions("2024-11-05")["Annotated"].class_name == "AnnotatedModel"
    assert issubclass(types.AnnotatedModel, BaseModel)
    for revision in REVISIONS:
        assert getattr(types_of(revision), "Annotated", typing.Annotated) is typing.Annotated


NUMBERED = re.compile(r".*(Params|Data|Model)\d+")


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("module", ["types", "methods", "client", "server"])
def test_no_numbered_class_names(revision: str, module: str) -> None:
    """datamodel-code-generator's fallback names (``Params3``, ``Model``) mean a missed hoisting."""
    generated = importlib.import_module(f"{mcpbind.generated.module_name(revision)}.{module}")
    bad = [n for n in vars(generated) if NUMBERED.fullmatch(n) or n == "Model"]
    assert bad == []


@pytest.mark.parametrize("revision", REVISIONS)
def test_call_tool_request_params_exists(revision: str) -> None:
    assert "CallToolRequestParams" in definitions(revision)
    assert issubclass(types_of(revision).CallToolRequestParams, BaseModel)


# --- defaults ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_jsonrpc_defaults_when_constructed_by_keyword(revision: str) -> None:
    types = types_of(revision)
    request = types.JSONRPCRequest(id=1, method="ping")
    assert request.jsonrpc == "2.0"
    dumped = request.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert dumped == {"jsonrpc": "2.0", "id": 1, "method": "ping"}

    params = types.CallToolRequestParams.model_validate(call_tool_params(revision))
    if has_property(revision, "CallToolRequest", "jsonrpc"):
        call = types.CallToolRequest(id=7, params=params)
        assert call.jsonrpc == "2.0"
    else:
        call = types.CallToolRequest(params=params)
    dumped = call.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert dumped["method"] == "tools/call"
    if has_property(revision, "CallToolRequest", "jsonrpc"):
        assert (dumped["jsonrpc"], dumped["id"]) == ("2.0", 7)


# --- fix-ups ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [1.5, None, 50, "s", True, {"a": [1.5, None, {"b": False}]}, [[], {}]],
    ids=["float", "null", "int", "str", "bool", "nested", "empty-containers"],
)
def test_json_value_accepts_every_json_value(value: Any) -> None:
    """Fix-up json-value-number-and-null (2026-07-28): the schema's scalar member lacks number and null."""
    assert_round_trip("2026-07-28", "JSONValue", value)


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_elicit_result_content_accepts_floats(revision: str) -> None:
    """Fix-up elicit-result-content-number: the schema allows integer but not number."""
    content = {"temperature": 21.5, "count": 3, "name": "x", "ok": True, "tags": ["a", "b"]}
    assert_round_trip(revision, "ElicitResult", {"action": "accept", "content": content})


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25", "2026-07-28"])
def test_number_schema_fractional_bounds(revision: str) -> None:
    """Fix-up number-schema-bounds-number: bounds of a number field are numbers, not integers."""
    schema: dict[str, Any] = {"type": "number", "minimum": 0.5, "maximum": 10}
    if has_property(revision, "NumberSchema", "default"):
        schema["default"] = 2.5
    value = adapter_of(revision, "NumberSchema").validate_python(schema)
    assert value.minimum == 0.5
    assert_round_trip(revision, "NumberSchema", schema)
