"""Package faces that import on first use: each public package lists its names once.

A package writes its public names in one ``if TYPE_CHECKING:`` block, as
``from .module import Name as Name``: type checkers read that block (the ``as`` marks a
re-export); ``install`` reads the same block from the package's source when the package is
imported, and from then on imports a name's module only when the name is first used (PEP 562).
A program pays for what it touches: a server never imports the client, code that names an error
class imports no event loop library.
"""

from __future__ import annotations

import ast
import importlib
from typing import Any

__all__ = ["alias", "install", "listed"]

_GUARDS = frozenset({"TYPE_CHECKING", "typing.TYPE_CHECKING"})


def listed(tree: ast.Module) -> dict[str, str]:
    """Each name of a face's ``if TYPE_CHECKING:`` block, with the module it comes from (the
    docs' API reference reads faces through this too: ``docs/_ext/faces.py``)."""
    sources: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) in _GUARDS:
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    module = "." * statement.level + (statement.module or "")
                    for alias in statement.names:
                        sources[alias.asname or alias.name] = module
    return sources


def install(namespace: dict[str, Any]) -> None:
    """Give the package whose globals are ``namespace`` its ``__all__``, ``__getattr__`` and
    ``__dir__`` from its ``TYPE_CHECKING`` block."""
    package = namespace["__name__"]
    path = namespace["__file__"]
    with open(path, "rb") as file:
        sources = listed(ast.parse(file.read(), path))

    def __getattr__(name: str) -> Any:
        source = sources.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *sources})

    namespace["__all__"] = sorted(sources)
    namespace["__getattr__"] = __getattr__
    namespace["__dir__"] = __dir__
    namespace["_SOURCES"] = sources


def alias(namespace: dict[str, Any], target: str) -> None:
    """Make the package whose globals are ``namespace`` a second name for the package
    ``target``: every attribute is the target's, looked up on first use. For import paths that
    moved (``mcpbind.runtime.auth`` is ``mcpbind.runtime.auth``); the objects are the same,
    so ``isinstance`` and identity hold across both names."""
    real = importlib.import_module(target)

    def __getattr__(name: str) -> Any:
        return getattr(real, name)

    def __dir__() -> list[str]:
        return dir(real)

    namespace["__all__"] = list(getattr(real, "__all__", ()))
    namespace["__getattr__"] = __getattr__
    namespace["__dir__"] = __dir__
