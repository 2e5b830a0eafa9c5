"""The app's answers to the generated methods, one handler per method and revision.

Each handler is registered with the revision's own ``MethodSpec`` (so the runtime validates
params and results with that revision's classes), builds its result from the registries in
the newest shape, and has ``shape_result`` fit it to the revision. Nothing here is specific to
one revision: which methods exist, their params and result classes all come from the tables.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpbind import generated
from mcpbind.generated.names import (
    COMPLETION_COMPLETE,
    LOGGING_SETLEVEL,
    PROMPTS_GET,
    PROMPTS_LIST,
    RESOURCES_LIST,
    RESOURCES_READ,
    RESOURCES_SUBSCRIBE,
    RESOURCES_TEMPLATES_LIST,
    RESOURCES_UNSUBSCRIBE,
    TOOLS_CALL,
    TOOLS_LIST,
)
from mcpbind.generated.support import MethodSpec
from mcpbind.runtime.core.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    ClientCapabilityMissing,
    McpError,
)
from mcpbind.runtime.core.routing import BuiltResult
from mcpbind.runtime.core.session import RequestContext

from ._completion import complete, completion_result
from ._context import Context
from ._plain import shape_plain
from ._results import UserResult
from ._timeout import timed
from ._ui import content_meta, for_client

if TYPE_CHECKING:
    from ._app import App

__all__ = ["handlers_for"]

logger = logging.getLogger("mcpbind.app")

#: -32002 "Resource not found" in the handshake era; -32602 from 2026-07-28 (resources.md).
_NOT_FOUND_HANDSHAKE = -32002

Handler = Callable[[Any, RequestContext], Awaitable[Any]]


def handlers_for(
    app: App, revision: str, methods: dict[str, MethodSpec[Any, Any]]
) -> list[tuple[MethodSpec[Any, Any], Handler]]:
    """The handlers the app registers for ``revision`` (only methods it has)."""
    makers: dict[str, Callable[[App, str, MethodSpec[Any, Any]], Handler]] = {
        TOOLS_LIST: _list_tools,
        TOOLS_CALL: _call_tool,
        RESOURCES_LIST: _list_resources,
        RESOURCES_TEMPLATES_LIST: _list_templates,
        RESOURCES_READ: _read_resource,
        RESOURCES_SUBSCRIBE: _empty,
        RESOURCES_UNSUBSCRIBE: _empty,
        PROMPTS_LIST: _list_prompts,
        PROMPTS_GET: _get_prompt,
        COMPLETION_COMPLETE: _complete,
        LOGGING_SETLEVEL: _set_level,
    }
    return [
        (methods[name], make(app, revision, methods[name]))
        for name, make in makers.items()
        if name in methods
    ]


# ``_shaping`` and ``_pages`` are imported by the first result that needs them: an idle server
# whose tools answer plain text never loads them (``tests/runtime/test_imports.py``).


def _shaped(
    app: App, spec: MethodSpec[Any, Any], revision: str, data: dict[str, Any], where: str
) -> Any:
    from ._shaping import shape_result

    return shape_result(data, _result_class(spec), revision, where, app.cache_members)


@functools.cache
def _result_class(spec: MethodSpec[Any, Any]) -> Any:
    from ._shaping import result_class

    return result_class(spec.result_type)


def _lister(kind: str) -> Callable[[App, str, MethodSpec[Any, Any]], Handler]:
    """A paginated list of one registry's descriptions, under the spec's ``page_items``."""

    def make(app: App, revision: str, spec: MethodSpec[Any, Any]) -> Handler:
        key = spec.page_items or kind

        async def handler(params: Any, context: RequestContext) -> Any:
            from ._pages import page

            described = app.described(kind)
            if kind == "tools":
                described = for_client(described, context.session.peer.capabilities)
            items, cursor = page(described, getattr(params, "cursor", None), app.page_size)
            data: dict[str, Any] = {key: items}
            if cursor is not None:
                data["nextCursor"] = cursor
            return _shaped(app, spec, revision, data, spec.method)

        return handler

    return make


_list_tools = _lister("tools")
_list_resources = _lister("resources")
_list_templates = _lister("resourceTemplates")
_list_prompts = _lister("prompts")


def _call_tool(app: App, revision: str, spec: MethodSpec[Any, Any]) -> Handler:
    async def handler(params: Any, context: RequestContext) -> Any:
        entry = app.find_tool(params.name)
        if entry is None:
            raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}", {"name": params.name})
        ctx = Context(app, context, revision)
        arguments: dict[str, Any] = params.arguments or {}
        timeout = app.tool_timeout if entry.timeout is None else entry.timeout
        if timeout is None:  # no limit: no wrapper coroutine on the per-call path
            data = await entry.run(arguments, ctx, app.mask_errors, app.on_tool_exception)
        else:
            data = await timed(
                lambda: entry.run(arguments, ctx, app.mask_errors, app.on_tool_exception),
                timeout,
                entry.name,
            )
        if type(data) is UserResult:  # the user's models: the session validates them
            return _shaped(app, spec, revision, data, f"tool {entry.name!r}")
        # Made from values the app validated (``_results``): served as built, and when it is
        # plain text shaped by the members its spec lists, without creating its classes.
        members = spec.result_members
        shaped = None if members is None else shape_plain(data, members, app.cache_members)
        if shaped is None:
            shaped = _shaped(app, spec, revision, data, f"tool {entry.name!r}")
        return BuiltResult(functools.partial(_result_class, spec), shaped)

    return handler


def _read_resource(app: App, revision: str, spec: MethodSpec[Any, Any]) -> Handler:
    not_found = _NOT_FOUND_HANDSHAKE if generated.ERAS[revision] == "handshake" else INVALID_PARAMS

    async def handler(params: Any, context: RequestContext) -> Any:
        uri = str(params.uri)
        try:
            found = app.find_resource(uri)
        except ValueError as exc:
            # Only a template's traversal guard raises here (``_uri_template.UnsafeValue``, a
            # ValueError); naming that class would load the templates' module into every app.
            raise McpError(not_found, f"Resource not found: {exc}", {"uri": uri}) from None
        if found is None:
            raise McpError(not_found, "Resource not found", {"uri": uri})
        entry, variables = found
        try:
            contents = await entry.read(uri, variables, Context(app, context, revision))
        except McpError:
            raise
        except Exception as exc:
            logger.exception("resource %r failed", uri)
            detail = "" if app.mask_errors else f": {type(exc).__name__}: {exc}"
            raise McpError(
                INTERNAL_ERROR, f"Error reading resource {uri}{detail}", {"uri": uri}
            ) from None
        contents = content_meta(contents, entry.mime_type, entry.meta)
        return _shaped(app, spec, revision, {"contents": contents}, f"resource {uri!r}")

    return handler


def _get_prompt(app: App, revision: str, spec: MethodSpec[Any, Any]) -> Handler:
    async def handler(params: Any, context: RequestContext) -> Any:
        entry = app.find_prompt(params.name)
        if entry is None:
            raise McpError(INVALID_PARAMS, f"Unknown prompt: {params.name}", {"name": params.name})
        try:
            data = await entry.get(dict(params.arguments or {}), Context(app, context, revision))
        except (McpError, ClientCapabilityMissing):
            raise
        except Exception as exc:
            # Named like a resource's failure (and masked alike), not a bare "Internal error".
            logger.exception("prompt %r failed", entry.name)
            detail = "" if app.mask_errors else f": {type(exc).__name__}: {exc}"
            raise McpError(
                INTERNAL_ERROR, f"Error getting prompt {entry.name!r}{detail}", {"name": entry.name}
            ) from None
        return _shaped(app, spec, revision, data, f"prompt {entry.name!r}")

    return handler


def _complete(app: App, revision: str, spec: MethodSpec[Any, Any]) -> Handler:
    async def handler(params: Any, context: RequestContext) -> Any:
        ref = params.ref
        target = (
            getattr(ref, "name", None) if ref.type == "ref/prompt" else getattr(ref, "uri", None)
        )
        name, prefix = params.argument.name, params.argument.value
        given: dict[str, Any] = getattr(getattr(params, "context", None), "arguments", None) or {}
        fn = app.completions.get((ref.type, str(target), name))
        if fn is not None:
            values = await complete(fn, prefix, dict(given))
        else:
            choices = app.argument_choices(ref.type, str(target), name) or []
            values = [v for v in choices if v.startswith(prefix)]
        return _shaped(app, spec, revision, completion_result(values), spec.method)

    return handler


def _set_level(app: App, revision: str, spec: MethodSpec[Any, Any]) -> Handler:
    async def handler(params: Any, context: RequestContext) -> Any:
        app.set_log_level(context.session, str(params.level))
        return _shaped(app, spec, revision, {}, spec.method)

    return handler


def _empty(app: App, revision: str, spec: MethodSpec[Any, Any]) -> Handler:
    async def handler(params: Any, context: RequestContext) -> Any:
        return _shaped(app, spec, revision, {}, spec.method)

    return handler
