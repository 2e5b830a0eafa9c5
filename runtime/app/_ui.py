"""MCP Apps: the ``io.modelcontextprotocol/ui`` extension (SEP-1865, stable 2026-01-26).

A view is an HTML resource under ``ui://`` served as ``text/html;profile=mcp-app``, with its
security and rendering wishes under ``_meta.ui`` (``csp``, ``permissions``, ``domain``,
``prefersBorder``) on both its listing and its contents. A tool names its view in
``_meta.ui.resourceUri`` (and in the flat ``_meta["ui/resourceUri"]`` older hosts read, as the
extension's own ``registerAppTool`` still writes), and says who may call it in
``_meta.ui.visibility`` (``model``, ``app``; both when absent).

The extension is negotiated under ``capabilities.extensions``: the server declares it when it
has a view or a tool with one, and a client declares it with the MIME types it renders. A client
that did not declare it cannot show views, and so would hand an app-only tool to its model: such
tools are left out of its ``tools/list``.

None of these names is in the pinned protocol schemas; they are the extension's
(``specification/2026-01-26/apps.mdx`` of github.com/modelcontextprotocol/ext-apps).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

from typing_extensions import TypedDict

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = [
    "UI_EXTENSION",
    "UI_MIME_TYPE",
    "UiTool",
    "content_meta",
    "for_client",
    "resource_meta",
    "tool_meta",
]

#: The extension's identifier: its key in ``capabilities.extensions``.
UI_EXTENSION: Final = "io.modelcontextprotocol/ui"
#: The MIME type of an HTML view.
UI_MIME_TYPE: Final = "text/html;profile=mcp-app"
_SCHEME: Final = "ui://"
#: The ``_meta`` member the extension's metadata lives under.
_UI: Final = "ui"
#: The flat key before ``_meta.ui.resourceUri`` (deprecated by the extension, still read).
_LEGACY_RESOURCE_URI: Final = "ui/resourceUri"
_VISIBILITY: Final = ("model", "app")
_CSP: Final = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
_PERMISSIONS: Final = ("camera", "microphone", "geolocation", "clipboardWrite")


class UiTool(TypedDict, total=False):
    """A tool's ``_meta.ui``: its view, and who may call it."""

    resourceUri: str
    visibility: list[Literal["model", "app"]]


def _check_uri(uri: str, what: str) -> str:
    if not uri.startswith(_SCHEME) or len(uri) == len(_SCHEME):
        raise ValueError(f"{what}: an MCP Apps view's URI starts with 'ui://', not {uri!r}")
    return uri


def tool_meta(ui: str | UiTool, meta: Mapping[str, Any] | None, name: str) -> dict[str, Any]:
    """A tool's ``_meta`` with its view (``ValueError`` for a URI or visibility the extension
    does not have)."""
    linked: dict[str, Any] = {"resourceUri": ui} if isinstance(ui, str) else dict(ui)
    uri = linked.get("resourceUri")
    if not isinstance(uri, str):
        raise ValueError(f"tool {name!r}: ui= needs a 'resourceUri'")
    _check_uri(uri, f"tool {name!r}")
    visibility = linked.get("visibility")
    if visibility is not None:
        if not visibility or not set(visibility) <= set(_VISIBILITY):
            raise ValueError(
                f"tool {name!r}: visibility is a non-empty list of 'model' and 'app', "
                f"not {visibility!r}"
            )
        linked["visibility"] = list(visibility)
    out = dict(meta or {})
    out[_UI] = {**out.get(_UI, {}), **linked}
    out[_LEGACY_RESOURCE_URI] = uri
    return out


def resource_meta(
    uri: str,
    *,
    csp: Mapping[str, Sequence[str]] | None,
    permissions: Iterable[str] | None,
    domain: str | None,
    prefers_border: bool | None,
) -> dict[str, Any]:
    """A view's ``_meta`` (``{"ui": {...}}``, possibly empty); ``ValueError`` for a URI outside
    ``ui://``, an unknown CSP member or permission."""
    _check_uri(uri, f"UI resource {uri!r}")
    ui: dict[str, Any] = {}
    if csp is not None:
        unknown = sorted(set(csp) - set(_CSP))
        if unknown:
            raise ValueError(f"UI resource {uri!r}: unknown CSP members {unknown}: use {_CSP}")
        ui["csp"] = {key: [str(origin) for origin in origins] for key, origins in csp.items()}
    if permissions is not None:
        wanted = [permissions] if isinstance(permissions, str) else list(permissions)
        unknown = sorted(set(wanted) - set(_PERMISSIONS))
        if unknown:
            raise ValueError(
                f"UI resource {uri!r}: unknown permissions {unknown}: use {_PERMISSIONS}"
            )
        ui["permissions"] = {permission: {} for permission in wanted}
    if domain is not None:
        ui["domain"] = domain
    if prefers_border is not None:
        ui["prefersBorder"] = prefers_border
    return {_UI: ui}


def content_meta(
    contents: list[dict[str, Any]], mime_type: str | None, meta: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """A view's contents with its ``_meta.ui`` (hosts read it from the contents first)."""
    if mime_type != UI_MIME_TYPE or not meta or not meta.get(_UI):
        return contents
    return [{**item, "_meta": {**item.get("_meta", {}), _UI: meta[_UI]}} for item in contents]


def supports_ui(capabilities: JsonValue) -> bool:
    """Whether a client declared the extension (``capabilities.extensions``)."""
    extensions: JsonValue = (
        capabilities.get("extensions") if isinstance(capabilities, dict) else None
    )
    return isinstance(extensions, dict) and isinstance(extensions.get(UI_EXTENSION), dict)


def for_client(tools: list[dict[str, Any]], capabilities: Any) -> list[dict[str, Any]]:
    """The tools a client should list: without the extension, not the app-only ones."""
    if supports_ui(capabilities):
        return tools
    return [tool for tool in tools if _model_visible(tool)]


def _model_visible(tool: dict[str, Any]) -> bool:
    meta: dict[str, Any] = tool.get("_meta") or {}
    ui: JsonValue = meta.get(_UI)
    visibility = ui.get("visibility") if isinstance(ui, dict) else None
    return visibility is None or "model" in visibility


def has_views(tools: Iterable[Any], resources: Iterable[Any]) -> bool:
    """Whether the app has anything of the extension: a view, or a tool naming one."""
    return any(r.mime_type == UI_MIME_TYPE for r in resources) or any(
        bool(t.meta) and isinstance(t.meta.get(_UI), dict) for t in tools
    )
