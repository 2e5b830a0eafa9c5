"""``mcpbind diff rules``: every rule, as text (one line each), Markdown or JSON.

JSON is ``taxonomy.rule_listing`` under ``{"rules": [...], "categories": {...}}``: each rule with
its severity, whether it can break the bindings, the keyword it reads, its tags and categories,
and what it means; each category with what it holds.
"""

from __future__ import annotations

import json

from .report import Only
from .rules import Rule
from .taxonomy import CATEGORIES, RULE_DOCS, TAGS, can_break_bindings, rule_listing, rule_severity

__all__ = ["render_rules"]


def _listed(rule: Rule, only: Only | None) -> bool:
    """``--only`` for rules: a severity word matches a rule that can be that severe."""
    if only is None:
        return True
    if only.words and not any(
        can_break_bindings(rule) if word == "bindings" else word in rule_severity(rule).split("..")
        for word in only.words
    ):
        return False
    return only.rules is None or rule in only.rules


def render_rules(fmt: str = "text", only: Only | None = None) -> str:
    """The rules ``only`` selects (every rule when None) in ``fmt``: text, markdown or json."""
    chosen = [rule for rule in RULE_DOCS if _listed(rule, only)]
    selected = frozenset(chosen)
    if fmt == "json":
        document = {
            "rules": rule_listing(selected),
            "categories": {name: category.doc for name, category in CATEGORIES.items()},
        }
        return json.dumps(document, indent=2) + "\n"
    if fmt == "markdown":
        lines: list[str] = [
            "| rule | severity | direction | area | kind | action |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for rule in chosen:
            tags = TAGS[rule]
            lines.append(
                f"| `{rule.value}` | {rule_severity(rule)} | {tags.direction.value} | "
                f"{tags.area.value} | {tags.kind.value} | {tags.action.value} |"
            )
        return "\n".join(lines) + "\n"
    width = max(len(rule.value) for rule in chosen) if chosen else 0
    severity_width = max((len(rule_severity(rule)) for rule in chosen), default=0)
    lines = []
    for rule in chosen:
        first = RULE_DOCS[rule].split(". ", 1)[0].rstrip(".") + "."
        severity = rule_severity(rule).ljust(severity_width)
        lines.append(f"{rule.value.ljust(width)}  {severity}  {first}")
    return "\n".join(lines) + "\n"
