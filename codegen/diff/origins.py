"""Where a change of a layered diff comes from: the revision itself, or an extension over it.

A side's ``Origins`` name what its extensions brought (``layers``): the definitions each added
(the revision had none of that name), the definitions the IR hoisted out of those, and the methods
and notifications each joined to the method table. A change is an extension's when what it is
about was the extension's on either side, the NEW side's label first:

* a definition's change (at any path inside it) by the definition it is reported under, and a
  rename by either name;
* a method's or notification's change by its method name;
* a union's member added by the member on the NEW side, one removed by the member on the OLD
  side (else by the union), so ``ClientRequest`` gaining the extension's ``UpdateTaskRequest`` is
  the extension's, while ``ServerResult`` losing 2025-11-25's ``GetTaskResult`` is the revision's.

A definition the revision and the extension both define keeps the revision's copy (``layers``),
so its changes are the revision's; a definition only the extension defines on one side (the
2025-11-25 core ``Task`` against the tasks extension's) is the extension's. Changes of the
capability tables and of the document are always the revision's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ..ir import RevisionIR
from .model import Change, Subject
from .rules import Rule

__all__ = ["Origins", "attribute", "extension_name", "mark"]


@dataclass(frozen=True)
class Origins:
    """One side's names that came from an extension, each mapped to the extension's label
    (``tasks@2026-08-21``); empty for a side without extensions."""

    definitions: Mapping[str, str] = field(default_factory=dict[str, str])
    methods: Mapping[str, str] = field(default_factory=dict[str, str])

    def with_hoisted(self, ir: RevisionIR) -> Origins:
        """These origins plus the definitions ``ir`` hoisted out of an extension's definition."""
        if not self.definitions:
            return self
        found = dict(self.definitions)
        for name, definition in ir.definitions.items():
            if definition.origin is None or name in found:
                continue
            owner = definition.origin.removeprefix("#/$defs/").split("/", 1)[0]
            if owner in self.definitions:
                found[name] = self.definitions[owner]
        return replace(self, definitions=found)


def extension_name(origin: str) -> str:
    """``tasks@2026-08-21`` -> ``tasks``: the name a selector and the short mark use."""
    return origin.partition("@")[0]


def mark(origin: str | None) -> str:
    """The suffix the human formats give a change an extension brought: `` [tasks]``."""
    return f" [{extension_name(origin)}]" if origin else ""


def _origin(change: Change, old: Origins, new: Origins) -> str | None:
    if change.subject in (Subject.METHOD, Subject.NOTIFICATION):
        looked = [(new.methods, change.name), (old.methods, change.name)]
    elif change.subject is not Subject.DEFINITION:
        return None
    elif change.rule is Rule.UNION_MEMBER_ADDED:  # the side the member is on
        looked = [(new.definitions, str(change.new))]
    elif change.rule is Rule.UNION_MEMBER_REMOVED:
        looked = [(old.definitions, str(change.old))]
    elif change.rule is Rule.DEFINITION_RENAMED:
        looked = [(new.definitions, str(change.new)), (old.definitions, str(change.old))]
    else:
        looked = []
    if change.subject is Subject.DEFINITION:
        looked += [(new.definitions, change.name), (old.definitions, change.name)]
    return next((table[name] for table, name in looked if name in table), None)


def attribute(changes: list[Change], old: Origins, new: Origins) -> list[Change]:
    """``changes`` with ``origin`` set on those an extension brought (see the docstring)."""
    if not (old.definitions or old.methods or new.definitions or new.methods):
        return changes
    out: list[Change] = []
    for change in changes:
        origin = _origin(change, old, new)
        out.append(change if origin is None else replace(change, origin=origin))
    return out
