"""Rewrite datamodel-code-generator's ``types.py`` so that importing it is cheap.

Two things in its output cost import time, and neither is needed:

* ``from __future__ import annotations`` turns every field annotation into a string, and pydantic
  compiles and evaluates each string when it creates the class (a ``compile`` per field, most of
  the time a revision took to import). Evaluated by Python instead, the same annotations cost a
  fraction of that and resolve to the very same objects.
* When the references hold a cycle anywhere (the recursive JSON value aliases of 2026-07-28), the
  generator gives up ordering the module: it lists the remaining classes alphabetically, leaving
  forward references, and ends the module with ``model_rebuild()`` calls, each of which builds a
  model's validator and serializer at import although the base class asks for ``defer_build``.
  Forward references also left the rebuilt classes without their aliases at class creation.

So the top-level definitions are sorted into dependency order (stable: the generator's order
wherever the dependencies allow it), the future import and the rebuild calls are dropped, and a
reference that still points forward (a genuine cycle between classes) is quoted where it stands,
inside ``Annotated[...]`` so that a field's alias stays visible when its class is created; pydantic
resolves such a string from the module the first time the model is used.

A ``TypeAliasType``'s value is resolved as late, so its references (quoted ones included) may be
quoted too. When a cycle runs through aliases, one that names itself goes first: pyright cannot
resolve an alias's reference to itself when it reaches that alias through an earlier alias's
forward reference (``JSONObject`` naming ``"JSONValue"`` before ``JSONValue`` is defined), and
leaves the whole cycle unknown.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import CodegenError

__all__ = ["settle_definitions"]


@dataclass
class _Definition:
    """One top-level statement binding a name: a class, or an alias assignment."""

    index: int
    name: str
    node: ast.stmt
    text: str
    # Source lines before ``text`` (``text`` begins on line ``start + 1``).
    start: int
    # Names of other definitions needed when the statement runs (bases, values, defaults).
    hard: set[str] = field(default_factory=set[str])
    # Names needed only by field annotations or an alias's value, which may be quoted if need be.
    soft: set[str] = field(default_factory=set[str])
    # The value of ``Name = TypeAliasType("Name", value)``.
    alias_value: ast.expr | None = None


def settle_definitions(source: str) -> str:
    """``source`` (a generated ``types.py``) with its definitions in dependency order, evaluated
    annotations, and no ``model_rebuild()`` calls; the result is unformatted."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    header: list[str] = []
    definitions: list[_Definition] = []
    start = 0  # comments and blank lines before a statement travel with it
    for node in tree.body:
        first, start = start, node.end_lineno or start
        text = "".join(lines[first:start])
        if _is_future_import(node) or _is_rebuild_call(node):
            continue
        if _is_docstring(node) and definitions:
            # The docstring of the alias above it: they move together.
            definitions[-1].text += text
            continue
        if isinstance(node, ast.Import | ast.ImportFrom) or _is_docstring(node):
            if definitions:
                raise CodegenError(f"types.py: an import after the definitions: {text.strip()!r}")
            header.append(text)
            continue
        name = _bound_name(node)
        if name is None:
            raise CodegenError(f"types.py: an unexpected top-level statement: {text.strip()!r}")
        definitions.append(_Definition(len(definitions), name, node, text, first))
    tail = "".join(lines[start:])
    names = {d.name for d in definitions}
    if len(names) != len(definitions):
        raise CodegenError("types.py: a name is defined twice")
    for definition in definitions:
        _collect_references(definition, names)
    ordered = _order(definitions)
    defined: set[str] = set()
    body: list[str] = []
    for definition in ordered:
        # A class's own name is not bound while its body runs: a self-reference is quoted too.
        body.append(_quote_forward_references(definition, names - defined, source))
        defined.add(definition.name)
    return "".join(header) + "".join(body) + tail


def _is_future_import(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def _is_rebuild_call(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and node.value.func.attr == "model_rebuild"
    )


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _bound_name(node: ast.stmt) -> str | None:
    if isinstance(node, ast.ClassDef):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return target.id if isinstance(target, ast.Name) else None
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _names(nodes: Iterable[ast.AST | None], known: set[str]) -> set[str]:
    """Definitions named in ``nodes``; a name inside a string is no reference until evaluated."""
    found: set[str] = set()
    for node in nodes:
        if node is None:
            continue
        found.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in known)
    return found


def _collect_references(definition: _Definition, known: set[str]) -> None:
    node = definition.node
    value = _alias_value(node)
    if value is not None:
        definition.alias_value = value
        plain, quoted = _names([value], known), _quoted_names(value, known)
        if definition.name in plain | quoted:
            # Recursive: whatever it names may be quoted, so it can go first in its cycle.
            definition.soft = plain | quoted
        else:
            definition.hard, definition.soft = plain, quoted
        return
    if not isinstance(node, ast.ClassDef):
        definition.hard = _names([node], known) - {definition.name}
        return
    definition.hard = _names([*node.bases, *node.keywords, *node.decorator_list], known)
    for statement in node.body:
        if isinstance(statement, ast.AnnAssign):
            definition.soft |= _names([statement.annotation], known)
            definition.hard |= _names([statement.value], known)
        elif not _is_docstring(statement):
            # Anything else in a class body (a config, a method's signature) runs with the class.
            definition.hard |= _names([statement], known)
    if definition.name in definition.hard:
        raise CodegenError(f"types.py: class {definition.name} needs itself to be created")


def _alias_value(node: ast.stmt) -> ast.expr | None:
    """``value`` when ``node`` is ``Name = TypeAliasType("Name", value)``."""
    if (
        isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "TypeAliasType"
        and len(node.value.args) == 2
        and not node.value.keywords
    ):
        return node.value.args[1]
    return None


def _quoted_names(node: ast.AST, known: set[str]) -> set[str]:
    """Definitions named inside the strings of ``node`` (forward references)."""
    found: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            try:
                quoted = ast.parse(child.value, mode="eval")
            except SyntaxError:
                continue
            found |= _names([quoted], known)
    return found


def _order(definitions: list[_Definition]) -> list[_Definition]:
    """Each definition after what it needs, else in the generator's order.

    When only cycles are left, the first definition whose runtime needs are met goes next, and
    its annotations that point forward are quoted.
    """
    pending = {d.name: d for d in definitions}
    done: set[str] = set()
    ordered: list[_Definition] = []
    while pending:
        runnable = [d for d in pending.values() if d.hard <= done]
        ready = [d for d in runnable if d.soft - {d.name} <= done]
        if not ready:
            # Only cycles are left: an alias naming itself first (see the module docstring).
            ready = [d for d in runnable if d.alias_value and d.name in d.soft] or runnable
        if not ready:
            stuck = ", ".join(sorted(pending))
            raise CodegenError(f"types.py: definitions that need each other to run: {stuck}")
        chosen = min(ready, key=lambda d: d.index)
        ordered.append(chosen)
        done.add(chosen.name)
        del pending[chosen.name]
    return ordered


def _quote_forward_references(definition: _Definition, later: set[str], source: str) -> str:
    """The definition's text, each field annotation that cannot be evaluated in place quoted.

    Besides ``later`` definitions, that is a name an earlier statement of the class body binds
    (a field ``type`` with a default hides the builtin, and an evaluated annotation would find
    the default): pydantic evaluates a string in the module's namespace, as it did every
    annotation under the future import.
    """
    node = definition.node
    if definition.alias_value is not None:
        value = definition.alias_value
        if not _names([value], later):
            return definition.text
        return _edited(definition, [(value, _quoted_in_alias(value, later, source))])
    if not isinstance(node, ast.ClassDef):
        return definition.text
    edits: list[tuple[ast.expr, str]] = []
    bound: set[str] = set()
    for statement in node.body:
        if isinstance(statement, ast.AnnAssign):
            blocked = later | bound
            if _names([statement.annotation], blocked):
                edits.append((statement.annotation, _quoted(statement.annotation, blocked, source)))
            if statement.value is not None and isinstance(statement.target, ast.Name):
                bound.add(statement.target.id)
        elif isinstance(statement, ast.Assign):
            bound.update(
                n.id for t in statement.targets for n in ast.walk(t) if isinstance(n, ast.Name)
            )
    return _edited(definition, edits) if edits else definition.text


def _edited(definition: _Definition, edits: list[tuple[ast.expr, str]]) -> str:
    """The definition's text with each expression replaced, the last first."""
    text_lines = definition.text.splitlines(keepends=True)
    for annotation, replacement in reversed(edits):
        first = annotation.lineno - definition.start - 1
        last = (annotation.end_lineno or annotation.lineno) - definition.start - 1
        head = _encoded(text_lines[first])[: annotation.col_offset].decode()
        tail = _encoded(text_lines[last])[annotation.end_col_offset or 0 :].decode()
        text_lines[first : last + 1] = [head + replacement + tail]
    return "".join(text_lines)


def _encoded(line: str) -> bytes:
    # ast column offsets count UTF-8 bytes.
    return line.encode()


def _quoted(annotation: ast.expr, later: set[str], source: str) -> str:
    """``annotation`` with its parts that name a ``later`` definition turned into strings."""
    if not _names([annotation], later):
        return _segment(source, annotation)
    if (
        isinstance(annotation, ast.Subscript)
        and isinstance(annotation.value, ast.Name)
        and annotation.value.id == "Annotated"
        and isinstance(annotation.slice, ast.Tuple)
    ):
        inner, *metadata = annotation.slice.elts
        if _names(metadata, later):
            raise CodegenError("types.py: a field's metadata names a later definition")
        parts = [_quoted(inner, later, source), *(_segment(source, m) for m in metadata)]
        return f"Annotated[{', '.join(parts)}]"
    text = ast.unparse(annotation)
    if '"' in text or "Annotated[" in text:
        raise CodegenError(f"types.py: cannot quote the annotation {text!r}")
    return f'"{text}"'


def _quoted_in_alias(value: ast.expr, later: set[str], source: str) -> str:
    """An alias's ``value`` with each ``later`` name quoted where it stands, inside the
    subscripts (``Union[...]``, ``list[...]``) that take a string as a forward reference."""
    if not _names([value], later):
        return _segment(source, value)
    if isinstance(value, ast.Name):
        return f'"{value.id}"'
    if isinstance(value, ast.Subscript) and not (
        isinstance(value.value, ast.Name) and value.value.id == "Annotated"
    ):
        items = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
        parts = ", ".join(_quoted_in_alias(item, later, source) for item in items)
        return f"{_segment(source, value.value)}[{parts}]"
    return _quoted(value, later, source)


def _segment(source: str, node: ast.expr) -> str:
    text = ast.get_source_segment(source, node)
    if text is None:
        raise CodegenError(f"types.py: no source for {ast.unparse(node)!r}")
    return text
