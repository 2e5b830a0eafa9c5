"""Mark the fields where a model narrows a field of its base, which pyright would reject.

A schema that extends a definition through ``allOf`` becomes a subclass, and may pin a field of
the base: ``URLElicitationRequiredError``'s error is an ``Error`` whose ``code`` is the constant
``-32042`` and whose optional ``data`` is required. pydantic validates the narrowed field, and
keeping the subclass keeps ``isinstance(error, Error)``; but pydantic fields are mutable, so a
checker calls the narrower type an incompatible override (an ``Error`` may be given any code),
and a field without a default over one with a default a dataclass error. The subclass is what
the schema says, so each such line carries pyright's ignore for exactly that rule (one line, so
that black keeps the comment on the line pyright reports), and the comment above says why.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

__all__ = ["mark_narrowed_overrides"]

NARROWED = "reportIncompatibleVariableOverride"
NOW_REQUIRED = "reportGeneralTypeIssues"
WHY = "# The schema narrows the base's field here (see mcpbind.codegen.emit.overrides).\n"


@dataclass(frozen=True)
class _Field:
    annotation: str
    has_default: bool


def mark_narrowed_overrides(source: str) -> str:
    """``source`` (a ``types.py``) with each narrowing override marked for pyright."""
    tree = ast.parse(source)
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    lines = source.splitlines(keepends=True)
    for node in reversed(list(classes.values())):
        inherited = _inherited(node, classes)
        for statement in reversed(node.body):
            if not (
                isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
            ):
                continue
            base = inherited.get(statement.target.id)
            if base is None:
                continue
            rules = _rules(base, _field(statement))
            if rules:
                index = statement.lineno - 1
                line = lines[index].rstrip("\n")
                indent = line[: len(line) - len(line.lstrip())]
                lines[index] = f"{line}  # pyright: ignore[{', '.join(rules)}]\n"
                lines.insert(index, indent + WHY)
    return "".join(lines)


def _field(statement: ast.AnnAssign) -> _Field:
    return _Field(ast.unparse(statement.annotation), statement.value is not None)


def _inherited(node: ast.ClassDef, classes: dict[str, ast.ClassDef]) -> dict[str, _Field]:
    """The fields ``node``'s bases in this module declare, the nearest base's first."""
    found: dict[str, _Field] = {}
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in classes:
            parent = classes[base.id]
            own = {
                s.target.id: _field(s)
                for s in parent.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            }
            for name, field in {**_inherited(parent, classes), **own}.items():
                found.setdefault(name, field)
    return found


def _rules(base: _Field, override: _Field) -> list[str]:
    """What pyright reports: a different type (``Any`` in the base accepts any), a lost default."""
    rules: list[str] = []
    if override.annotation != base.annotation and "Any" not in base.annotation:
        rules.append(NARROWED)
    if base.has_default and not override.has_default:
        rules.append(NOW_REQUIRED)
    return rules
