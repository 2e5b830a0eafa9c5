"""The house's rules, as tests: the import contracts of pyproject.toml hold, every runtime
package is under a contract, each layer says what it may import, and no module outgrows a page.

The contracts (``[tool.importlinter]``) are checked by import-linter itself, on the package as
the tests import it, with every import counted (top-level, function-local, ``TYPE_CHECKING``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
RUNTIME = REPO_ROOT / "runtime"
CONFIG = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
CONTRACTS = {contract["name"]: contract for contract in CONFIG["contracts"]}
LAYERS = next(c for c in CONFIG["contracts"] if c["type"] == "layers")
#: Packages that only re-export (public faces and the old import paths kept as aliases).
FACES = {"http"}
MAX_LINES = 600


def _layer_names() -> set[str]:
    return {name.strip() for layer in LAYERS["layers"] for name in layer.split("|")}


def test_import_contracts_hold() -> None:
    """``lint-imports`` finds every contract kept (its own exit status and summary)."""
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command;"
         " sys.exit(lint_imports_command())", str(REPO_ROOT / "pyproject.toml")],
        capture_output=True, text=True, cwd=REPO_ROOT, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    kept = [
        line for line in result.stdout.splitlines() if line.endswith("KEPT") or " KEPT " in line
    ]
    assert len(kept) == len(CONTRACTS), result.stdout


def test_every_runtime_package_is_a_layer_or_a_face() -> None:
    """A new folder under runtime/ must be placed in the layers contract (or be a face)."""
    folders = {p.name for p in RUNTIME.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders - FACES == _layer_names()


def test_layers_say_what_they_may_import() -> None:
    """Each layer's ``__init__`` docstring names what the layer is and what it may import."""
    for name in sorted(_layer_names()):
        doc = ast.get_docstring(ast.parse((RUNTIME / name / "__init__.py").read_text()))
        assert doc is not None and "May import" in doc, name


def test_the_graph_sees_type_checking_imports() -> None:
    """The contracts would be blind to ``if TYPE_CHECKING:`` imports if the graph left them
    out: a known one must be in it (a request context names its session for typing only)."""
    assert CONFIG.get("exclude_type_checking_imports", False) is False
    graph = grimp.build_graph("mcpbind", include_external_packages=False)
    assert graph.direct_import_exists(
        importer="mcpbind.runtime.core.context", imported="mcpbind.runtime.core.session"
    )


def test_core_imports_no_plug_in_or_transport() -> None:
    """The issue's first rule, asked of the graph directly: no chain of imports leads from the
    core to a transport, auth, the cluster, tasks or the app layer."""
    graph = grimp.build_graph("mcpbind", include_external_packages=False)
    for upper in (
        "transports", "auth", "cluster", "tasks", "app", "cli", "endpoints", "eras", "telemetry"
    ):  # fmt: skip
        chain = graph.find_shortest_chain(
            importer="mcpbind.runtime.core", imported=f"mcpbind.runtime.{upper}", as_packages=True
        )
        assert chain is None, chain


def test_http_never_names_the_cluster() -> None:
    graph = grimp.build_graph("mcpbind", include_external_packages=False)
    chain = graph.find_shortest_chain(
        importer="mcpbind.runtime.transports",
        imported="mcpbind.runtime.cluster",
        as_packages=True,
    )
    assert chain is None, chain


@pytest.mark.parametrize(
    "path", sorted(RUNTIME.rglob("*.py")), ids=lambda p: str(p.relative_to(RUNTIME))
)
def test_no_module_over_a_page(path: Path) -> None:
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(REPO_ROOT)} has {lines} lines"
