"""``TARGET`` of ``mcpbind run`` and the others: ``path/to/file.py[:obj]`` or ``module:obj``.

The object is an ``App``, a ``Server``, or a function of no arguments returning one. Without
``:obj`` the module's ``app``, ``server`` or ``mcp`` is used, else its one App or Server.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, TypeGuard

from mcpbind.runtime.app import App
from mcpbind.runtime.endpoints.server import Server

__all__ = ["WELL_KNOWN", "TargetError", "load_target", "module_file", "split_target"]

#: The names looked up, in order, when TARGET names no object.
WELL_KNOWN = ("app", "server", "mcp")


class TargetError(Exception):
    """TARGET does not import, or names no App or Server: one line for the user."""


def split_target(target: str) -> tuple[str, str | None]:
    """``("path/or.module", "obj" | None)``; a Windows drive's colon is not the separator."""
    head, sep, tail = target.rpartition(":")
    if not sep or not head or "/" in tail or "\\" in tail or (len(head) == 1 and head.isalpha()):
        return target, None
    return head, tail or None


def _is_path(where: str) -> bool:
    return where.endswith(".py") or "/" in where or "\\" in where or Path(where).is_file()


def module_file(target: str) -> Path | None:
    """The file TARGET names (what ``dev`` watches); None for a module not found."""
    where, _ = split_target(target)
    if _is_path(where):
        return Path(where).resolve()
    try:
        spec = importlib.util.find_spec(where)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin).resolve() if spec is not None and spec.origin else None


def _import(where: str) -> ModuleType:
    try:
        if _is_path(where):
            path = Path(where).resolve()
            if not path.is_file():
                raise TargetError(f"{where}: no such file")
            # Its folder first on the path, as `python file.py` would have it (sibling imports).
            sys.path.insert(0, str(path.parent))
            spec = importlib.util.spec_from_file_location(path.stem, path)
            if spec is None or spec.loader is None:
                raise TargetError(f"{where}: not a Python file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = module
            spec.loader.exec_module(module)
            return module
        if "" not in sys.path and str(Path.cwd()) not in sys.path:
            sys.path.insert(0, str(Path.cwd()))  # `mcpbind run pkg.mod:app` from the project
        return importlib.import_module(where)
    except TargetError:
        raise
    except SystemExit as exc:
        raise TargetError(f"cannot import {where}: it exited (status {exc.code})") from None
    except BaseException as exc:  # the user's module may raise anything while importing
        if isinstance(exc, KeyboardInterrupt):
            raise
        text = str(exc).strip().splitlines()
        detail = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
        raise TargetError(f"cannot import {where}: {detail}") from None


def _servable(value: object) -> TypeGuard[App | Server]:
    return isinstance(value, App | Server)


def load_target(target: str) -> App | Server:
    """The ``App`` or ``Server`` TARGET names (a factory is called); ``TargetError`` if none."""
    where, name = split_target(target)
    module = _import(where)
    if name is not None:
        if not hasattr(module, name):
            raise TargetError(f"{where} has no attribute {name!r}")
        return _resolve(f"{where}:{name}", getattr(module, name))
    for known in WELL_KNOWN:
        if _servable(getattr(module, known, None)):
            return _resolve(f"{where}:{known}", getattr(module, known))
    found = sorted(key for key, value in vars(module).items() if _servable(value))
    if len(found) > 1:
        raise TargetError(
            f"{where} has several servers ({', '.join(found)}): name one, as {where}:{found[0]}"
        )
    if not found:
        raise TargetError(
            f"{where} has no App or Server (looked for {', '.join(WELL_KNOWN)} and any other); "
            f"name one as {where}:OBJECT"
        )
    return _resolve(f"{where}:{found[0]}", getattr(module, found[0]))


def _resolve(label: str, value: Any) -> App | Server:
    if _servable(value):
        found: App | Server = value
        return found
    if not callable(value):
        raise TargetError(f"{label} is a {type(value).__name__}, not an App or Server")
    try:
        built = value()
    except TypeError as exc:
        raise TargetError(f"{label}: a factory must take no arguments ({exc})") from None
    except Exception as exc:
        raise TargetError(f"{label}() failed: {type(exc).__name__}: {exc}") from None
    if not _servable(built):
        raise TargetError(f"{label}() returned a {type(built).__name__}, not an App or Server")
    result: App | Server = built
    return result
