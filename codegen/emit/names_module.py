"""Emit ``names.py``: every MCP method name and reserved ``_meta`` key, as a constant.

The module is revision-independent: the union over every revision in the generated index, plus
the methods of the extensions the runtime speaks (``ir.extensions``). A revision generated in this
run contributes its IR; one already generated and kept (``mcpbind generate 2025-11-25`` leaves the
others as they are) contributes what its ``methods.py`` lists, which the generator wrote from its
IR, so the module never depends on which revisions a run regenerates.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from ..errors import CodegenError
from ..ir import RevisionIR
from ..ir.extensions import EXTENSIONS
from .names import constant, snake

__all__ = ["NameView", "RevisionNames", "name_views", "names_of", "read_names"]

# The classes a generated ``methods.py`` builds its constants with (``methods.py.jinja``).
_REQUEST_SPECS = frozenset({"MethodSpec", "PaginatedMethodSpec"})
_NOTIFICATION_SPEC = "NotificationSpec"
_META_KEYS = "META_KEYS"
_SECTIONS = ("requests", "notifications", "meta_keys")


@dataclass(frozen=True)
class RevisionNames:
    """The names one revision defines."""

    revision: str
    requests: tuple[str, ...]
    notifications: tuple[str, ...]
    meta_keys: tuple[str, ...]


@dataclass(frozen=True)
class NameView:
    """One constant of ``names.py``: its Python name, its value, and where it exists."""

    const: str
    value: str
    where: str


def names_of(ir: RevisionIR) -> RevisionNames:
    return RevisionNames(
        ir.revision,
        tuple(m.method for m in ir.methods),
        tuple(n.method for n in ir.notifications),
        ir.meta_keys,
    )


def _spec_class(call: ast.Call) -> str | None:
    func = call.func.value if isinstance(call.func, ast.Subscript) else call.func
    return func.id if isinstance(func, ast.Name) else None


def _keyword(call: ast.Call, name: str) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == name and isinstance(keyword.value, ast.Constant):
            value = keyword.value.value
            return value if isinstance(value, str) else None
    return None


def _strings(node: ast.expr) -> list[str] | None:
    """The strings of ``frozenset({...})`` / ``frozenset()``, or None for anything else."""
    if not (isinstance(node, ast.Call) and _spec_class(node) == "frozenset"):
        return None
    if not node.args:
        return []
    items = node.args[0]
    if not isinstance(items, ast.Set):
        return None
    values = [e.value for e in items.elts if isinstance(e, ast.Constant)]
    strings = [v for v in values if isinstance(v, str)]
    return strings if len(strings) == len(items.elts) else None


def read_names(revision: str, methods_py: Path) -> RevisionNames:
    """The names a generated revision's ``methods.py`` lists (a revision kept, not regenerated)."""
    try:
        tree = ast.parse(methods_py.read_text(encoding="utf-8"), str(methods_py))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError) as exc:
        raise CodegenError(f"cannot read the method table {methods_py}: {exc}") from None
    requests: list[str] = []
    notifications: list[str] = []
    meta_keys: list[str] | None = None
    for statement in tree.body:
        if not isinstance(statement, ast.AnnAssign) or statement.value is None:
            continue
        target, value = statement.target, statement.value
        if isinstance(target, ast.Name) and target.id == _META_KEYS:
            meta_keys = _strings(value)
        elif isinstance(value, ast.Call):
            method, spec = _keyword(value, "method"), _spec_class(value)
            if method is not None and spec in _REQUEST_SPECS:
                requests.append(method)
            elif method is not None and spec == _NOTIFICATION_SPEC:
                notifications.append(method)
    if meta_keys is None or not requests:
        raise CodegenError(
            f"{methods_py} is not a method table this generator wrote "
            f"(no {_META_KEYS} or no method): regenerate revision {revision}"
        )
    return RevisionNames(revision, tuple(requests), tuple(notifications), tuple(sorted(meta_keys)))


def _span(found_in: list[str], revisions: list[str]) -> str:
    """``every revision``, or the runs of consecutive revisions: ``2024-11-05 to 2025-11-25``."""
    if found_in == revisions:
        return "every revision"
    runs: list[list[str]] = []
    for revision in found_in:
        follows = runs and revisions.index(revision) == revisions.index(runs[-1][-1]) + 1
        if follows:
            runs[-1].append(revision)
        else:
            runs.append([revision])
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]} to {run[-1]}" for run in runs)


def _where(found_in: list[str], revisions: list[str], extensions: list[str]) -> str:
    """Where a name exists: revisions (see :func:`_span`), then extensions."""
    spans = [_span(found_in, revisions)] if found_in else []
    return "; ".join(spans + extensions)


def _meta_const(key: str) -> str:
    """``io.modelcontextprotocol/protocolVersion`` -> ``META_PROTOCOL_VERSION``."""
    return "META_" + snake(key.rsplit("/", 1)[-1]).upper()


def name_views(per_revision: list[RevisionNames]) -> dict[str, list[NameView]]:
    """The constants of ``names.py`` by section (requests, notifications, meta keys), sorted by
    value; ``CodegenError`` when two values would share a Python name."""
    revisions = sorted(r.revision for r in per_revision)
    found: dict[str, dict[str, list[str]]] = {section: {} for section in _SECTIONS}
    for names in sorted(per_revision, key=lambda r: r.revision):
        for section, values in (
            ("requests", names.requests),
            ("notifications", names.notifications),
            ("meta_keys", names.meta_keys),
        ):
            for value in values:
                found[section].setdefault(value, []).append(names.revision)
    extended: dict[str, dict[str, list[str]]] = {section: {} for section in _SECTIONS}
    for extension in EXTENSIONS:
        for section, values in (
            ("requests", extension.requests),
            ("notifications", extension.notifications),
        ):
            for value in values:
                extended[section].setdefault(value, []).append(extension.label)
    sections: dict[str, list[NameView]] = {}
    owner: dict[str, str] = {}
    for section, defined in found.items():
        every = defined.keys() | extended[section].keys()
        naming = _meta_const if section == "meta_keys" else constant
        consts = [(value, naming(value)) for value in sorted(every)]
        for value, const in consts:
            if owner.setdefault(const, value) != value:
                raise CodegenError(
                    f"{value!r} and {owner[const]!r} would both be names.{const}: rename one"
                )
        sections[section] = [
            NameView(
                const,
                value,
                _where(defined.get(value, []), revisions, extended[section].get(value, [])),
            )
            for value, const in consts
        ]
    return sections
