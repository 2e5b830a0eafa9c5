"""The rules of ``Visibility`` (``_visibility`` says what they mean): a rule names components
by name, tag and kind; the last rule that matches a component decides. Loaded by the first rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

from ._prompts import PromptEntry
from ._resources import ResourceEntry
from ._tools import ToolEntry

__all__ = ["KINDS", "Entry", "Kind", "Rule", "added", "kind_of", "visible"]

Entry = ToolEntry | ResourceEntry | PromptEntry

Kind = Literal["tool", "resource", "template", "prompt"]
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


def added(
    rules: list[Rule],
    enabled: bool,
    names: str | Iterable[str] | None,
    tags: str | Iterable[str] | None,
    components: str | Iterable[str] | None,
) -> list[Rule]:
    """``rules`` with a new one last; ``ValueError`` without any criterion or for an unknown
    kind."""
    rule = Rule(enabled, _frozen(names), _frozen(tags), _frozen(components))
    if rule.names is None and rule.tags is None and rule.kinds is None:
        raise ValueError("name the components: names=, tags= or components=")
    if rule.kinds is not None and not rule.kinds <= set(KINDS):
        unknown = sorted(rule.kinds - set(KINDS))
        raise ValueError(f"unknown component kinds {unknown}: use {list(KINDS)}")
    # A rule with the same target supersedes the older one: toggling keeps the list short.
    return [*(old for old in rules if not old.same_target(rule)), rule]


def visible(rules: list[Rule], entry: Entry) -> bool:
    """Whether the last rule matching ``entry`` enables it (no rule matching: it does)."""
    kind, name = kind_of(entry)
    for rule in reversed(rules):
        if rule.matches(kind, name, entry.tags):
            return rule.enabled
    return True


def kind_of(entry: Entry) -> tuple[Kind, str]:
    """The kind of a registered entry and the name rules know it by."""
    if isinstance(entry, ToolEntry):
        return "tool", entry.name
    if isinstance(entry, PromptEntry):
        return "prompt", entry.name
    return ("template" if entry.is_template else "resource"), entry.uri
