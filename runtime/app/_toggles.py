"""``App.enable``/``App.disable``: the visibility rules (``_visibility``) set at run time, and
the clients told of the lists that changed. A base of ``App``, kept apart to keep it small."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from mcpbind.runtime.endpoints.server import Server

from ._prompts import PromptEntry
from ._resources import ResourceEntry
from ._tools import ToolEntry
from ._visibility import Visibility

__all__ = ["Toggles"]


class Toggles:
    """What ``App`` has that enabling and disabling needs, and the two methods."""

    server: Server
    tools: dict[str, ToolEntry]
    resources: dict[str, ResourceEntry]
    prompts: dict[str, PromptEntry]
    visibility: Visibility

    def _changed(self, notify: Callable[[], Coroutine[Any, Any, int]]) -> None:
        raise NotImplementedError  # App's

    def disable(
        self,
        *,
        names: str | Iterable[str] | None = None,
        tags: str | Iterable[str] | None = None,
        components: str | Iterable[str] | None = None,
    ) -> None:
        """Hide the components matching every criterion given: ``names`` (a tool's or
        prompt's name, a resource's URI, a template's URI template), ``tags`` (any one),
        ``components`` (``tool``, ``resource``, ``template``, ``prompt``). They are not
        listed, and calling or reading one is the error an unknown one gets. Clients are
        told when a list changes."""
        self._set_visibility(False, names, tags, components)

    def enable(
        self,
        *,
        names: str | Iterable[str] | None = None,
        tags: str | Iterable[str] | None = None,
        components: str | Iterable[str] | None = None,
    ) -> None:
        """Show the components matching every criterion given again (see ``disable``; the
        latest rule that matches a component decides)."""
        self._set_visibility(True, names, tags, components)

    def _set_visibility(
        self,
        enabled: bool,
        names: str | Iterable[str] | None,
        tags: str | Iterable[str] | None,
        components: str | Iterable[str] | None,
    ) -> None:
        lists = self.visibility.change(
            enabled, names, tags, components, (self.tools, self.resources, self.prompts)
        )
        notify = {
            "tools": self.server.notify_tools_changed,
            "resources": self.server.notify_resources_changed,
            "prompts": self.server.notify_prompts_changed,
        }
        for key in lists:
            self._changed(notify[key])
