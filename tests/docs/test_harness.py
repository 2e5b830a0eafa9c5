"""The documentation harness itself: a broken block fails it, and says where.

Each case is a small Markdown page in a scratch folder, checked by the same ``run_file`` the
documentation's own tests use.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from docblocks import BlockError, collect, run_file

FENCE = "```"


def _page(tmp_path: Path, *blocks: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n" + "\n\nSome prose.\n\n".join(blocks) + "\n", encoding="utf-8")
    return page


def _check(page: Path, workdir: Path) -> list[str]:
    return [outcome for _, outcome in run_file(page, workdir)]


def test_blocks_share_a_page_and_files_by_title(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        f'{FENCE}python title="helper.py"\nVALUE = 41\n{FENCE}',
        f"{FENCE}python\nfrom helper import VALUE\nanswer = VALUE + 1\n{FENCE}",
        f"{FENCE}python\nassert answer == 42\n{FENCE}",
        f"{FENCE}sh\ntest -f helper.py && echo ok\n{FENCE}",
        f"{FENCE}toml\n[tool]\nname = 'x'\n{FENCE}",
    )
    assert _check(page, tmp_path / "work") == ["ran", "ran", "ran", "ran", "parsed"]


@pytest.mark.parametrize(
    ("block", "message"),
    [
        (
            f"{FENCE}python\nassert 1 + 1 == 3\n{FENCE}",
            r"page\.md:3: the block raised AssertionError",
        ),
        (f"{FENCE}python\nprint(undefined_name)\n{FENCE}", "NameError"),
        (f"{FENCE}python\ndef broken(:\n{FENCE}", r"page\.md:3: .*syntax"),
        (f"{FENCE}sh\nmcpbind diff no-such-revision 2025-11-25\n{FENCE}", "exited with 2"),
        (f"{FENCE}sh\nfalse\necho never\n{FENCE}", "exited with 1"),
        (f'{FENCE}sh title="Not run:"\necho hi\n{FENCE}', "must give the reason"),
        (f'{FENCE}sh title="Not run: parsed only"\nif then fi\n{FENCE}', "exited with 2"),
        (f"{FENCE}cobol\nDISPLAY 'HI'.\n{FENCE}", "unknown language 'cobol'"),
        (f"{FENCE}yaml\non: [push\n{FENCE}", "not valid yaml"),
        (f"{FENCE}toml\nkey = \n{FENCE}", "not valid toml"),
        (f"{FENCE}dockerfile\nFROM python:3.12-slim\nINSTALL mcpbind\n{FENCE}", "INSTALL"),
        (f"{FENCE}python\nprint('never closed')\n", "never closed"),
    ],
    ids=[
        "assertion",
        "name-error",
        "syntax-error",
        "cli-bad-input",
        "shell-error",
        "not-run-without-reason",
        "not-run-shell-syntax",
        "unknown-language",
        "yaml",
        "toml",
        "dockerfile",
        "unclosed-fence",
    ],
)
def test_a_broken_block_fails(tmp_path: Path, block: str, message: str) -> None:
    page = _page(tmp_path, block)
    with pytest.raises(BlockError, match=message):
        _check(page, tmp_path / "work")


def test_a_not_run_python_block_is_type_checked(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        f'{FENCE}python title="Not run: needs a browser"\n'
        "from mcpbind.runtime import Client\n\n"
        "def make() -> Client:\n"
        "    return Client(42)\n"
        f"{FENCE}",
    )
    # Client's constructor is overloaded by the kind of target: mypy finds no variant for an int.
    with pytest.raises(BlockError, match=r"page\.md:\d+: error: No overload variant of \"Client\""):
        _check(page, tmp_path / "work")


def test_the_not_run_marker_is_counted(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        f'{FENCE}python title="Not run: needs a browser"\nx: int = 1\n{FENCE}',
        f"{FENCE}python\ny = 2\n{FENCE}",
    )
    assert [block.not_run for block in collect(page)] == [True, False]
    assert _check(page, tmp_path / "work") == ["typechecked", "ran"]


def test_a_page_imports_its_own_files_not_another_pages(tmp_path: Path) -> None:
    """Two pages with a ``helper.py`` each: the second imports its own."""
    for value in (1, 2):
        page = _page(
            tmp_path,
            f'{FENCE}python title="helper.py"\nVALUE = {value}\n{FENCE}',
            f"{FENCE}python\nimport helper\nassert helper.VALUE == {value}\n{FENCE}",
        )
        assert _check(page, tmp_path / f"work{value}") == ["ran", "ran"]


def test_a_block_that_runs_but_is_mistyped_fails(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        f"{FENCE}python\ndef double(x: int) -> int:\n    return x * 2\n{FENCE}",
        f"{FENCE}python\nprint(double('ab'))  # runs: 'abab'\n{FENCE}",
    )
    with pytest.raises(BlockError, match=r'page\.md:11: error: Argument 1 to "double"'):
        _check(page, tmp_path / "work")
