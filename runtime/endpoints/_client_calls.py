"""What a ``Client`` offers beyond the stub: pagination and calls by name, typed per revision.

The result types come from the client's stub type: ``call_tool`` on a ``Client`` whose stub is
``v2025_11_25.client.ClientStub`` returns that revision's ``CallToolResult``, because its
``self`` is annotated with a protocol that the stub's own ``call_tool`` matches, which projects
the result type out of the stub. An unbound client (stub type ``Any``) gets ``Any``, as before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast, overload

from mcpbind.generated.names import PROMPTS_GET, RESOURCES_READ, TOOLS_CALL, TOOLS_LIST
from mcpbind.generated.support import MCPModel, MethodSpec, PaginatedMethodSpec, RequestOptions
from mcpbind.runtime.core.bindings import dump, validator
from mcpbind.runtime.core.errors import CapabilityError, InvalidResultError
from typing_extensions import TypeVar as DefaultTypeVar

from .tool_output import structured_output

if TYPE_CHECKING:
    from mcpbind.runtime.core.session import Session

__all__ = ["ClientCalls"]

P = TypeVar("P")
R = TypeVar("R")
ItemT = TypeVar("ItemT")
OutputT = TypeVar("OutputT")
R_co = TypeVar("R_co", covariant=True)
StubT = DefaultTypeVar("StubT", covariant=True, default=Any)


class CallsTools(Protocol[R_co]):
    async def call_tool(self, params: Any, options: RequestOptions | None = None) -> R_co: ...


class ReadsResources(Protocol[R_co]):
    async def read_resource(self, params: Any, options: RequestOptions | None = None) -> R_co: ...


class GetsPrompts(Protocol[R_co]):
    async def get_prompt(self, params: Any, options: RequestOptions | None = None) -> R_co: ...


class ToolsPage(Protocol[R_co]):
    @property
    def tools(self) -> Sequence[R_co]: ...


class ListsTools(Protocol[R_co]):
    async def list_tools(
        self, params: Any = None, options: RequestOptions | None = None
    ) -> R_co: ...


class ClientCalls(Generic[StubT]):
    """Pagination and the by-name conveniences, for a client whose stub type is ``StubT``."""

    @property
    def stub(self) -> StubT:
        raise NotImplementedError

    @property
    def session(self) -> Session:
        raise NotImplementedError

    async def send_request(
        self,
        spec: MethodSpec[P, R],
        params: P | dict[str, Any] | None,
        options: RequestOptions | None = None,
    ) -> R:
        raise NotImplementedError

    async def pages(
        self,
        spec: MethodSpec[P, R],
        params: P | None = None,
        options: RequestOptions | None = None,
    ) -> AsyncIterator[R]:
        """Every page of a paginated list method, following ``nextCursor`` to the end."""
        base: dict[str, Any] = dump(params) or {}
        seen: set[str] = set()
        cursor: str | None = None
        while True:
            body: dict[str, Any] = dict(base)
            if cursor is not None:
                body["cursor"] = cursor
            page = await self.send_request(spec, body or None, options)
            yield page
            cursor = getattr(page, "nextCursor", None)
            if not cursor:
                return
            if cursor in seen:
                raise InvalidResultError(
                    f"{spec.method} returned cursor {cursor!r} twice; stopped paginating"
                )
            seen.add(cursor)

    async def list_all(
        self,
        spec: PaginatedMethodSpec[P, Any, ItemT],
        params: P | None = None,
        options: RequestOptions | None = None,
    ) -> list[ItemT]:
        """The items of every page of a list method: ``list_all(methods.TOOLS_LIST)`` is a
        ``list[Tool]`` of that revision (the generated ``PaginatedMethodSpec`` says so)."""
        if spec.page_items is None:
            raise ValueError(f"{spec.method} is not a paginated list method")
        items: list[ItemT] = []
        async for page in self.pages(spec, params, options):
            items.extend(getattr(page, spec.page_items))
        return items

    # -- by name ----------------------------------------------------------------------------

    def _params(self, method: str, data: dict[str, Any]) -> MCPModel:
        bindings = self.session.bindings
        spec = bindings.methods.get(method)
        if spec is None or spec.params_type is None:
            raise CapabilityError(f"revision {bindings.revision} has no {method}")
        params: MCPModel = validator(spec.params_type)(data)
        return params

    @overload
    async def call_tool(
        self: ClientCalls[CallsTools[R]],
        name: str,
        arguments: Mapping[str, Any] | None = None,
        options: RequestOptions | None = None,
        *,
        output: None = None,
    ) -> R: ...

    @overload
    async def call_tool(
        self: ClientCalls[CallsTools[Any]],
        name: str,
        arguments: Mapping[str, Any] | None = None,
        options: RequestOptions | None = None,
        *,
        output: type[OutputT],
    ) -> OutputT: ...

    async def call_tool(
        self: ClientCalls[CallsTools[Any]],
        name: str,
        arguments: Mapping[str, Any] | None = None,
        options: RequestOptions | None = None,
        *,
        output: type[Any] | None = None,
    ) -> Any:
        """Call tool ``name``: ``await client.call_tool("add", {"a": 1, "b": 2})``, the
        negotiated revision's ``CallToolResult`` (a tool's own failure is ``isError``, not an
        exception).

        With ``output=Model``, the result's ``structuredContent`` validated as ``Model`` (typed
        so), and ``ToolOutputError`` if the result is an error, has none, or does not fit.
        """
        data: dict[str, Any] = {"name": name}
        if arguments is not None:
            data["arguments"] = dict(arguments)
        result = await self.stub.call_tool(self._params(TOOLS_CALL, data), options)
        return result if output is None else structured_output(name, result, output)

    async def read_resource(
        self: ClientCalls[ReadsResources[R]], uri: str, options: RequestOptions | None = None
    ) -> R:
        """Read the resource at ``uri``: the revision's ``ReadResourceResult``."""
        return await self.stub.read_resource(self._params(RESOURCES_READ, {"uri": uri}), options)

    async def get_prompt(
        self: ClientCalls[GetsPrompts[R]],
        name: str,
        arguments: Mapping[str, str] | None = None,
        options: RequestOptions | None = None,
    ) -> R:
        """Get prompt ``name`` filled with ``arguments``: the revision's ``GetPromptResult``."""
        data: dict[str, Any] = {"name": name}
        if arguments is not None:
            data["arguments"] = dict(arguments)
        return await self.stub.get_prompt(self._params(PROMPTS_GET, data), options)

    async def list_tools(
        self: ClientCalls[ListsTools[ToolsPage[ItemT]]], options: RequestOptions | None = None
    ) -> list[ItemT]:
        """Every tool the server has, across all pages: the revision's ``list[Tool]``."""
        bindings = self.session.bindings
        spec = bindings.methods.get(TOOLS_LIST)
        if not isinstance(spec, PaginatedMethodSpec):
            raise CapabilityError(f"revision {bindings.revision} has no tools/list")
        # The item type is the stub's (the revision's Tool): isinstance cannot say it.
        paginated = cast("PaginatedMethodSpec[Any, Any, ItemT]", spec)
        tools: list[ItemT] = await self.list_all(paginated, None, options)
        return tools
