"""Every code block of the documentation and the README is run, or at least checked.

See ``docblocks.py`` for what each language gets. A page's blocks run in order in one scratch
folder; a block that cannot run says why in its title (``Not run: ...``), and there are few.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from docblocks import LANGUAGES, NOT_RUN, REPO_ROOT, collect, documents, run_file

#: Blocks allowed to say ``Not run:`` (type checked or parsed only). Raise it only with a
#: reason nobody can remove: each one is code that a reader may copy and nobody ran.
MAX_NOT_RUN = 6


def _pages() -> list[Path]:
    return [path for path in documents() if collect(path)]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("path", _pages(), ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_blocks_of_page(path: Path, tmp_path: Path) -> None:
    done = Counter(outcome for _, outcome in run_file(path, tmp_path))
    assert sum(done.values()) == len(collect(path))


def test_every_block_is_known_and_few_are_not_run() -> None:
    blocks = [block for path in documents() for block in collect(path)]
    unknown = [block.where for block in blocks if block.language.lower() not in LANGUAGES]
    assert not unknown, f"code blocks without a language the tests check: {unknown}"
    not_run = [block for block in blocks if block.not_run]
    assert all(block.reason for block in not_run), "every 'Not run:' block gives its reason"
    assert len(not_run) <= MAX_NOT_RUN, "\n".join(
        f"{block.where}: {block.title}" for block in not_run
    )
    # The marker is only meaningful in a title; anywhere else it would be invisible to readers.
    hidden = [b.where for b in blocks if NOT_RUN.lower() in b.body.lower()[:200] and not b.not_run]
    assert not hidden, f"'{NOT_RUN}' outside a title: {hidden}"


def ruff_format_check(*paths: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--no-cache", *map(str, paths)],
        cwd=cwd,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_every_pages_python_blocks_are_formatted(tmp_path: Path) -> None:
    """``ruff format --check`` (which formats the Python blocks of Markdown since ruff 0.16)
    passes on every page, by the project's settings. A page with an unformatted block is
    flagged first: a ruff that skipped Markdown fails here rather than passing unseen."""
    probe = tmp_path / "probe.md"
    probe.write_text("# Probe\n\n```python\nx = {  'a':1}\n```\n", encoding="utf-8")
    flagged = ruff_format_check(probe, cwd=tmp_path)
    assert flagged.returncode == 1 and "probe.md" in flagged.stdout, flagged.stdout
    pages = documents()
    done = ruff_format_check(*pages, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(pages)} files already formatted" in done.stdout, done.stdout


def test_readme_test_command_is_what_ci_runs() -> None:
    """The README's second command is exactly the one `.ci/run` runs."""
    ci = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    command = next(line for line in ci if line.startswith("python3 -m venv"))
    readme = [block.body.strip() for block in collect(REPO_ROOT / "README.md")]
    assert command in readme
