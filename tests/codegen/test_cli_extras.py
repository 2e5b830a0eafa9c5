"""The CLI without the codegen extra, offline, and outside a source checkout.

The extra's modules are blocked in a real subprocess by a ``sitecustomize`` that makes their
import fail, as after a plain ``pip install mcpbind``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcpbind.codegen.cli import common, generate, main

BLOCKER = """
import importlib.abc, sys
BLOCKED = {"datamodel_code_generator", "jinja2", "black"}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Block())
"""


def cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(BLOCKER)
    environment = {**os.environ, "PYTHONPATH": str(site), **env}
    code = "import sys; from mcpbind.codegen.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )


def test_help_diff_and_revisions_work_without_the_extra(tmp_path: Path) -> None:
    assert cli(tmp_path, "--help").returncode == 0
    diff = cli(tmp_path, "diff", "2025-06-18", "2025-11-25", "--fail-on", "never")
    assert diff.returncode == 0, diff.stderr
    assert "DIALECT_CHANGED" in diff.stdout and "Traceback" not in diff.stderr
    revisions = cli(tmp_path, "revisions")
    assert revisions.returncode == 0 and "2026-07-28" in revisions.stdout
    rules = cli(tmp_path, "diff", "rules")
    assert rules.returncode == 0 and "SERVER_REQUEST_REMOVED" in rules.stdout
    check = cli(tmp_path, "-c", "import jinja2")  # the blocker really blocks
    assert check.returncode != 0


def test_generate_without_the_extra_names_it_in_one_line(tmp_path: Path) -> None:
    result = cli(tmp_path, "generate", "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'mcpbind[codegen]'" in lines[0]


def test_a_pin_without_vendored_files_says_how_to_get_them(tmp_path: Path, repo_root: Path) -> None:
    """Offline, a revision pinned in a pins file whose folder lacks its files: one line naming
    where it looked and the `mcpbind pin` command that writes them."""
    pins = tmp_path / "pins.toml"
    text = (repo_root / "schema" / "pins.toml").read_text()
    pins.write_text(text.replace('[revisions."2026-07-28"]', '[revisions."2099-01-01"]'))
    env = {k: v for k, v in os.environ.items() if k != "MCPBIND_SCHEMA_DIR"}
    env.update(MCPBIND_OFFLINE="1", MCPBIND_PINS=str(pins))
    result = subprocess.run(
        [sys.executable, "-m", "mcpbind.codegen", "generate", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    for fragment in (
        "revision 2099-01-01 is pinned but its schema.json is not vendored",
        str(tmp_path / "2099-01-01" / "schema.json"),
        "`mcpbind pin 2099-01-01 --url https://raw.githubusercontent.com/",
        "$MCPBIND_SCHEMA_DIR",
    ):
        assert fragment in line, line
    assert not (tmp_path / "out").exists()


def test_out_is_required_outside_a_source_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generate, "default_out", lambda: None)
    monkeypatch.setattr(common, "source_checkout", lambda: None)
    monkeypatch.delenv("MCPBIND_PINS", raising=False)
    result = CliRunner().invoke(main, ["generate", "2024-11-05"])
    assert result.exit_code == 2
    assert "--out is required outside a source checkout" in result.stderr
    result = CliRunner().invoke(main, ["pin", "x", "--file", "y"])
    assert result.exit_code == 2 and "give --pins FILE" in result.stderr


def test_the_checkout_is_recognised(repo_root: Path) -> None:
    assert common.source_checkout() == repo_root.resolve()


def test_progress_line_per_revision(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["generate", "2024-11-05", "2025-03-26", "--out", str(tmp_path), "--progress"]
    )
    assert result.exit_code == 0, result.stderr
    assert "mcpbind: generating 2024-11-05 (1/2)" in result.stderr
    assert "mcpbind: generating 2025-03-26 (2/2)" in result.stderr
    quiet = CliRunner().invoke(main, ["generate", "2024-11-05", "--out", str(tmp_path)])
    assert "generating" not in quiet.stderr  # not a terminal, no --progress


def test_an_installed_copy_never_rewrites_itself(tmp_path: Path, repo_root: Path) -> None:
    """The layout of a non-editable install (setup.py maps the folders onto ``mcpbind.*``, no
    pyproject.toml beside them): ``generate`` wants --out; ``revisions`` reads its own packages."""
    site = tmp_path / "site-packages"
    skip = shutil.ignore_patterns("__pycache__")
    for folder in ("codegen", "schema", "generated"):
        shutil.copytree(repo_root / folder, site / "mcpbind" / folder, ignore=skip)
    before = sorted(p.read_bytes() for p in (site / "mcpbind" / "generated").rglob("*.py"))
    env = {**os.environ, "PYTHONPATH": str(site)}
    code = "import sys, mcpbind.codegen as c; print(c.__file__); from mcpbind.codegen.cli import main; main()"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
            check=False,
        )

    result = run("generate", "2024-11-05")
    assert result.stdout.startswith(str(site))  # the copy, not the checkout, is imported
    assert result.returncode == 2
    assert "--out is required outside a source checkout" in result.stderr
    revisions = run("revisions")
    assert revisions.returncode == 0 and "2026-07-28" in revisions.stdout
    assert sorted(p.read_bytes() for p in (site / "mcpbind" / "generated").rglob("*.py")) == before
