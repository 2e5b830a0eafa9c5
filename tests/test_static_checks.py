"""mypy --strict and ruff over the whole package, as tests, so CI proves the code stays clean.

mypy resolves imports from folders, and the repository maps ``codegen/`` (etc.) onto
``mcpbind.codegen`` only at install time; a tree of symlinks gives mypy the installed layout.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PACKAGES = ("codegen", "generated", "runtime", "schema")


@pytest.fixture(scope="module")
def mypy_tree(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Path:
    root = tmp_path_factory.mktemp("typecheck")
    (root / "mcpbind").mkdir()
    for name in PACKAGES:
        (root / "mcpbind" / name).symlink_to(repo_root / name, target_is_directory=True)
    return root


@pytest.mark.parametrize("package", ["codegen", "generated", "runtime"])
def test_mypy_strict(mypy_tree: Path, repo_root: Path, package: str) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            str(repo_root / "pyproject.toml"),
            "--cache-dir",
            str(mypy_tree / ".mypy_cache"),
            "-p",
            f"mcpbind.{package}",
        ],
        cwd=mypy_tree,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff(repo_root: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "."],
        cwd=repo_root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
