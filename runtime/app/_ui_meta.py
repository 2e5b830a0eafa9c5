"""MCP Apps metadata at registration (``_ui`` says what the extension is): a tool's
``_meta.ui`` with its view and who may call it, and a view's security and rendering wishes,
checked. Apart from ``_ui`` so that an app without views never loads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

from typing_extensions import TypedDict

from ._ui import UI_META

__all__ = ["UiTool", "resource_meta", "tool_meta"]

_SCHEME: Final = "ui://"
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
    out[UI_META] = {**out.get(UI_META, {}), **linked}
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
    return {UI_META: ui}
