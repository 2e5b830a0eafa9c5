"""Stage 5 of the pipeline: write generated files, or compare them with what is on disk.

``--check`` uses :func:`drift` so that CI fails, with a unified diff, whenever ``generated/`` is not
exactly what the generator produces.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from .errors import CodegenError

_REVISION_LINE = re.compile(r'^REVISION: Final = "([^"]+)"$', re.MULTILINE)
_ERA_LINE = re.compile(r'^ERA: Final = "([^"]+)"$', re.MULTILINE)


def existing_revisions(out: Path) -> dict[str, str]:
    """Revisions already generated under ``out`` (name -> era), read from their method tables."""
    found: dict[str, str] = {}
    if not out.is_dir():
        return found
    for methods in sorted(out.glob("v*/methods.py")):
        text = methods.read_text(encoding="utf-8")
        revision, era = _REVISION_LINE.search(text), _ERA_LINE.search(text)
        if revision and era:
            found[revision.group(1)] = era.group(1)
    return found


def write_files(out: Path, files: dict[str, str]) -> list[Path]:
    """Write ``files`` (relative path -> text) under ``out``; only files whose bytes changed."""
    written = []
    for relative, text in sorted(files.items()):
        path = out / relative
        data = text.encode("utf-8")
        try:
            if path.is_file() and path.read_bytes() == data:
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        except OSError as exc:
            raise CodegenError(f"cannot write {path}: {exc.strerror or exc}") from None
        written.append(path)
    return written


def drift(out: Path, files: dict[str, str], owned_dirs: list[str]) -> str:
    """A unified diff from what is on disk to what the generator produces; empty when equal.

    Files under ``owned_dirs`` that the generator would not produce are reported as stale.
    """
    chunks: list[str] = []
    expected = set(files)
    for relative in sorted(files):
        path = out / relative
        current = path.read_text(encoding="utf-8") if path.is_file() else ""
        if current != files[relative]:
            chunks.extend(
                difflib.unified_diff(
                    current.splitlines(keepends=True),
                    files[relative].splitlines(keepends=True),
                    fromfile=f"a/{relative}" if path.is_file() else "/dev/null",
                    tofile=f"b/{relative}",
                )
            )
    for directory in owned_dirs:
        for path in sorted((out / directory).glob("*.py")) if (out / directory).is_dir() else []:
            relative = path.relative_to(out).as_posix()
            if relative not in expected:
                chunks.append(f"stale file not produced by the generator: {relative}\n")
    return "".join(chunks)
