"""The code blocks of the documentation (``docs/**/*.md``, ``README.md``) and how each is checked.

Every fenced block is collected with its language and its ``title="..."`` (Material shows the
title above the block). A page's blocks are checked in order, in one scratch folder that has
``examples/`` and ``schema/`` of the checkout and the running virtual environment as ``.venv``:

- ``python``: run in one namespace per page (a later block uses what an earlier one defined), with
  ``__name__`` set so that ``if __name__ == "__main__":`` does not run. A block titled with a file
  name (``title="server.py"``) is also written to that file, so a later block can start it over
  stdio; one named ``test_*.py`` is run by pytest in a subprocess instead. Then the page's
  Python blocks are type checked with ``mypy --strict``, as a reader's project would be.
- ``sh``: run by bash (``-euo pipefail``), the environment's ``bin`` first on ``PATH``.
- ``toml``, ``yaml``, ``json``: parsed; ``dockerfile``: every instruction is a Dockerfile one.

A block that must not run (it needs a browser, a real identity provider, or it would install
packages) says so where readers see it: its title starts with ``Not run:`` and gives the reason.
Such a block is still checked as far as it can be: Python by ``mypy --strict`` (so it must be
self-contained), shell by ``bash -n``. ``test_examples.py`` counts these and keeps them few.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]

#: The marker of a block that is not run, and must say why.
NOT_RUN = "Not run:"

#: What each language name in a fence means here.
LANGUAGES = {
    "python": "python",
    "py": "python",
    "sh": "sh",
    "bash": "sh",
    "shell": "sh",
    "toml": "toml",
    "yaml": "yaml",
    "yml": "yaml",
    "json": "json",
    "dockerfile": "dockerfile",
}

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_ATTR = re.compile(r'(\w+)="([^"]*)"')
_DOCKER_INSTRUCTIONS = frozenset(
    {
        "FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME",
        "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL",
    }
)  # fmt: skip
#: Seconds one shell block or one pytest run may take.
BLOCK_TIMEOUT = 120
#: Packages the docs show next to mcpbind (migrating from them) that are not installed here:
#: a block importing one is type checked with that package's names as ``Any``.
NOT_INSTALLED = ("fastmcp",)


class BlockError(AssertionError):
    """A block failed its check; the message names the file and line."""


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, its language, its attributes and its text."""

    path: Path
    line: int  # the line of the opening fence, from 1
    language: str
    attrs: dict[str, str]
    body: str

    @property
    def where(self) -> str:
        try:
            shown = self.path.relative_to(REPO_ROOT)
        except ValueError:
            shown = self.path
        return f"{shown}:{self.line}"

    @property
    def title(self) -> str:
        return self.attrs.get("title", "")

    @property
    def not_run(self) -> bool:
        return self.title.startswith(NOT_RUN)

    @property
    def reason(self) -> str:
        return self.title[len(NOT_RUN) :].strip() if self.not_run else ""

    @property
    def kind(self) -> str:
        """The check this block gets: a key of ``LANGUAGES``' values; KeyError if unknown."""
        return LANGUAGES[self.language.lower()]


def collect(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file, in order (indented ones too: tabs, admonitions)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if match is None:
            index += 1
            continue
        indent, fence, info = match["indent"], match["fence"], match["info"].strip()
        language, _, rest = info.partition(" ")
        language = language.strip("{}. ")
        start = index
        body: list[str] = []
        index += 1
        while index < len(lines):
            line = lines[index]
            stripped = line.strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                break
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            index += 1
        else:
            raise BlockError(f"{path}:{start + 1}: the code block is never closed")
        index += 1
        attrs = dict(_ATTR.findall(rest))
        text = "\n".join(body) + "\n"
        blocks.append(Block(path, start + 1, language, attrs, text))
    return blocks


def documents() -> list[Path]:
    """Every Markdown file whose blocks are checked: the docs and the README."""
    return [*sorted((REPO_ROOT / "docs").rglob("*.md")), REPO_ROOT / "README.md"]


@dataclass
class Page:
    """What the blocks of one file share while they are checked."""

    workdir: Path
    namespace: dict[str, Any] = field(default_factory=dict[str, Any])
    typechecked: list[Block] = field(default_factory=list[Block])  # Not run: checked only
    ran: list[Block] = field(default_factory=list[Block])  # Python blocks that ran

    def __post_init__(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        # What the examples name by relative path: the checkout's examples and pins, and the
        # environment the tests run in as `.venv` (as .ci/run and the README make it).
        for name in ("examples", "schema"):
            link = self.workdir / name
            if not link.exists():
                link.symlink_to(REPO_ROOT / name, target_is_directory=True)
        venv = self.workdir / ".venv"
        if not venv.exists():
            venv.symlink_to(Path(sys.prefix), target_is_directory=True)
        self.namespace.setdefault("__name__", "docs_example")

    @property
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        # Only the checkout (tests/conftest.py puts it first, so commands run the code as edited),
        # none of the test helpers' folders.
        env["PYTHONPATH"] = str(REPO_ROOT)
        return env


def check(block: Block, page: Page) -> str:
    """Check one block; return what was done (``ran``, ``parsed``...). BlockError on failure."""
    try:
        kind = block.kind
    except KeyError:
        raise BlockError(
            f"{block.where}: code block of unknown language {block.language!r}; "
            f"use one of {sorted(LANGUAGES)}"
        ) from None
    if block.not_run and not block.reason:
        raise BlockError(f"{block.where}: '{NOT_RUN}' must give the reason")
    if block.title and not block.not_run:
        target = page.workdir / block.title
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.body, encoding="utf-8")
    if kind == "python":
        if block.not_run:
            _compile(block)
            page.typechecked.append(block)
            return "typechecked"
        if Path(block.title).name.startswith("test_"):
            _run_pytest(block, page)
        else:
            _run_python(block, page)
        page.ran.append(block)
        return "ran"
    if kind == "sh":
        if block.not_run:
            _bash(block, page, ["bash", "-n"])
            return "parsed"
        _bash(block, page, ["bash", "-euo", "pipefail"])
        return "ran"
    _parse(block, kind)
    return "parsed"


def _compile(block: Block) -> Any:
    # Blank lines first, so a traceback's line numbers are the Markdown file's.
    source = "\n" * block.line + block.body
    try:
        return compile(source, str(block.path), "exec")
    except SyntaxError as exc:
        raise BlockError(f"{block.where}: {exc}") from None


def _run_python(block: Block, page: Page) -> None:
    code = _compile(block)
    here = Path.cwd()
    path = os.environ.get("PATH", "")
    os.chdir(page.workdir)
    os.environ["PATH"] = page.env["PATH"]
    sys.path.insert(0, str(page.workdir))
    try:
        exec(code, page.namespace)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise BlockError(f"{block.where}: the block raised {type(exc).__name__}: {exc}") from exc
    finally:
        sys.path.remove(str(page.workdir))
        os.environ["PATH"] = path
        os.chdir(here)


def _run_pytest(block: Block, page: Page) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", block.title],
        cwd=page.workdir,
        env=page.env,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        raise BlockError(
            f"{block.where}: pytest failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}"
        )


def _bash(block: Block, page: Page, command: list[str]) -> None:
    try:
        done = subprocess.run(
            [*command, "-c", block.body],
            cwd=page.workdir,
            env=page.env,
            capture_output=True,
            text=True,
            timeout=BLOCK_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise BlockError(f"{block.where}: still running after {BLOCK_TIMEOUT} s") from None
    if done.returncode != 0:
        raise BlockError(
            f"{block.where}: {shlex.join(command)} exited with {done.returncode}:\n"
            f"{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )


def _parse(block: Block, kind: str) -> None:
    try:
        if kind == "toml":
            tomllib.loads(block.body)
        elif kind == "yaml":
            for document in yaml.safe_load_all(block.body):
                if not isinstance(document, dict):
                    raise ValueError("a YAML document here is a mapping")
        elif kind == "json":
            json.loads(block.body)
        elif kind == "dockerfile":
            _dockerfile(block.body)
    except (ValueError, yaml.YAMLError) as exc:
        raise BlockError(f"{block.where}: not valid {kind}: {exc}") from None


def _dockerfile(text: str) -> None:
    continued = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not continued and stripped and not stripped.startswith("#"):
            word = stripped.split()[0].upper()
            if word not in _DOCKER_INSTRUCTIONS:
                raise ValueError(f"line {number}: {word!r} is not a Dockerfile instruction")
        continued = stripped.endswith("\\")
    if not any(line.strip().upper().startswith("FROM ") for line in text.splitlines()):
        raise ValueError("no FROM instruction")


def _module_file(block: Block) -> str | None:
    """The module a titled Python block is written to (``server.py``), if it is one."""
    title = Path(block.title)
    if block.not_run or title.suffix != ".py" or len(title.parts) != 1:
        return None
    return title.name


def typecheck(page: Page) -> None:
    """``mypy --strict`` over a page's Python blocks, in one run: BlockError on any error.

    The ``Not run`` blocks are checked each on its own. The blocks that ran are checked as
    they ran: those titled with a file name as that module, the others in order as one module
    that star-imports each such file where it appeared (as the namespace they shared had it).
    """
    workdir = page.workdir
    if not page.typechecked and not page.ran:
        return
    # Each file mypy checks, with the block that starts at a given line of it.
    files: dict[str, list[tuple[int, Block]]] = {}
    config = ["[mypy]", "strict = True"]
    config += [f"[mypy-{package}.*]\nignore_missing_imports = True" for package in NOT_INSTALLED]
    for number, block in enumerate(page.typechecked):
        name = f"block_{number}.py"
        (workdir / name).write_text(block.body, encoding="utf-8")
        files[name] = [(1, block)]
        if any(re.search(rf"^\s*(from|import) {p}\b", block.body, re.M) for p in NOT_INSTALLED):
            # Its decorators are untyped here (the package is missing), nothing else is relaxed.
            config.append(f"[mypy-{name[:-3]}]\ndisallow_untyped_decorators = False")
    lines: list[str] = []
    segments: list[tuple[int, Block]] = []
    for block in page.ran:
        module = _module_file(block)
        if module is not None:
            files[module] = [(1, block)]  # written there when it ran
            if not module.startswith("test_"):
                lines.append(f"from {module[:-3]} import *  # noqa: F403")
            continue
        segments.append((len(lines) + 1, block))
        lines.extend(block.body.splitlines())
    if segments:
        (workdir / "page_blocks.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
        files["page_blocks.py"] = segments
    (workdir / "mypy.ini").write_text("\n".join(config) + "\n", encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            "mypy.ini",
            "--no-error-summary",
            "--cache-dir",
            str(REPO_ROOT / ".mypy_cache"),
            *files,
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT * 2,
    )
    if done.returncode == 0:
        return
    problems: list[str] = []
    for line in done.stdout.splitlines():
        name, _, rest = line.partition(":")
        row, _, message = rest.partition(":")
        if name not in files or not row.isdigit():
            problems.append(line)
            continue
        begin, block = max((s for s in files[name] if s[0] <= int(row)), key=lambda s: s[0])
        problems.append(f"{block.path.name}:{block.line + int(row) - begin + 1}:{message}")
    raise BlockError("mypy --strict:\n" + "\n".join(problems) + done.stderr)


def run_file(path: Path, workdir: Path) -> Iterator[tuple[Block, str]]:
    """Check every block of ``path`` in order, then type check its Python blocks."""
    page = Page(workdir)
    try:
        for block in collect(path):
            yield block, check(block, page)
    finally:
        _forget_modules(page.workdir)
    typecheck(page)


def _forget_modules(workdir: Path) -> None:
    """Drop the modules a page imported from its own files (``server.py``...), so another
    page's file of the same name is imported afresh."""
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if origin is not None and Path(origin).resolve().is_relative_to(workdir.resolve()):
            del sys.modules[name]
