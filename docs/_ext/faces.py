"""A griffe extension for mkdocstrings: a package face's names are what it re-exports.

mcpbind's public packages list their names once, as ``from .module import Name as Name`` in an
``if TYPE_CHECKING:`` block (``runtime/_exports.py`` makes them lazy at run time). Type checkers
read that ``as`` as a re-export; griffe needs an ``__all__``, so this gives a module without one
the names its ``TYPE_CHECKING`` block lists, read as ``runtime/_exports.py`` reads them.
"""

from __future__ import annotations

import ast
from typing import Any

import griffe
from mcpbind.runtime._exports import listed

__all__ = ["FaceExports"]


class FaceExports(griffe.Extension):
    def on_module_members(
        self, *, node: ast.AST | griffe.ObjectNode, mod: griffe.Module, **kwargs: Any
    ) -> None:
        if mod.exports is None and isinstance(node, ast.Module):
            names = [name for name in listed(node) if name != "*"]
            if names:
                mod.exports = names
