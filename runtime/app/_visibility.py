"""Which registered components clients see: tags and ``enable``/``disable`` rules.

The model is FastMCP's (3.x ``enable``/``disable``, 2.x ``enabled=``), so its users find what
they know: a rule names components by name (a tool's or prompt's name, a resource's URI, a
template's URI template), by tag (one shared tag is enough) and by kind, and acts on the
components matching every criterion given. Rules stack: the last one that matches a component
decides, and a component no rule matches is enabled. A disabled component is neither listed nor
reachable (calling it is the same error as calling an unknown one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal, get_args

from ._prompts import PromptEntry
from ._resources import ResourceEntry
from ._tools import ToolEntry

__all__ = ["KINDS", "Entry", "Kind", "Rule", "Visibility", "kind_of"]

Kind = Literal["tool", "resource", "template", "prompt"]

Entry = ToolEntry | ResourceEntry | PromptEntry

#: The app's registries in this order: tools, resources (and templates), prompts.
Registries = tuple[Mapping[str, ToolEntry], Mapping[str, ResourceEntry], Mapping[str, PromptEntry]]

KINDS: tuple[Kind, ...] = get_args(Kind)


class Rule:
    """Enable or disable what matches every criterion given (None: any); read-only by
    convention, compared with ``same_target``."""

    # A plain class: a frozen dataclass compiles five methods when defined, about 4.4 M
    # instructions of every app's start-up.
    __slots__ = ("enabled", "kinds", "names", "tags")

    def __init__(
        self,
        enabled: bool,
        names: frozenset[str] | None,
        tags: frozenset[str] | None,
        kinds: frozenset[str] | None,
    ) -> None:
        self.enabled = enabled
        self.names = names
        self.tags = tags
        self.kinds = kinds

    def matches(self, kind: Kind, name: str, tags: frozenset[str]) -> bool:
        return (
            (self.kinds is None or kind in self.kinds)
            and (self.names is None or name in self.names)
            and (self.tags is None or not self.tags.isdisjoint(tags))
        )

    def same_target(self, other: Rule) -> bool:
        return (self.names, self.tags, self.kinds) == (other.names, other.tags, other.kinds)


def _frozen(values: str | Iterable[str] | None) -> frozenset[str] | None:
    if values is None:
        return None
    return frozenset([values] if isinstance(values, str) else values)


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
        rule = Rule(enabled, _frozen(names), _frozen(tags), _frozen(components))
        if rule.names is None and rule.tags is None and rule.kinds is None:
            raise ValueError("name the components: names=, tags= or components=")
        if rule.kinds is not None and not rule.kinds <= set(KINDS):
            unknown = sorted(rule.kinds - set(KINDS))
            raise ValueError(f"unknown component kinds {unknown}: use {list(KINDS)}")
        # A rule with the same target supersedes the older one: toggling keeps the list short.
        self.rules = [old for old in self.rules if not old.same_target(rule)]
        self.rules.append(rule)

    def visible(self, kind: Kind, name: str, tags: frozenset[str]) -> bool:
        for rule in reversed(self.rules):
            if rule.matches(kind, name, tags):
                return rule.enabled
        return True

    def shown(self, entry: Entry) -> bool:
        """Whether clients see ``entry``."""
        if not self.rules:  # nothing disabled, the usual case: asked on every call and read
            return True
        kind, name = kind_of(entry)
        return self.visible(kind, name, entry.tags)

    def register(self, entry: Entry, tags: str | Iterable[str], enabled: bool) -> None:
        """Tag a new entry; ``enabled=False`` registers it disabled (a ``disable`` rule)."""
        entry.tags = frozenset(_frozen(tags) or ())
        if not enabled:
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


def kind_of(entry: Entry) -> tuple[Kind, str]:
    """The kind of a registered entry and the name rules know it by."""
    if isinstance(entry, ToolEntry):
        return "tool", entry.name
    if isinstance(entry, PromptEntry):
        return "prompt", entry.name
    return ("template" if entry.is_template else "resource"), entry.uri
