"""Resources: static URIs and RFC 6570 templates (``users://{user_id}/profile``,
``files://{+path}``, ``search{?q,lang}``; matching in ``_uri_template``).

A template's variables are matched from a URI (percent-decoded, guarded against path traversal
unless the template opts out) and converted to the types the function's parameters name: an
exploded variable is a list, a variable the URI leaves out takes the parameter's default (and
without a default, the URI is not the template's).
What a function returns becomes the resource's contents: ``str`` text, ``bytes`` a base64
blob, anything else JSON text (listed with the MIME type its return annotation implies unless
one is given: ``text/plain``, ``application/octet-stream``, ``application/json``); a
``TextResourceContents``/``BlobResourceContents``, or a list of them, is taken as it is.
"""

from __future__ import annotations

import base64
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import pydantic_core
from mcpbind.runtime.core.errors import INVALID_PARAMS, McpError
from pydantic import BaseModel

from ._call import ArgumentsError, call, validate
from ._results import as_data
from ._schema import Signature, read_signature

if TYPE_CHECKING:
    from ._uri_template import UriTemplate, Values

__all__ = ["TEMPLATE_VARIABLE", "ResourceEntry", "make_resource"]

#: An expression of a URI template: ``{name}``, ``{+path}``, ``{?q,lang}``...
TEMPLATE_VARIABLE = re.compile(r"\{[^{}]*\}")


class ResourceEntry:
    """One static resource or template."""

    # A plain class: a dataclass compiles its methods when defined, about 2.5 M instructions
    # of every app's start-up (4.4 M frozen); nothing compares or copies these by field.

    def __init__(
        self,
        uri: str,
        name: str,
        signature: Signature,
        title: str | None,
        description: str | None,
        mime_type: str | None,
        annotations: dict[str, Any] | None,
        icons: list[dict[str, Any]] | None,
        meta: dict[str, Any] | None,
        variables: tuple[str, ...],
        template: UriTemplate | None,
        tags: frozenset[str] = frozenset(),
        required: tuple[str, ...] = (),
    ) -> None:
        self.uri = uri
        self.name = name
        self.signature = signature
        self.title = title
        self.description = description
        self.mime_type = mime_type
        self.annotations = annotations
        self.icons = icons
        self.meta = meta
        self.variables = variables
        self.template = template
        #: Server-side labels for ``App.enable``/``disable`` (never sent).
        self.tags = tags
        #: The variables whose parameters have no default: a URI without one is not this
        #: resource.
        self.required = required

    @property
    def is_template(self) -> bool:
        return self.template is not None

    def describe(self) -> dict[str, Any]:
        """The ``Resource`` or ``ResourceTemplate``, newest shape."""
        key = "uriTemplate" if self.is_template else "uri"
        data: dict[str, Any] = {key: self.uri, "name": self.name}
        for member, value in (
            ("title", self.title),
            ("description", self.description),
            ("mimeType", self.mime_type),
            ("annotations", self.annotations),
            ("icons", self.icons),
            ("_meta", self.meta),
        ):
            if value is not None:
                data[member] = value
        return data

    def match(self, uri: str) -> Values | None:
        """The variables of ``uri`` if this template matches it; ``UnsafeValue`` when one
        fails the traversal guard."""
        if self.template is None:
            return {} if uri == self.uri else None
        found = self.template.match(uri)
        if found is None or any(name not in found for name in self.required):
            return None
        return found

    async def read(self, uri: str, variables: Values, context: Any) -> list[dict[str, Any]]:
        """The contents of ``uri`` (a ``ReadResourceResult``'s ``contents``)."""
        try:
            kwargs = validate(self.signature, variables, f"resource {self.uri!r}")
        except ArgumentsError as exc:
            raise McpError(INVALID_PARAMS, f"Invalid params: {exc}", {"uri": uri}) from None
        value = await call(self.signature, kwargs, context)
        return contents(value, uri, self.mime_type)


def _is_contents(value: Any) -> bool:
    return isinstance(value, BaseModel) and type(value).__name__ in (
        "TextResourceContents",
        "BlobResourceContents",
    )


def contents(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]]:
    """A resource function's return value as resource contents."""
    if _is_contents(value):
        value = [value]
    if isinstance(value, list):
        items = cast("Sequence[Any]", value)
        if items and all(_is_contents(v) for v in items):
            return [v.model_dump(mode="json", by_alias=True, exclude_unset=True) for v in items]
    if isinstance(value, bytes | bytearray):
        blob = base64.b64encode(bytes(value)).decode("ascii")
        return [{"uri": uri, "blob": blob, "mimeType": mime_type or "application/octet-stream"}]
    if isinstance(value, str):
        return [{"uri": uri, "text": value, "mimeType": mime_type or "text/plain"}]
    text = pydantic_core.to_json(value, fallback=str, indent=2).decode()
    return [{"uri": uri, "text": text, "mimeType": mime_type or "application/json"}]


def _default_mime_type(annotation: Any) -> str | None:
    """The MIME type a return annotation implies: text, binary, or JSON for data."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return None
    if annotation is str:
        return "text/plain"
    if annotation in (bytes, bytearray):
        return "application/octet-stream"
    return "application/json"


def make_resource(
    uri: str,
    fn: Callable[..., Any],
    context_cls: type,
    *,
    name: str | None,
    title: str | None,
    description: str | None,
    mime_type: str | None,
    annotations: Mapping[str, Any] | None,
    icons: Sequence[Any] | None,
    meta: Mapping[str, Any] | None,
    traversal_guard: bool = True,
) -> ResourceEntry:
    """A ``ResourceEntry``; ``TypeError`` when the function's parameters and the template's
    variables differ (every variable must be a parameter, and the other way round),
    ``ValueError`` for a template that is not RFC 6570 or cannot be matched."""
    template: UriTemplate | None = None
    variables: tuple[str, ...] = ()
    if "{" in uri or "}" in uri:
        # Only a URI with a brace can be a template (or a malformed one): the parser's module
        # is loaded by the first of them, so an app of static resources never holds it.
        from ._uri_template import UriTemplate

        template = UriTemplate(uri, guard=traversal_guard)
        variables = template.variables
    label = name or getattr(fn, "__name__", None) or uri
    signature = read_signature(fn, context_cls, label)
    if set(variables) != set(signature.parameters) or len(set(variables)) != len(variables):
        raise TypeError(
            f"resource {uri!r}: the function's parameters {sorted(signature.parameters)} "
            f"must be the template's variables {sorted(variables)}, each once"
        )
    return ResourceEntry(
        uri=uri,
        name=label,
        signature=signature,
        title=title,
        description=description or inspect.getdoc(fn),
        mime_type=mime_type
        or _default_mime_type(signature.hints.get("return", inspect.Parameter.empty)),
        annotations=dict(annotations) if annotations is not None else None,
        icons=as_data(list(icons)) if icons is not None else None,
        meta=dict(meta) if meta is not None else None,
        variables=variables,
        template=template if template is not None and template.is_template else None,
        required=tuple(
            name
            for name in variables
            if signature.parameters[name].default is inspect.Parameter.empty
        ),
    )
