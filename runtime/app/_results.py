"""What a tool's return value becomes: content blocks and, with an output type, structured
content (in the newest shape; ``_shaping`` then fits it to the client's revision).

- a ``str``: one text block; ``None``: no content;
- ``bytes``: an image or audio block when the bytes say so (PNG, JPEG, GIF, WebP; WAV, MP3,
  OGG, FLAC), otherwise an embedded binary resource (``application/octet-stream``);
- a content block of the generated types (any revision): as it is; a list or tuple of
  blocks, strings or bytes: each in turn;
- a ``CallToolResult`` (any revision's class): as it is;
- anything else (models, dicts, numbers, lists): JSON text, indented.

With an output type, the value is also validated against it (wrapped as ``{"result": ...}``
where the schema says so) and sent as ``structuredContent``.

A result made here from the value alone (text, binary blocks, structured content the output
type validated) is served as it is; one that holds the user's own models (a ``CallToolResult``,
content blocks, which ``model_construct`` may have left invalid) is a ``UserResult``, which the
session validates. Text blocks are written ``text`` first: the order every revision's
``TextContent`` serializer writes, so a result served unvalidated is the same bytes.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any, cast

import pydantic_core
from pydantic import BaseModel

from ._schema import CONTENT_TYPE_NAMES, OutputType

__all__ = ["UserResult", "as_data", "binary_block", "text_block", "to_content", "tool_result"]

_MAGIC: tuple[tuple[bytes, int, str, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image", "image/png"),
    (b"\xff\xd8\xff", 0, "image", "image/jpeg"),
    (b"GIF87a", 0, "image", "image/gif"),
    (b"GIF89a", 0, "image", "image/gif"),
    (b"WEBP", 8, "image", "image/webp"),
    (b"WAVE", 8, "audio", "audio/wav"),
    (b"ID3", 0, "audio", "audio/mpeg"),
    (b"\xff\xfb", 0, "audio", "audio/mpeg"),
    (b"OggS", 0, "audio", "audio/ogg"),
    (b"fLaC", 0, "audio", "audio/flac"),
)


class UserResult(dict[str, Any]):
    """A tool's result holding the user's own models: validated before it is served."""

    __slots__ = ()


def text_block(text: str) -> dict[str, Any]:
    """A text content block, its members in the order its class writes them."""
    return {"text": text, "type": "text"}


def binary_block(data: bytes, uri: str) -> dict[str, Any]:
    """Bytes as the content block they look like (see the module's docstring)."""
    encoded = base64.b64encode(data).decode("ascii")
    for magic, offset, kind, mime in _MAGIC:
        if data[offset : offset + len(magic)] == magic:
            return {"type": kind, "data": encoded, "mimeType": mime}
    return {
        "type": "resource",
        "resource": {"uri": uri, "blob": encoded, "mimeType": "application/octet-stream"},
    }


def _is_generated(value: object, names: frozenset[str] | set[str]) -> bool:
    cls = type(value)
    return cls.__name__ in names and cls.__module__.startswith("mcpbind.generated.")


def _dump(value: BaseModel) -> dict[str, Any]:
    data: dict[str, Any] = value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return data


def as_data(value: Any) -> Any:
    """Models (and sequences of them) given as options, e.g. icons, as JSON data."""
    if isinstance(value, BaseModel):
        return _dump(value)
    if isinstance(value, list | tuple):
        items = cast("Sequence[Any]", value)
        return [as_data(v) for v in items]
    return value


def to_content(value: Any, uri: str) -> list[dict[str, Any]]:
    """A value as content blocks (the rules of the module's docstring)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [text_block(value)]
    if isinstance(value, bytes | bytearray):
        return [binary_block(bytes(value), uri)]
    if isinstance(value, BaseModel) and _is_generated(value, CONTENT_TYPE_NAMES):
        return [_dump(value)]
    if isinstance(value, list | tuple):
        items = cast("Sequence[Any]", value)
        if items and all(_is_block(v) for v in items):
            return [block for v in items for block in to_content(v, uri)]
    return [text_block(pydantic_core.to_json(value, fallback=str, indent=2).decode())]


def _is_block(value: Any) -> bool:
    return isinstance(value, str | bytes | bytearray) or (
        isinstance(value, BaseModel) and _is_generated(value, CONTENT_TYPE_NAMES)
    )


def _holds_models(value: Any) -> bool:
    """Whether ``to_content`` takes blocks of ``value`` from the user's models as they are."""
    if isinstance(value, BaseModel):
        return _is_generated(value, CONTENT_TYPE_NAMES)
    if isinstance(value, list | tuple):
        items = cast("Sequence[Any]", value)
        return all(_is_block(v) for v in items) and any(isinstance(v, BaseModel) for v in items)
    return False


def tool_result(value: Any, output: OutputType | None, uri: str) -> dict[str, Any]:
    """A tool's return value as a ``CallToolResult`` (JSON data, newest shape): a
    ``UserResult`` when it holds the user's models.

    Raises ``pydantic.ValidationError`` when the value does not match the output type.
    """
    if isinstance(value, BaseModel) and _is_generated(value, {"CallToolResult"}):
        return UserResult(_dump(value))
    result: dict[str, Any] = {"content": to_content(value, uri)}
    if output is not None:
        structured: Any
        if type(value) is output.plain:  # what its adapter would make of it (``OutputType``)
            structured = {"result": value}
        else:
            wrapped = {"result": value} if output.wrap else value
            checked = output.adapter.validate_python(wrapped, from_attributes=True)
            structured = output.adapter.dump_python(checked, mode="json", by_alias=True)
        result["structuredContent"] = structured
        if type(structured) is not dict:  # not an object: left to the result's class to refuse
            return UserResult(result)
    return UserResult(result) if _holds_models(value) else result
