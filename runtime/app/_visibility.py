"""Which registered components clients see: tags and ``enable``/``disable`` rules.

The model is FastMCP's (3.x ``enable``/``disable``, 2.x ``enabled=``), so its users find what
they know: a rule names components by name (a tool's or prompt's name, a resource's URI, a
template's URI template), by tag (one shared tag is enough) and by kind, and acts on the
components matching every criterion given. Rules stack: the last one that matches a component
decides, and a component no rule matches is enabled. A disabled component is neither listed nor
reachable (calling it is the same error as calling an unknown one).

The rules themselves (matching, adding, what a change shows or hides) are in ``_rules.py``,
loaded by the first rule: an app that never disables anything asks only ``shown``'s fast path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ._prompts import PromptEntry
from ._resources import ResourceEntry
from ._tools import ToolEntry

if TYPE_CHECKING:
    from ._rules import Entry, Rule

__all__ = ["Registries", "Visibility"]

#: The app's registries in this order: tools, resources (and templates), prompts.
Registries = tuple[Mapping[str, ToolEntry], Mapping[str, ResourceEntry], Mapping[str, PromptEntry]]


class Visibility:
    """The rules of one app, in the order they were given."""

    def __init__(self) -> None:
        self.rules: list[Rule] = []

    def add(
        self,
        enabled: bool,
        names: str | Iterable[str] | None,
        tags: str | Iterable[str] | None,
        components: str | Iterable[str] | None,
    ) -> None:
        """Add a rule; ``ValueError`` without any criterion or for an unknown kind."""
        from ._rules import added

        self.rules = added(self.rules, enabled, names, tags, components)

    def shown(self, entry: Entry) -> bool:
        """Whether clients see ``entry``."""
        if not self.rules:  # nothing disabled, the usual case: asked on every call and read
            return True
        from ._rules import visible

        return visible(self.rules, entry)

    def register(self, entry: Entry, tags: str | Iterable[str], enabled: bool) -> None:
        """Tag a new entry; ``enabled=False`` registers it disabled (a ``disable`` rule)."""
        entry.tags = frozenset([tags] if isinstance(tags, str) else tags or ())
        if not enabled:
            from ._rules import kind_of

            kind, name = kind_of(entry)
            self.add(False, name, None, kind)

    def change(
        self,
        enabled: bool,
        names: str | Iterable[str] | None,
        tags: str | Iterable[str] | None,
        components: str | Iterable[str] | None,
        registries: Registries,
    ) -> list[str]:
        """Add a rule; the lists it changed (``tools``, ``resources``, ``prompts``), whose
        clients are to be told: none when nothing visible changed."""
        before = self._shown_keys(registries)
        self.add(enabled, names, tags, components)
        after = self._shown_keys(registries)
        return [key for key in before if before[key] != after[key]]

    def _shown_keys(self, registries: Registries) -> dict[str, set[str]]:
        tools, resources, prompts = registries
        shown = self.shown
        return {
            "tools": {name for name, e in list(tools.items()) if shown(e)},
            "resources": {uri for uri, e in list(resources.items()) if shown(e)},
            "prompts": {name for name, e in list(prompts.items()) if shown(e)},
        }
