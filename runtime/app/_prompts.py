"""Prompts: arguments from the signature (required when without a default), messages from
what the function returns.

A ``str`` is one user message; a dict ``{"role": ..., "content": ...}``, a ``PromptMessage`` of
the generated types, or a list mixing these and strings (each string a user message) are the
messages in order; a message's content may be a string (a text block), a content block or a
dict of one. A ``GetPromptResult`` is taken as it is.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from mcpbind.runtime.core.errors import INVALID_PARAMS, McpError
from pydantic import BaseModel

from ._call import ArgumentsError, call, validate
from ._results import as_data, to_content
from ._schema import Signature, read_signature

__all__ = ["PromptEntry", "make_prompt"]


class PromptEntry:
    """One registered prompt."""

    # A plain class: a dataclass compiles its methods when defined, about 2.5 M instructions
    # of every app's start-up (4.4 M frozen); nothing compares or copies these by field.

    def __init__(
        self,
        name: str,
        signature: Signature,
        title: str | None,
        description: str | None,
        icons: list[dict[str, Any]] | None,
        meta: dict[str, Any] | None,
        tags: frozenset[str] = frozenset(),
    ) -> None:
        self.name = name
        self.signature = signature
        self.title = title
        self.description = description
        self.icons = icons
        self.meta = meta
        #: Server-side labels for ``App.enable``/``disable`` (never sent).
        self.tags = tags

    def arguments(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for name, param in self.signature.parameters.items():
            field = self.signature.model.model_fields.get(name)
            argument: dict[str, Any] = {
                "name": name,
                "required": param.default is inspect.Parameter.empty,
            }
            if field is not None and field.description:
                argument["description"] = field.description
            if field is not None and field.title:
                argument["title"] = field.title
            out.append(argument)
        return out

    def describe(self) -> dict[str, Any]:
        """The ``Prompt``, newest shape."""
        data: dict[str, Any] = {"name": self.name}
        for key, value in (
            ("title", self.title),
            ("description", self.description),
            ("icons", self.icons),
            ("_meta", self.meta),
        ):
            if value is not None:
                data[key] = value
        if self.signature.parameters:
            data["arguments"] = self.arguments()
        return data

    async def get(self, arguments: dict[str, str], context: Any) -> dict[str, Any]:
        """A ``GetPromptResult`` as JSON data (newest shape); -32602 for bad arguments."""
        try:
            kwargs = validate(self.signature, arguments, f"prompt {self.name!r}")
        except ArgumentsError as exc:
            raise McpError(
                INVALID_PARAMS, f"Invalid params: {exc}", {"prompt": self.name}
            ) from None
        value = await call(self.signature, kwargs, context)
        if isinstance(value, BaseModel) and type(value).__name__ == "GetPromptResult":
            data: dict[str, Any] = value.model_dump(mode="json", by_alias=True, exclude_unset=True)
            return data
        items = cast("Sequence[Any]", value) if isinstance(value, list | tuple) else [value]
        result: dict[str, Any] = {"messages": [_message(item) for item in items]}
        if self.description is not None:
            result["description"] = self.description
        return result


def _message(item: object) -> dict[str, Any]:
    if isinstance(item, BaseModel):
        item = item.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    message = _as_message(item)
    if message is None:
        raise TypeError(f"a prompt function returned {type(item).__name__}, not a message")
    content: Any = message["content"]
    if not isinstance(content, dict):
        blocks = to_content(content, "mcpbind://prompt/content")
        content = blocks[0] if blocks else {"type": "text", "text": ""}
    return {"role": message["role"], "content": content}


def _as_message(item: object) -> dict[str, Any] | None:
    """``item`` if it is a dict with a role and content (a message), else None."""
    if isinstance(item, dict) and "role" in item and "content" in item:
        return cast("dict[str, Any]", item)
    return None


def make_prompt(
    fn: Callable[..., Any],
    context_cls: type,
    *,
    name: str | None,
    title: str | None,
    description: str | None,
    icons: Sequence[Any] | None,
    meta: Mapping[str, Any] | None,
) -> PromptEntry:
    """A ``PromptEntry`` for ``fn``."""
    prompt_name = name or getattr(fn, "__name__", None)
    if not prompt_name or prompt_name == "<lambda>":
        raise TypeError("give a lambda (or any function without a name) a name: prompt(name=...)")
    return PromptEntry(
        name=prompt_name,
        signature=read_signature(fn, context_cls, prompt_name),
        title=title,
        description=description or inspect.getdoc(fn),
        icons=as_data(list(icons)) if icons is not None else None,
        meta=dict(meta) if meta is not None else None,
    )
