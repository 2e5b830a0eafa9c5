"""Tools: a registered function's description, and running it for ``tools/call``.

Failures the model can correct come back as ``isError`` results, not protocol errors: invalid
arguments (which argument, what was wrong), a ``ToolError`` (its message as is), any other
exception (its type and message, unless the app masks them), a result that does not match the
output schema. A ``McpError`` raised by the tool, and the signals of the stateless era's input
rounds, pass through to the runtime.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mcpbind.runtime.core.errors import ClientCapabilityMissing, McpError
from pydantic import BaseModel, ValidationError

from ._call import ArgumentsError, call, describe_errors, validate
from ._results import as_data, text_block, tool_result
from ._schema import OutputType, Signature, output_type, read_signature

__all__ = ["ToolEntry", "ToolError", "make_tool"]

logger = logging.getLogger("mcpbind.app")


class ToolError(Exception):
    """Raise it from a tool to answer an ``isError`` result with exactly this message."""


class ToolEntry:
    """One registered tool."""

    # A plain class: a dataclass compiles its methods when defined, about 2.5 M instructions
    # of every app's start-up (4.4 M frozen); nothing compares or copies these by field.

    def __init__(
        self,
        name: str,
        signature: Signature,
        description: str | None = None,
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        input_schema: dict[str, Any] | None = None,
        task_support: str | None = None,
        tags: frozenset[str] = frozenset(),
        timeout: float | None = None,
        structured_output: bool | None = None,
    ) -> None:
        self.name = name
        self.signature = signature
        self.description = description
        self.title = title
        self.annotations = annotations
        self.icons = icons
        self.meta = meta
        self._input_schema = input_schema
        #: ``execution.taskSupport`` (2025-11-25 tasks): None is absent, i.e. forbidden.
        self.task_support = task_support
        #: Server-side labels for ``App.enable``/``disable`` (never sent).
        self.tags = tags
        #: Seconds before a call is cancelled (None: the app's default, if any).
        self.timeout = timeout
        #: ``False``: no structured output, whatever the return annotation says.
        self.structured_output = structured_output

    @property
    def input_schema(self) -> dict[str, Any]:
        """The arguments' JSON schema: worked out when the tool is first listed (building its
        arguments model's validator, if deferred), not at start-up."""
        if self._input_schema is None:
            self._input_schema = self.signature.input_schema
        return self._input_schema

    @functools.cached_property
    def output(self) -> OutputType | None:
        """The structured output its return annotation gives, if any: worked out when the
        tool is first listed or called, not at start-up (it never fails, at worst it is None)."""
        if self.structured_output is False:
            return None
        return output_type(self.name, self.signature.hints.get("return", inspect.Parameter.empty))

    def describe(self) -> dict[str, Any]:
        """The ``Tool`` as the newest revision has it (shaped per revision when listed)."""
        data: dict[str, Any] = {"name": self.name, "inputSchema": self.input_schema}
        for key, value in (
            ("title", self.title),
            ("description", self.description),
            ("annotations", self.annotations),
            ("icons", self.icons),
            ("_meta", self.meta),
        ):
            if value is not None:
                data[key] = value
        if self.output is not None:
            data["outputSchema"] = self.output.schema
        if self.task_support is not None:
            data["execution"] = {"taskSupport": self.task_support}
        return data

    async def run(
        self,
        arguments: dict[str, Any],
        context: Any,
        mask_errors: bool,
        on_exception: Callable[[Exception, int | str], None] | None = None,
    ) -> dict[str, Any]:
        """Validate, call, convert: a ``CallToolResult`` as JSON data (newest shape).

        With ``on_exception``, an unexpected exception is given to it (with the request's id,
        ``context.request_id``) and raised, not answered.
        """
        try:
            kwargs = validate(self.signature, arguments, f"tool {self.name!r}")
            value = await call(self.signature, kwargs, context)
            return tool_result(value, self.output, f"mcpbind://tool/{self.name}/result")
        except (McpError, ClientCapabilityMissing):
            raise
        except ArgumentsError as exc:
            logger.info("tool %r refused its arguments", self.name)
            return _error(str(exc))
        except ToolError as exc:
            return _error(str(exc))
        except ValidationError as exc:
            logger.warning("tool %r returned a result outside its output schema", self.name)
            return _error(
                f"Tool {self.name!r} returned an invalid result: {describe_errors(exc, 'field')}"
            )
        except Exception as exc:
            if on_exception is not None:
                on_exception(exc, context.request_id)
                raise
            logger.exception("tool %r failed", self.name)
            if mask_errors:
                return _error(f"Error executing tool {self.name!r}")
            return _error(f"Error executing tool {self.name!r}: {type(exc).__name__}: {exc}")


def _error(message: str) -> dict[str, Any]:
    return {"content": [text_block(message)], "isError": True}


def make_tool(
    fn: Callable[..., Any],
    context_cls: type,
    *,
    name: str | None,
    title: str | None,
    description: str | None,
    annotations: Mapping[str, Any] | BaseModel | None,
    icons: Sequence[Any] | None,
    meta: Mapping[str, Any] | None,
    structured_output: bool | None,
) -> ToolEntry:
    """A ``ToolEntry`` for ``fn``; ``TypeError`` for a signature that cannot be served."""
    tool_name = name or getattr(fn, "__name__", None)
    if not tool_name or tool_name == "<lambda>":
        raise TypeError("give a lambda (or any function without a name) a name: tool(name=...)")
    signature = read_signature(fn, context_cls, tool_name)
    entry = ToolEntry(
        name=tool_name,
        signature=signature,
        description=description or inspect.getdoc(fn),
        title=title,
        annotations=as_data(annotations) if annotations is not None else None,
        icons=as_data(list(icons)) if icons is not None else None,
        meta=dict(meta) if meta is not None else None,
        structured_output=structured_output,
    )
    if structured_output and entry.output is None:
        raise TypeError(f"tool {tool_name!r}: its return annotation has no JSON schema")
    return entry
