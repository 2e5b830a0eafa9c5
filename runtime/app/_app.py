"""``App``: tools, resources and prompts from plain typed functions, served by a ``Server``.

The registries live here; the answers to the protocol's methods are in ``_handlers`` and are
registered on the runtime ``Server`` per revision, the first time a client speaks it.
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncGenerator, Callable, Coroutine, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Generic, Literal, overload

from mcpbind.generated.support import Direction
from mcpbind.runtime.core.bindings import Bindings
from mcpbind.runtime.core.session import Session
from mcpbind.runtime.core.transport import Connection
from mcpbind.runtime.endpoints.server import Server
from pydantic import BaseModel
from typing_extensions import TypeVar

from ._changes import ChangeTeller
from ._completion import values_of
from ._context import LOG_LEVELS, Context
from ._handlers import handlers_for
from ._prompts import PromptEntry, make_prompt
from ._resources import TEMPLATE_VARIABLE, ResourceEntry, make_resource
from ._skills import AppSkills
from ._timeout import check_timeout
from ._tools import ToolEntry, make_tool
from ._ui import UI_EXTENSION, UI_MIME_TYPE, has_views
from ._visibility import Visibility

if TYPE_CHECKING:
    from mcpbind.runtime.endpoints.middleware import Middleware
    from mcpbind.runtime.transports.http.server import StreamableHTTPServer

    from ._ui_meta import UiTool

__all__ = ["App"]

#: A decorated function, returned as it came: it keeps its type, and stays callable.
F = TypeVar("F", bound=Callable[..., Any])
#: What the app's lifespan yields (``ctx.lifespan_context``); Any for an app without one.
LifespanT = TypeVar("LifespanT", default=Any)

#: A middleware, returned as it came by ``@app.middleware``.
M = TypeVar("M", bound="Middleware")

#: The registries whose changes clients may hear of, by the capability that names them.
_LISTED = ("tools", "resources", "prompts")


class _AppServer(Server[Any]):
    """A ``Server`` that registers the app's handlers for a revision when it first meets it
    (importing only the revisions clients speak), and advertises what the app holds."""

    app: App[Any]

    def find_route(self, bindings: Bindings, method: str) -> Any:
        self.app.install(bindings.revision)
        return super().find_route(bindings, method)

    def capabilities_for(self, bindings: Bindings) -> dict[str, Any]:
        self.app.install(bindings.revision)
        return self.app.adjust_capabilities(super().capabilities_for(bindings))


class App(AppSkills, Generic[LifespanT]):
    """A high-level MCP server: decorate typed functions, then run it.

    ``page_size`` bounds every list's pages (None: one page). ``mask_errors`` hides the
    message of an unexpected exception from the client (it is logged either way).
    ``ttl_ms`` and ``cache_scope`` are what stateless-era results that require them say
    (``caching.md``: 0 is "stale at once"; ``private`` the cautious scope). ``tool_timeout``
    limits every tool's call to that many seconds unless the tool says otherwise. Everything else
    (``revisions``, ``options``, ``send_timeout``, ``shutdown_timeout``...) goes to the
    ``Server``, which is ``app.server``.

    ``lifespan(app)`` returns an async context manager (an ``@asynccontextmanager``
    function) entered once before the first request is served and exited on shutdown (see
    ``Server``); what it yields is ``ctx.lifespan_context`` (typed by ``Context[T]``).
    """

    #: Told of an unexpected exception raised by a tool, with the id of the ``tools/call`` it
    #: ran for; the request then fails (an internal error) instead of answering an ``isError``
    #: result: ``mcpbind.runtime.testing`` sets it to raise the exception in the calling test.
    on_tool_exception: Callable[[Exception, int | str], None] | None = None

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        page_size: int | None = None,
        mask_errors: bool = False,
        ttl_ms: int = 0,
        cache_scope: str = "private",
        tool_timeout: float | None = None,
        lifespan: Callable[[App[LifespanT]], AbstractAsyncContextManager[LifespanT]] | None = None,
        **server_options: Any,
    ) -> None:
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1")
        server = _AppServer(
            name,
            version,
            title=title,
            instructions=instructions,
            lifespan=(lambda _server: lifespan(self)) if lifespan is not None else None,
            **server_options,
        )
        server.app = self
        self.server: Server[LifespanT] = server
        self.page_size = page_size
        self.mask_errors = mask_errors
        self.tool_timeout = check_timeout(tool_timeout, "App")
        #: The ``enable``/``disable`` rules: what clients see of the registries.
        self.visibility = Visibility()
        self.cache_members: dict[str, Any] = {"ttlMs": ttl_ms, "cacheScope": cache_scope}
        self.tools: dict[str, ToolEntry] = {}
        self.resources: dict[str, ResourceEntry] = {}
        self.prompts: dict[str, PromptEntry] = {}
        self.completions: dict[tuple[str, str, str], Callable[..., Any]] = {}
        self._installed: set[str] = set()
        self._log_levels: weakref.WeakKeyDictionary[Session, str] = weakref.WeakKeyDictionary()
        self._changes = ChangeTeller(self.server)

    # -- the runtime side ---------------------------------------------------------------

    def install(self, revision: str) -> None:
        """Register the app's handlers for ``revision`` (once)."""
        if revision in self._installed:
            return
        self._installed.add(revision)
        bindings = Bindings.load(revision, Direction.SERVER_TO_CLIENT)
        for spec, handler in handlers_for(self, revision, dict(bindings.incoming_requests)):
            self.server.add_handler(spec, handler)

    def adjust_capabilities(self, derived: dict[str, Any]) -> dict[str, Any]:
        """What the handlers imply, fitted to what is registered: a list capability only
        with something in it (and ``listChanged``, since changes are announced), completions
        only with something to complete, and logging in every revision."""
        given = self.server.extra_capabilities
        out = dict(derived)
        held = {"tools": self.tools, "prompts": self.prompts, "resources": self.resources}
        for key in _LISTED:
            if key in given:
                continue
            if not held[key]:
                out.pop(key, None)
            elif key in out:
                out[key] = {**out[key], "listChanged": True}
        # notify_resource_updated reaches subscribers in both eras: the 2026-07-28 revision has
        # no resources/subscribe handler to imply it, only subscriptions/listen.
        if self.resources and "resources" in out and "resources" not in given:
            out["resources"] = {**out["resources"], "subscribe": True}
        if "completions" in out and "completions" not in given and not self._completable():
            out.pop("completions")
        out.setdefault("logging", {})
        if has_views(list(self.tools.values()), list(self.resources.values())):
            out["extensions"] = {**out.get("extensions", {}), UI_EXTENSION: {}}
        return out

    def _completable(self) -> bool:
        if self.completions:
            return True
        entries: list[PromptEntry | ResourceEntry] = [
            *self.prompts.values(),
            *self.resources.values(),
        ]
        return any(
            values_of(entry.signature.hints.get(name)) is not None
            for entry in entries
            for name in entry.signature.parameters
        )

    def log_level(self, session: Session) -> str | None:
        """The level a handshake-era session asked for (``debug``, all, until it asks)."""
        return self._log_levels.get(session, "debug")

    def set_log_level(self, session: Session, level: str) -> None:
        if level in LOG_LEVELS:
            self._log_levels[session] = level

    # -- tools --------------------------------------------------------------------------

    @overload
    def tool(self, name: F, /) -> F: ...

    @overload
    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | BaseModel | None = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        structured_output: bool | None = None,
        task_support: Literal["forbidden", "optional", "required"] | None = None,
        tags: Iterable[str] = (),
        enabled: bool = True,
        timeout: float | None = None,
        ui: str | UiTool | None = None,
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        name: str | F | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | BaseModel | None = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        structured_output: bool | None = None,
        task_support: Literal["forbidden", "optional", "required"] | None = None,
        tags: Iterable[str] = (),
        enabled: bool = True,
        timeout: float | None = None,
        ui: str | UiTool | None = None,
    ) -> F | Callable[[F], F]:
        """Register the decorated function as a tool (name: the function's; description:
        its docstring), as ``@app.tool`` or ``@app.tool(...)``. The function is returned
        unchanged. ``tags``, ``enabled``: see ``disable``; ``timeout``: seconds before a call
        is cancelled and answered with an ``isError`` result (the app's ``tool_timeout`` if
        None); ``ui``: the ``ui://`` view of MCP Apps showing its results (or ``{"resourceUri":
        ..., "visibility": ["app"]}`` for a tool only the view calls)."""
        if callable(name):
            self.add_tool(name)
            return name

        def register(fn: F) -> F:
            self.add_tool(
                fn,
                name=name,
                title=title,
                description=description,
                annotations=annotations,
                icons=icons,
                meta=meta,
                structured_output=structured_output,
                task_support=task_support,
                tags=tags,
                enabled=enabled,
                timeout=timeout,
                ui=ui,
            )
            return fn

        return register

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | BaseModel | None = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        structured_output: bool | None = None,
        task_support: Literal["forbidden", "optional", "required"] | None = None,
        tags: Iterable[str] = (),
        enabled: bool = True,
        timeout: float | None = None,
        ui: str | UiTool | None = None,
    ) -> None:
        """Register ``fn`` as a tool (replacing one of the same name); clients are told.

        ``task_support`` (``"optional"``, ``"required"``) lets clients call it as a task
        (2025-11-25): the first such tool enables the server's task support."""
        if ui:
            from ._ui_meta import tool_meta  # loaded by the first tool with a view

            meta = tool_meta(ui, meta, name or str(getattr(fn, "__name__", "?")))
        entry = make_tool(
            fn,
            Context,
            name=name,
            title=title,
            description=description,
            annotations=annotations,
            icons=icons,
            meta=meta,
            structured_output=structured_output,
        )
        entry.task_support = task_support
        entry.timeout = check_timeout(timeout, f"tool {entry.name!r}")
        self.visibility.register(entry, tags, enabled)
        self.tools[entry.name] = entry
        if task_support not in (None, "forbidden") and self.server.tasks is None:
            from mcpbind.runtime.tasks import (
                TaskSupport,  # the tasks extension only for an app that uses it
            )

            self.server.enable_tasks(TaskSupport(tools=self._task_support))
        self._changed(self.server.notify_tools_changed)

    def _task_support(self, name: str) -> str | None:
        entry = self.find_tool(name)
        return None if entry is None else entry.task_support

    def remove_tool(self, name: str) -> None:
        """Remove a tool; ``KeyError`` if there is none of that name. Clients are told."""
        del self.tools[name]
        self._changed(self.server.notify_tools_changed)

    # -- resources ----------------------------------------------------------------------

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        tags: Iterable[str] = (),
        enabled: bool = True,
        traversal_guard: bool = True,
    ) -> Callable[[F], F]:
        """Register the decorated function as the resource ``uri``, or as a template when
        ``uri`` has RFC 6570 expressions (``{id}``, ``{+path}``, ``{/seg*}``, ``{?q}``...: the
        function's parameters). ``traversal_guard=False`` lets values hold ``..`` segments,
        absolute paths and NULs."""

        def register(fn: F) -> F:
            self.add_resource(
                fn,
                uri,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                annotations=annotations,
                icons=icons,
                meta=meta,
                tags=tags,
                enabled=enabled,
                traversal_guard=traversal_guard,
            )
            return fn

        return register

    def add_resource(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        tags: Iterable[str] = (),
        enabled: bool = True,
        traversal_guard: bool = True,
    ) -> None:
        """Register a resource or template (see ``resource``); clients are told."""
        entry = make_resource(
            uri,
            fn,
            Context,
            name=name,
            title=title,
            description=description,
            mime_type=mime_type,
            annotations=annotations,
            icons=icons,
            meta=meta,
            traversal_guard=traversal_guard,
        )
        self.visibility.register(entry, tags, enabled)
        self.resources[uri] = entry
        self._changed(self.server.notify_resources_changed)

    def remove_resource(self, uri: str) -> None:
        """Remove a resource or template by its URI (template); clients are told."""
        del self.resources[uri]
        self._changed(self.server.notify_resources_changed)

    def ui_resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        csp: Mapping[str, Sequence[str]] | None = None,
        permissions: Iterable[str] | None = None,
        domain: str | None = None,
        prefers_border: bool | None = None,
        tags: Iterable[str] = (),
        enabled: bool = True,
    ) -> Callable[[F], F]:
        """Register the decorated function (returning HTML) as an MCP Apps view: ``uri`` is
        ``ui://...``, served as ``text/html;profile=mcp-app`` with ``_meta.ui`` from ``csp``
        (``connectDomains``, ``resourceDomains``...), ``permissions`` (``camera``,
        ``microphone``, ``geolocation``, ``clipboardWrite``), ``domain``, ``prefers_border``.
        A tool shows it with ``@app.tool(ui=uri)``."""
        from ._ui_meta import resource_meta  # loaded by the first view

        meta = resource_meta(
            uri, csp=csp, permissions=permissions, domain=domain, prefers_border=prefers_border
        )

        def register(fn: F) -> F:
            self.add_resource(
                fn,
                uri,
                name=name,
                title=title,
                description=description,
                mime_type=UI_MIME_TYPE,
                meta=meta,
                tags=tags,
                enabled=enabled,
            )
            return fn

        return register

    async def notify_resource_updated(self, uri: str) -> int:
        """``notifications/resources/updated`` to the clients subscribed to ``uri``."""
        return await self.server.notify_resource_updated(uri)

    # -- prompts ------------------------------------------------------------------------

    @overload
    def prompt(self, name: F, /) -> F: ...

    @overload
    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        tags: Iterable[str] = (),
        enabled: bool = True,
    ) -> Callable[[F], F]: ...

    def prompt(
        self,
        name: str | F | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        tags: Iterable[str] = (),
        enabled: bool = True,
    ) -> F | Callable[[F], F]:
        """Register the decorated function as a prompt (its parameters: the arguments), as
        ``@app.prompt`` or ``@app.prompt(...)``."""
        if callable(name):
            self.add_prompt(name)
            return name

        def register(fn: F) -> F:
            self.add_prompt(
                fn,
                name=name,
                title=title,
                description=description,
                icons=icons,
                meta=meta,
                tags=tags,
                enabled=enabled,
            )
            return fn

        return register

    def add_prompt(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        tags: Iterable[str] = (),
        enabled: bool = True,
    ) -> None:
        """Register ``fn`` as a prompt; clients are told."""
        entry = make_prompt(
            fn, Context, name=name, title=title, description=description, icons=icons, meta=meta
        )
        self.visibility.register(entry, tags, enabled)
        self.prompts[entry.name] = entry
        self._changed(self.server.notify_prompts_changed)

    def remove_prompt(self, name: str) -> None:
        """Remove a prompt; clients are told."""
        del self.prompts[name]
        self._changed(self.server.notify_prompts_changed)

    # -- completion ---------------------------------------------------------------------

    def completion(self, target: str, argument: str) -> Callable[[F], F]:
        """Register the decorated function as the completion of ``argument`` of ``target``:
        a resource template (its URI template) or a prompt (its name)."""

        def register(fn: F) -> F:
            is_resource = TEMPLATE_VARIABLE.search(target) is not None or "://" in target
            kind = "ref/resource" if is_resource else "ref/prompt"
            self.completions[(kind, target, argument)] = fn
            return fn

        return register

    # -- middleware ---------------------------------------------------------------------

    def middleware(self, fn: M) -> M:
        """``@app.middleware``: run every incoming request and notification through ``fn``
        (``Server.add_middleware``; ``App(..., middleware=[...])`` gives a list at once)."""
        self.server.add_middleware(fn)
        return fn

    # -- change notifications -----------------------------------------------------------

    def _changed(self, notify: Callable[[], Coroutine[Any, Any, int]]) -> None:
        """Tell connected clients a list changed, from wherever the change was made, on any
        backend (``_changes.py``)."""
        self._changes.tell(notify)

    # -- serving ------------------------------------------------------------------------

    @property
    def lifespan_context(self) -> LifespanT:
        """What the lifespan yielded, while it runs; None for an app without one."""
        return self.server.lifespan_context

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[LifespanT, None]:
        """The lifespan entered while the block runs (or shared with whatever entered it):
        see ``Server.running``."""
        async with self.server.running() as value:
            yield value

    def run_stdio(self, **stdio_options: Any) -> None:
        """Serve on stdin/stdout until stdin closes (blocking)."""
        self.server.run_stdio(**stdio_options)

    async def serve_stdio(self, **stdio_options: Any) -> None:
        await self.server.serve_stdio(**stdio_options)

    def http_app(self, **options: Any) -> StreamableHTTPServer:
        """An ASGI app serving Streamable HTTP, both eras on one endpoint (``options``: those
        of ``StreamableHTTPServer``, e.g. ``path``, ``allowed_hosts``, ``shared`` for many
        workers: ``http.cluster.shared_state_from_env()``)."""
        from mcpbind.runtime.transports.http.server import StreamableHTTPServer

        return StreamableHTTPServer(self.server.serve, **options)

    def run_http(self, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
        """Serve Streamable HTTP on uvicorn until interrupted (blocking); ``options`` go to
        ``http_app`` (binding beyond loopback needs ``allowed_hosts`` widened there too). A
        lifespan that fails to start ends the process with its one-line error, status 1; a
        port that cannot be bound (in use) is an ``OSError`` naming it, before anything runs."""
        # Loaded here: a stdio server never holds uvicorn's runner.
        from ._serving import run_http

        run_http(self.running, lambda: self.http_app(**options), host, port)

    def memory_transport(self) -> AbstractAsyncContextManager[Connection]:
        """A transport to this app in the same process: ``Client(app.memory_transport())``."""
        return self.server.memory_transport()
