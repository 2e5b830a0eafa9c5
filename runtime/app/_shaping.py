"""Shaping results for the revision a client negotiated, from the generated classes alone.

The app builds results in the newest shape; before one is sent, what the served revision
lacks is taken out: members its class does not declare (``title``, ``icons``,
``outputSchema``, ``structuredContent``...), and content blocks of types it does not know
(``resource_link`` becomes a text block naming the link, anything else is left out with a
logged warning), so a richer result never fails an older client's call. The generated models
accept unknown members (``extra="allow"``), so validation alone would let them through.
"""

from __future__ import annotations

import functools
import logging
import typing
from collections.abc import Callable
from types import ModuleType, UnionType
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin

from pydantic import BaseModel
from typing_extensions import TypeAliasType

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = ["Shaper", "prune_object", "result_class", "shape_result", "shaper"]

logger = logging.getLogger("mcpbind.app")

#: Members whose value is the user's own data (schemas, arguments, metadata): never pruned.
_OPAQUE = frozenset(
    {"_meta", "inputSchema", "outputSchema", "structuredContent", "arguments", "requestedSchema"}
)


def _unwrap(annotation: Any) -> Any:
    while True:
        if isinstance(annotation, TypeAliasType):
            annotation = annotation.__value__
        elif get_origin(annotation) is Annotated:
            annotation = get_args(annotation)[0]
        else:
            return annotation


def _members(annotation: Any) -> list[Any]:
    """The arms of a union (or the one type), aliases and ``Annotated`` taken off."""
    annotation = _unwrap(annotation)
    if get_origin(annotation) in (typing.Union, UnionType):
        return [m for arg in get_args(annotation) for m in _members(arg)]
    return [annotation]


def _type_tag(cls: type[BaseModel]) -> Any:
    """The one value of ``cls``'s ``type`` member (a ``Literal``; required when parsing, so it
    has no default to read), or None."""
    field = cls.model_fields.get("type")
    if field is None:
        return None
    args = get_args(_unwrap(field.annotation))
    return (
        args[0]
        if get_origin(_unwrap(field.annotation)) is typing.Literal and len(args) == 1
        else None
    )


@functools.cache
def _aliases(cls: type[BaseModel]) -> dict[str, Any]:
    """The members of ``cls`` on the wire (aliases), each with its annotation."""
    return {(f.alias or name): f.annotation for name, f in cls.model_fields.items()}


def _pick(models: list[type[BaseModel]], value: dict[str, Any]) -> type[BaseModel] | None:
    """The arm of a union of models ``value`` is, by the members it has."""
    for model in models:
        required = {(f.alias or n) for n, f in model.model_fields.items() if f.is_required()}
        if required <= value.keys():
            return model
    return None


Pruner = Callable[[Any], Any]


def _compile(annotation: Any) -> Pruner | None:
    """How to prune values of ``annotation``: None when there is nothing to prune (no model
    inside). Compiled once per class member, so pruning a result walks only its data."""
    members = _members(annotation)
    if len(members) == 1 and get_origin(members[0]) in (list, tuple):
        args = get_args(members[0])
        inner = _compile(args[0]) if args else None
        if inner is None:
            return None

        def prune_list(value: JsonValue) -> Any:
            return [inner(v) for v in value] if type(value) is list else value

        return prune_list
    models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
    if not models:
        return None
    if len(models) == 1:
        only = models[0]

        def prune_one(value: JsonValue) -> Any:
            return prune_object(value, only) if type(value) is dict else value

        return prune_one
    tags = {_type_tag(m): m for m in models}
    tagged = None not in tags

    def pick(value: JsonValue) -> Any:
        if type(value) is not dict:
            return value
        chosen = tags.get(value.get("type")) if tagged else _pick(models, value)
        return value if chosen is None else prune_object(value, chosen)

    return pick


@functools.cache
def _pruners(cls: type[BaseModel]) -> dict[str, Pruner | None]:
    return {
        alias: None if alias in _OPAQUE else _compile(annotation)
        for alias, annotation in _aliases(cls).items()
    }


def prune_object(value: dict[str, Any], cls: type[BaseModel]) -> dict[str, Any]:
    """``value`` (JSON data) as ``cls`` of this revision knows it: members it does not
    declare dropped, at every level that is a generated model (schemas, arguments and
    ``_meta`` are the user's data, kept whole); members in the order ``cls`` declares them,
    as its serializer writes them."""
    out: dict[str, Any] = {}
    for key, pruner in _pruners(cls).items():
        if key in value:
            item = value[key]
            out[key] = item if pruner is None else pruner(item)
    return out


def _content_classes(cls: type[BaseModel], field: str) -> dict[Any, type[BaseModel]]:
    """The content block classes ``cls.field`` (a list or a single block) takes, by tag."""
    annotation = _unwrap(cls.model_fields[field].annotation)
    if get_origin(annotation) is list:
        annotation = get_args(annotation)[0]
    return {
        _type_tag(m): m
        for m in _members(annotation)
        if isinstance(m, type) and issubclass(m, BaseModel)
    }


class Shaper:
    """One revision's shaping: what its classes declare, and which content it knows."""

    def __init__(self, types: ModuleType, revision: str) -> None:
        self.types = types
        self.revision = revision

    # Read on first use: each creates its revision's content classes, which a session that
    # has not yet called a tool (or got a prompt) does not need.
    @functools.cached_property
    def tool_content(self) -> dict[Any, type[BaseModel]]:
        return _content_classes(self.types.CallToolResult, "content")

    @functools.cached_property
    def prompt_content(self) -> dict[Any, type[BaseModel]]:
        return _content_classes(self.types.PromptMessage, "content")

    def content(
        self, blocks: list[dict[str, Any]], known: dict[Any, type[BaseModel]], where: str
    ) -> list[dict[str, Any]]:
        """Content blocks this revision can carry: unknown types converted or left out."""
        out: list[dict[str, Any]] = []
        text = known.get("text")
        for block in blocks:
            if text is not None and len(block) == 2 and block.get("type") == "text":
                out.append(block)  # a plain text block: the same in every revision
                continue
            kind = block.get("type")
            cls = known.get(kind)
            if cls is None and kind == "resource_link" and "text" in known:
                cls, block = known["text"], {"type": "text", "text": _link_text(block)}
            if cls is None:
                logger.warning(
                    "%s: a %r content block left out: revision %s has no such content",
                    where,
                    kind,
                    self.revision,
                )
                continue
            out.append(prune_object(block, cls))
        return out


def _link_text(block: dict[str, Any]) -> str:
    name = block.get("title") or block.get("name") or block.get("uri")
    text = f"Resource link: {name} <{block.get('uri')}>"
    if block.get("mimeType"):
        text += f" ({block['mimeType']})"
    if block.get("description"):
        text += f": {block['description']}"
    return text


@functools.cache
def shaper(revision: str) -> Shaper:
    """The cached ``Shaper`` of ``revision``."""
    from mcpbind import generated

    return Shaper(generated.load(revision).types, revision)


def result_class(result_type: Any) -> type[BaseModel]:
    """The complete-result class of a method's result type (not its ``InputRequiredResult``)."""
    members = [
        m
        for m in _members(result_type)
        if isinstance(m, type) and issubclass(m, BaseModel) and m.__name__ != "InputRequiredResult"
    ]
    return members[0]


def shape_result(
    data: dict[str, Any],
    cls: type[BaseModel],
    revision: str,
    where: str,
    cache: dict[str, Any],
) -> dict[str, Any]:
    """A result (newest shape) as ``revision``'s result class ``cls`` declares it: content it lacks
    converted or left out, members it lacks dropped, and the cache members it requires
    (``ttlMs``, ``cacheScope``) filled from ``cache`` when absent; members in the order ``cls``
    declares them (``prune_object``)."""
    shaping = shaper(revision)
    fields = _aliases(cls)
    content = None
    if type(data.get("content")) is list and "content" in fields:
        content = shaping.content(data["content"], shaping.tool_content, where)
        data = {key: value for key, value in data.items() if key != "content"}
    if type(data.get("messages")) is list and cls.__name__ == "GetPromptResult":
        messages: list[JsonValue] = []
        message: JsonValue
        for message in data["messages"]:
            if type(message) is dict:
                block: JsonValue = message.get("content")
                if type(block) is dict:
                    kept = shaping.content([block], shaping.prompt_content, where)
                    if not kept:
                        continue
                    message = {**message, "content": kept[0]}
            messages.append(message)
        data = {**data, "messages": messages}
    out = prune_object(data, cls)
    if content is not None:
        out["content"] = content
    for key, value in cache.items():
        if key in fields and key not in out:
            out[key] = value
    if "resultType" in fields and "resultType" not in out:
        out["resultType"] = "complete"
    return {key: out[key] for key in fields if key in out}
