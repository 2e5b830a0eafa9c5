"""No module of the runtime reaches into another module's private names.

A name that starts with ``_`` belongs to its module: another module that needs it gets a public
name in the module that owns it (or a place both read). ``ast`` finds two signs of a breach:

- ``from x import _y`` where ``x`` is an mcpbind module and ``_y`` is not one of its
  submodules (``from . import _deps``, a package's private module, is its own business);
- ``obj._attr`` read on anything but ``self`` or ``cls``, where the reading module defines no
  ``_attr`` itself (as a function, class, assigned name or attribute, or ``__slots__`` entry):
  the cheap sign of another module's private attribute (``lifecycle._answer``).

Third-party private names (``anyio``'s, read for speed) are out of scope here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from runtime_helpers import REPO_ROOT

RUNTIME = REPO_ROOT / "runtime"
ROOTS = ("codegen", "generated", "runtime", "schema")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _package_dir(path: Path, node: ast.ImportFrom) -> Path | None:
    """The folder of the module ``node`` imports from, if it is one of ours."""
    if node.level:
        base = path.parent
        for _ in range(node.level - 1):
            base = base.parent
        return base.joinpath(*node.module.split(".")) if node.module else base
    parts = (node.module or "").split(".")
    if len(parts) >= 2 and parts[0] == "mcpbind" and parts[1] in ROOTS:
        return REPO_ROOT.joinpath(parts[1], *parts[2:])
    return None


def _own_names(tree: ast.AST) -> set[str]:
    """Every name a module defines or assigns, attributes included."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            own.add(node.value)  # ``__slots__`` entries, ``getattr`` names
    return own


def breaches(path: Path, source: str) -> list[str]:
    """Where the module at ``path`` (with ``source``) reaches into another's private names."""
    tree = ast.parse(source, str(path))
    own = _own_names(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            folder = _package_dir(path, node)
            if folder is None:
                continue
            for alias in node.names:
                submodule = (folder / f"{alias.name}.py").is_file() or (
                    folder / alias.name
                ).is_dir()
                if _private(alias.name) and not submodule:
                    found.append(f"{path.name}:{node.lineno}: imports {alias.name}")
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load)
            and _private(node.attr)
            and node.attr not in own
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        ):
            found.append(f"{path.name}:{node.lineno}: reads {ast.unparse(node)}")
    return found


def test_the_checker_sees_both_forms(tmp_path: Path) -> None:
    package = tmp_path / "eras"
    package.mkdir()
    (package / "_helpers.py").write_text("")
    module = package / "client.py"
    source = (
        "from . import _helpers\n"  # a private module of the package: allowed
        "from .stateless import _COMPLETE, DISCOVER\n"
        "from mcpbind.runtime.eras.stateless import _implementation\n"
        "from anyio.streams.memory import _MemoryObjectStreamState\n"  # not ours: not judged
        "class C:\n"
        "    __slots__ = ('_mine',)\n"
        "    def f(self, lifecycle, other):\n"
        "        self._x\n"
        "        other._mine\n"  # a name this module defines: its own object, as far as we see
        "        return lifecycle._answer\n"
    )
    assert breaches(module, source) == [
        "client.py:2: imports _COMPLETE",
        "client.py:3: imports _implementation",
        "client.py:10: reads lifecycle._answer",
    ]


@pytest.mark.parametrize(
    "path", sorted(RUNTIME.rglob("*.py")), ids=lambda p: str(p.relative_to(RUNTIME))
)
def test_no_module_reads_another_modules_private_names(path: Path) -> None:
    assert breaches(path, path.read_text()) == []
