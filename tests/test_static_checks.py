"""mypy --strict, pyright (strict) and ruff over the package, as tests, so CI proves the code stays clean.

The checkers run from the repository root as a contributor runs them, configured by
pyproject.toml alone (no PYTHONPATH): the root's ``mcpbind/`` folder links ``codegen/`` (etc.)
under its installed name, ``mypy_path`` and pyright's ``include`` lead there, so they check the
checkout as edited, not the installed copy (``tests/test_devloop.py`` proves which they read).

pyright must read every module and resolve every import, and find nothing in strict mode: not
in the package, not in the examples.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PACKAGES = ("codegen", "generated", "runtime")
# Import resolution: what goes wrong when a checker does not see the package.
UNRESOLVED = {"reportMissingImports", "reportMissingModuleSource", "reportAttributeAccessIssue"}


def shell_env() -> dict[str, str]:
    """This environment without the PYTHONPATH to the checkout that conftest exports."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def check(repo_root: Path, *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *command],
        cwd=repo_root,
        env=shell_env(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.mark.parametrize("package", PACKAGES)
def test_mypy_strict(repo_root: Path, package: str) -> None:
    result = check(repo_root, "mypy", "-p", f"mcpbind.{package}")
    assert result.returncode == 0, result.stdout + result.stderr


def python_files(folder: Path) -> Iterator[Path]:
    """Modules and stubs (a revision's ``types.pyi``): pyright reads both."""
    return (
        path
        for path in [*folder.rglob("*.py"), *folder.rglob("*.pyi")]
        if "__pycache__" not in path.parts
    )


@pytest.fixture(scope="module")
def pyright_report(repo_root: Path) -> dict[str, Any]:
    done = check(repo_root, "pyright", "--pythonpath", sys.executable, "--outputjson")
    try:
        report: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        pytest.fail(f"pyright did not report: {done.stdout}{done.stderr}")
    return report


def test_pyright_reads_every_module_through_the_links(
    repo_root: Path, pyright_report: dict[str, Any]
) -> None:
    folders = [repo_root / name for name in PACKAGES] + [repo_root / "examples"]
    # ... and mcpbind/__init__.py, the folder of links itself.
    expected = 1 + sum(1 for folder in folders for _ in python_files(folder))
    assert pyright_report["summary"]["filesAnalyzed"] == expected
    unresolved = [d for d in pyright_report["generalDiagnostics"] if d.get("rule") in UNRESOLVED]
    assert unresolved == [], json.dumps(unresolved, indent=1)


def test_pyright_ignores_only_stubbed_lazy_modules(repo_root: Path) -> None:
    """pyright's ``ignore`` hides nothing but a revision's lazy ``types.py``, whose ``types.pyi``
    it does check (and tests/generated runs the module)."""
    config = tomllib.loads((repo_root / "pyproject.toml").read_text(encoding="utf-8"))
    ignored = [
        path for pattern in config["tool"]["pyright"]["ignore"] for path in repo_root.glob(pattern)
    ]
    assert ignored
    for path in ignored:
        assert path.name == "types.py" and path.with_suffix(".pyi").is_file(), path


def test_pyright_strict_finds_nothing(pyright_report: dict[str, Any]) -> None:
    errors = [
        f"{Path(d['file']).as_posix()}:{d['range']['start']['line'] + 1}: {d.get('rule', '')}: {d['message']}"
        for d in pyright_report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    assert errors == [], "\n".join(errors)


def test_ruff(repo_root: Path) -> None:
    result = check(repo_root, "ruff", "check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format(repo_root: Path) -> None:
    result = check(repo_root, "ruff", "format", "--check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr
