"""Split a revision's models into ``types.pyi``, for type checkers, and a ``types.py`` that defines
each class the first time it is used.

Creating a revision's ~170 pydantic classes was most of what importing it cost (85 ms of a 440 ms
stdio start, for a server that meets a dozen of them), so each definition is a function that
runs it as it stood, and ``types.py`` holds a table of what each one reads (bases, field types,
an alias's members, quoted forward references included);
``mcpbind.generated.support.define_on_use`` gives the module its ``__getattr__`` (PEP 562), which
runs what a name reaches, in the module's order, the first time it is read. The functions live in
private modules beside it, a family each (a class with the classes only it reads, such as
``InitializeRequest`` and its capabilities), imported when one of theirs is first needed and run
in ``types``' namespace: their code, 400 KB for the ~190 definitions of a revision, is loaded
only for what a program meets (an idle stdio server: 18 of 110 families). The stub is the module
as it was, every class at the top level, so type checkers see what they always saw; both list
every name in ``__all__`` (``from types import *`` defines them all).
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

from ..errors import CodegenError

__all__ = ["FAMILY_PREFIX", "LazyModels", "split_models"]

ON_USE_IMPORT = "from mcpbind.generated.support import define_on_use\n"
#: A family module's name: ``_types_`` and the class that reads the others (``_types_Tool``).
FAMILY_PREFIX = "_types_"


@dataclass(frozen=True)
class LazyModels:
    stub: str
    runtime: str
    #: The definitions' modules beside ``types.py``, by module name (``_types_Tool``).
    families: dict[str, str]


@dataclass(frozen=True)
class _Definition:
    name: str
    text: str
    reads: tuple[str, ...]
    is_class: bool


def split_models(source: str, revision: str) -> LazyModels:
    """``source`` (a settled ``types.py``: imports, then definitions in dependency order) as its
    stub and its define-on-use module; both unformatted."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    body = [node for node in tree.body if not _is_string(node)]
    imports = [n for n in body if isinstance(n, ast.Import | ast.ImportFrom)]
    statements = [n for n in body if not isinstance(n, ast.Import | ast.ImportFrom)]
    if not imports or not statements or body.index(statements[0]) != len(imports):
        raise CodegenError(f"types.py of {revision}: expected imports, then definitions")
    names = [_bound_name(node) for node in statements]
    known = set(names)
    definitions = [
        _Definition(
            name,
            "".join(lines[node.lineno - 1 : node.end_lineno]).rstrip("\n") + "\n",
            tuple(sorted(_reads(node, known) - {name})),
            isinstance(node, ast.ClassDef),
        )
        for name, node in zip(names, statements, strict=True)
    ]
    exports = "__all__ = [\n" + "".join(f'    "{n}",\n' for n in sorted(names)) + "]\n"
    split = imports[-1].end_lineno or 0
    header, rest = "".join(lines[:split]), "".join(lines[split:])
    stub = f"{header}\n{exports}\n{rest}"
    family = _families(definitions)
    runtime = _runtime(header, exports, definitions, family, revision)
    return LazyModels(stub, runtime, _family_modules(definitions, family, revision))


def _families(definitions: list[_Definition]) -> dict[str, str]:
    """Each definition's family module: the family of the one class after it that reads it, if
    exactly one does (an inline object's class, a capability), else its own. A class before it
    reads it only quoted (classes that read each other), and unions and aliases adopt nothing:
    one that lists every request would make a family of the whole revision."""
    order = {d.name: index for index, d in enumerate(definitions)}
    readers: dict[str, set[str]] = {d.name: set() for d in definitions}
    for definition in definitions:
        if definition.is_class:
            for read in definition.reads:
                if order[read] < order[definition.name]:
                    readers[read].add(definition.name)
    family: dict[str, str] = {}
    for definition in reversed(definitions):  # a reader's family is known before its reads'
        adopters = readers[definition.name]
        if len(adopters) == 1:
            family[definition.name] = family[next(iter(adopters))]
        else:
            family[definition.name] = f"{FAMILY_PREFIX}{definition.name}"
    return family


def _family_modules(
    definitions: list[_Definition], family: dict[str, str], revision: str
) -> dict[str, str]:
    modules: dict[str, list[str]] = {}
    for definition in definitions:
        if definition.name == family[definition.name].removeprefix(FAMILY_PREFIX):
            doc = (
                "# Checked as ``types.pyi``: these functions run with ``types``' names as globals.\n"
                "# type: ignore\n"
                f'"""{revision}: the definition of ``{definition.name}`` and of what only it reads, '
                "run in ``types``'\nnamespace when one of them is first used (``types.py`` "
                'imports nothing from here)."""\n'
            )
            modules.setdefault(family[definition.name], [doc])
    for definition in definitions:
        modules[family[definition.name]].append(_definer(definition))
    return {name: "".join(parts) for name, parts in modules.items()}


def _definer(definition: _Definition) -> str:
    return (
        f"\n\ndef _{definition.name}():\n"
        f"{textwrap.indent(definition.text, '    ')}"
        f"    return {definition.name}\n"
    )


def _runtime(
    header: str,
    exports: str,
    definitions: list[_Definition],
    family: dict[str, str],
    revision: str,
) -> str:
    doc = (
        f'"""The models of MCP revision {revision}, each class defined the first time it is used.\n\n'
        "``types.pyi`` beside this module holds the same classes for type checkers; read a class "
        "as\n``types.Tool`` or ``from ...types import Tool``, never from ``globals()``.\n"
        '"""\n'
    )
    parts = [doc, header, ON_USE_IMPORT, "\n", exports]
    table = "".join(
        f'        "{d.name}": ("{family[d.name]}", {_tuple(d.reads)}),\n' for d in definitions
    )
    parts.append(
        f"\n\n__getattr__, __dir__ = define_on_use(\n    globals(),\n    {{\n{table}    }},\n)\n"
    )
    return "".join(parts)


def _tuple(names: tuple[str, ...]) -> str:
    """A tuple literal without a trailing comma black would take as a wish for one item a line."""
    quoted = [f'"{name}"' for name in names]
    return f"({quoted[0]},)" if len(quoted) == 1 else f"({', '.join(quoted)})"


def _is_string(node: ast.stmt) -> bool:
    """A bare string: an alias's docstring, which only the stub keeps."""
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _bound_name(node: ast.stmt) -> str:
    if isinstance(node, ast.ClassDef):
        return node.name
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    ):
        return node.targets[0].id
    raise CodegenError(f"types.py: an unexpected top-level statement: {ast.unparse(node)[:80]!r}")


def _reads(node: ast.AST, known: set[str]) -> set[str]:
    """Definitions ``node`` names, in code or in a quoted forward reference (a string that
    parses as an expression); a docstring that happens to parse only adds a definition."""
    found: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and child.id in known:
            found.add(child.id)
        elif isinstance(child, ast.Constant) and isinstance(child.value, str):
            try:
                quoted = ast.parse(child.value, mode="eval")
            except (SyntaxError, ValueError):
                continue
            found |= {n.id for n in ast.walk(quoted) if isinstance(n, ast.Name) and n.id in known}
    return found
