"""The installed package finds its checkout: ``mcpbind generate`` writes there, and an install
that differs from it is named file by file (what ``tests/conftest.py`` refuses to run against)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from mcpbind.codegen.checkout import ROOTS, default_out, source_checkout, stale_files


def test_the_install_knows_its_checkout(repo_root: Path) -> None:
    assert source_checkout() == repo_root
    assert default_out() == repo_root / "generated"
    assert stale_files(repo_root) == []


def test_generate_writes_into_the_checkout_from_anywhere(tmp_path: Path, repo_root: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpbind.codegen", "generate", "--check"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"{repo_root / 'generated'}: up to date"), done.stdout


def test_a_changed_missing_or_left_over_file_is_stale(tmp_path: Path, repo_root: Path) -> None:
    copy = tmp_path / "checkout"
    for root in ROOTS:
        shutil.copytree(repo_root / root, copy / root, ignore=shutil.ignore_patterns("__pycache__"))
    assert stale_files(copy) == []
    (copy / "runtime" / "errors.py").write_text("changed\n")
    (copy / "codegen" / "templates" / "client.py.jinja").unlink()
    (copy / "generated" / "v9999_01_01.py").write_text("new\n")
    (copy / "runtime" / "NOTES.md").write_text("not shipped, not compared\n")
    assert stale_files(copy) == [
        "codegen/templates/client.py.jinja",
        "generated/v9999_01_01.py",
        "runtime/errors.py",
    ]
