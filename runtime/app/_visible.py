"""What clients see of an app's registries: ``enable``/``disable`` (the rules of
``_visibility``, set at run time, with the clients told of the lists that changed) and the
lookups the handlers make, which honour them. A base of ``App``, kept apart to keep it small."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

from mcpbind.runtime.endpoints.server import Server

from ._completion import values_of
from ._prompts import PromptEntry
from ._resources import ResourceEntry
from ._tools import ToolEntry
from ._visibility import Visibility

if TYPE_CHECKING:
    from ._uri_template import Values

__all__ = ["VisibleRegistries"]


class VisibleRegistries:
    """What ``App`` has that these need, and the methods."""

    server: Server
    tools: dict[str, ToolEntry]
    resources: dict[str, ResourceEntry]
    prompts: dict[str, PromptEntry]
    visibility: Visibility

    def _changed(self, notify: Callable[[], Coroutine[Any, Any, int]]) -> None:
        raise NotImplementedError  # App's

    def described(self, kind: str) -> list[dict[str, Any]]:
        """The newest-shape descriptions of one registry, for its list."""
        # Copied first (one C-level step under the GIL): a sync tool may add or remove entries
        # from its worker thread meanwhile.
        shown = self.visibility.shown
        if kind == "tools":
            return [entry.describe() for entry in list(self.tools.values()) if shown(entry)]
        if kind == "prompts":
            return [entry.describe() for entry in list(self.prompts.values()) if shown(entry)]
        templates = kind == "resourceTemplates"
        entries = list(self.resources.values())
        return [e.describe() for e in entries if e.is_template == templates and shown(e)]

    def find_tool(self, name: str) -> ToolEntry | None:
        """The enabled tool of that name."""
        entry = self.tools.get(name)
        return entry if entry is not None and self.visibility.shown(entry) else None

    def find_prompt(self, name: str) -> PromptEntry | None:
        """The enabled prompt of that name."""
        entry = self.prompts.get(name)
        return entry if entry is not None and self.visibility.shown(entry) else None

    def find_resource(self, uri: str) -> tuple[ResourceEntry, Values] | None:
        """The enabled resource ``uri`` names (a static one first, then the first matching
        template)."""
        shown = self.visibility.shown
        entry = self.resources.get(uri)
        if entry is not None and not entry.is_template and shown(entry):
            return entry, {}
        for entry in list(self.resources.values()):
            if entry.is_template and shown(entry):
                variables = entry.match(uri)
                if variables is not None:
                    return entry, variables
        return None

    def argument_choices(self, ref_type: str, target: str, name: str) -> list[str] | None:
        """The values of a ``Literal``/``Enum`` prompt argument or template variable."""
        if ref_type == "ref/prompt":
            entry: PromptEntry | ResourceEntry | None = self.find_prompt(target)
        else:
            entry = self.resources.get(target)
        if entry is None or not self.visibility.shown(entry):
            return None
        return values_of(entry.signature.hints.get(name))

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
