"""Split a revision's models into ``types.pyi``, for type checkers, and a ``types.py`` that defines
each class the first time it is used.

Creating a revision's ~170 pydantic classes was most of what importing it cost (85 ms of a 440 ms
stdio start, for a server that meets a dozen of them), so the module a program imports holds one
function per definition instead, each running that definition as it stood, and a table of what
each one reads (bases, field types, an alias's members, quoted forward references included);
``mcpbind.generated.support.define_on_use`` gives the module its ``__getattr__`` (PEP 562), which
runs what a name reaches, in the module's order, the first time it is read. The stub is the
module as it was, every class at the top level, so type checkers see what they always saw; both
list every name in ``__all__`` (``from types import *`` defines them all).
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

from ..errors import CodegenError

__all__ = ["LazyModels", "split_models"]

ON_USE_IMPORT = "from mcpbind.generated.support import define_on_use\n"


@dataclass(frozen=True)
class LazyModels:
    stub: str
    runtime: str


@dataclass(frozen=True)
class _Definition:
    name: str
    text: str
    reads: tuple[str, ...]


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
        )
        for name, node in zip(names, statements, strict=True)
    ]
    exports = "__all__ = [\n" + "".join(f'    "{n}",\n' for n in sorted(names)) + "]\n"
    split = imports[-1].end_lineno or 0
    header, rest = "".join(lines[:split]), "".join(lines[split:])
    stub = f"{header}\n{exports}\n{rest}"
    return LazyModels(stub, _runtime(header, exports, definitions, revision))


def _runtime(header: str, exports: str, definitions: list[_Definition], revision: str) -> str:
    doc = (
        f'"""The models of MCP revision {revision}, each class defined the first time it is used.\n\n'
        "``types.pyi`` beside this module holds the same classes for type checkers; read a class "
        "as\n``types.Tool`` or ``from ...types import Tool``, never from ``globals()``.\n"
        '"""\n'
    )
    parts = [doc, header, ON_USE_IMPORT, "\n", exports]
    for definition in definitions:
        parts.append(
            f"\n\ndef _{definition.name}():\n"
            f"{textwrap.indent(definition.text, '    ')}"
            f"    return {definition.name}\n"
        )
    table = "".join(f'        "{d.name}": (_{d.name}, {_tuple(d.reads)}),\n' for d in definitions)
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
