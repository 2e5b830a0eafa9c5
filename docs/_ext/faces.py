"""A griffe extension for mkdocstrings: a package face's names are what it re-exports.

mcpbind's public packages list their names once, as ``from .module import Name as Name`` in an
``if TYPE_CHECKING:`` block (``runtime/_exports.py`` makes them lazy at run time). Type checkers
read that ``as`` as a re-export; griffe needs an ``__all__``, so this gives a module without one
the names of its redundant aliases as its exports.
"""

from __future__ import annotations

import ast
from typing import Any

import griffe

__all__ = ["FaceExports"]


def _reexported(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) in {
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        }:
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    names += [a.name for a in statement.names if a.asname == a.name]
    return names


class FaceExports(griffe.Extension):
    def on_module_members(
        self, *, node: ast.AST | griffe.ObjectNode, mod: griffe.Module, **kwargs: Any
    ) -> None:
        if mod.exports is None and isinstance(node, ast.Module):
            names = _reexported(node)
            if names:
                mod.exports = list(names)
