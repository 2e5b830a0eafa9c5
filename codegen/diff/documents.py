"""What the diff reads beyond the IR: the document's dialect, ``@deprecated`` marks in
``schema.ts``, and the fix-ups each side received.

``schema.json`` is generated from ``schema.ts`` and drops its JSDoc tags, so deprecations are read
from the TypeScript source next to it (see ``load.load_schema_ts``). The parser knows just enough
TypeScript for the schema files: a doc comment applies to the next declaration, ``export
interface|type X`` or a member ``name?: ...`` directly inside such a declaration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import rules
from .model import Finding, Subject
from .origins import Origins
from .rules import Rule

_DECLARATION = re.compile(r"^\s*export\s+(?:interface|type|const|enum|class)\s+(\w+)")
_MEMBER = re.compile(r"""^\s*(?:readonly\s+)?["']?([\w./-]+)["']?\??\s*:""")


@dataclass(frozen=True)
class SideInfo:
    """One side of a diff beyond its IR. ``deprecated`` is None when no ``schema.ts`` was found;
    ``origins`` names what its extensions brought."""

    label: str
    dialect: str | None
    deprecated: frozenset[str] | None
    fixups: tuple[str, ...]
    notes: tuple[str, ...] = ()
    origins: Origins = field(default_factory=Origins)


def deprecations(source: str) -> frozenset[str]:
    """``Name`` and ``Name.member`` of every declaration whose doc comment has ``@deprecated``."""
    found: set[str] = set()
    current: str | None = None
    depth = 0
    in_comment = False
    pending = False
    comment: list[str] = []
    for line in source.splitlines():
        stripped = line.strip()
        if in_comment or stripped.startswith("/**"):
            in_comment = "*/" not in stripped
            comment.append(stripped)
            if not in_comment:
                pending = any("@deprecated" in part for part in comment)
                comment = []
            continue
        if not stripped or stripped.startswith("//"):
            continue
        declared = _DECLARATION.match(line)
        if declared and depth == 0:
            name: str = declared.group(1)
            current = name
            if pending:
                found.add(name)
        elif current is not None and depth == 1:
            member = _MEMBER.match(line)
            if member and pending:
                found.add(f"{current}.{member.group(1)}")
        pending = False
        depth = max(0, depth + line.count("{") - line.count("}"))
        if depth == 0 and not declared:
            current = None
        elif depth == 0 and declared and "{" not in line:
            current = declared.group(1) if line.rstrip().endswith("=") else None
    return frozenset(found)


def _finding(
    rule: Rule, subject: Subject, path: str, what: str, old: object, new: object
) -> Finding:
    name = path.split(".", 1)[0]
    return Finding(rule, subject, name, path, what, rules.impact(rule), None, old, new)


def compare_documents(old: SideInfo, new: SideInfo) -> list[Finding]:
    """The dialect switch and deprecations added or lifted."""
    out: list[Finding] = []
    if old.dialect != new.dialect:
        what = f"JSON Schema dialect is now {new.dialect or 'unset'} (was {old.dialect or 'unset'})"
        out.append(
            _finding(
                Rule.DIALECT_CHANGED, Subject.DOCUMENT, "$schema", what, old.dialect, new.dialect
            )
        )
    if old.deprecated is None or new.deprecated is None:
        return out
    for path in sorted(new.deprecated - old.deprecated):
        what = f"{path} is marked @deprecated in schema.ts"
        out.append(_finding(Rule.DEPRECATED, Subject.DEPRECATION, path, what, False, True))
    for path in sorted(old.deprecated - new.deprecated):
        what = f"{path} is no longer marked @deprecated in schema.ts"
        out.append(_finding(Rule.UNDEPRECATED, Subject.DEPRECATION, path, what, True, False))
    return out
