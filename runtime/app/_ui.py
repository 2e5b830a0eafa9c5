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
(``specification/2026-01-26/apps.mdx`` of github.com/modelcontextprotocol/ext-apps). What
serving needs is here; the metadata a view or a tool with one is registered with (``UiTool``,
its checks) is in ``_ui_meta.py``, loaded by the first of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from mcpbind.runtime.core.jsonvalue import JsonValue

__all__ = ["UI_EXTENSION", "UI_META", "UI_MIME_TYPE", "content_meta", "for_client", "has_views"]

#: The extension's identifier: its key in ``capabilities.extensions``.
UI_EXTENSION: Final = "io.modelcontextprotocol/ui"
#: The MIME type of an HTML view.
UI_MIME_TYPE: Final = "text/html;profile=mcp-app"
#: The ``_meta`` member the extension's metadata lives under.
UI_META: Final = "ui"


def content_meta(
    contents: list[dict[str, Any]], mime_type: str | None, meta: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """A view's contents with its ``_meta.ui`` (hosts read it from the contents first)."""
    if mime_type != UI_MIME_TYPE or not meta or not meta.get(UI_META):
        return contents
    return [
        {**item, "_meta": {**item.get("_meta", {}), UI_META: meta[UI_META]}} for item in contents
    ]


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
    ui: JsonValue = meta.get(UI_META)
    visibility = ui.get("visibility") if isinstance(ui, dict) else None
    return visibility is None or "model" in visibility


def has_views(tools: Iterable[Any], resources: Iterable[Any]) -> bool:
    """Whether the app has anything of the extension: a view, or a tool naming one."""
    return any(r.mime_type == UI_MIME_TYPE for r in resources) or any(
        bool(t.meta) and isinstance(t.meta.get(UI_META), dict) for t in tools
    )
