"""Stage 5 of the pipeline: write generated files, or compare them with what is on disk.

``--check`` uses :func:`drift` so that CI fails, with a unified diff, whenever ``generated/`` is not
exactly what the generator produces.
"""

from __future__ import annotations

import difflib
import re
import shutil
from pathlib import Path

from .errors import CodegenError

_REVISION_LINE = re.compile(r'^REVISION: Final = "([^"]+)"$', re.MULTILINE)
_ERA_LINE = re.compile(r'^ERA: Final = "([^"]+)"$', re.MULTILINE)


def package_dir(revision: str) -> str:
    """The package folder of a revision: ``2025-11-25`` -> ``v2025_11_25``."""
    return "v" + revision.replace("-", "_").replace(".", "_")


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
    written: list[Path] = []
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


def unproduced(out: Path, files: dict[str, str], owned_dirs: list[str]) -> list[str]:
    """Modules and stubs under ``owned_dirs`` (``""`` is ``out`` itself) not in ``files``: left
    over from an earlier generator (``_support.py``) or added by hand."""
    found: list[str] = []
    for directory in owned_dirs:
        folder = out / directory
        modules = [*folder.glob("*.py"), *folder.glob("*.pyi")] if folder.is_dir() else []
        for path in sorted(modules):
            relative = path.relative_to(out).as_posix()
            if relative not in files:
                found.append(relative)
    return found


def remove_files(out: Path, relatives: list[str]) -> list[Path]:
    """Delete ``relatives`` under ``out`` (the modules :func:`unproduced` found)."""
    removed: list[Path] = []
    for relative in relatives:
        path = out / relative
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise CodegenError(f"cannot remove {path}: {exc.strerror or exc}") from None
        removed.append(path)
    return removed


def drift(out: Path, files: dict[str, str], owned_dirs: list[str]) -> str:
    """A unified diff from what is on disk to what the generator produces; empty when equal.

    Files are compared byte for byte (no newline translation: ``support.py`` is a verbatim
    copy). Files under ``owned_dirs`` that the generator would not produce are reported as stale.
    """
    chunks: list[str] = []
    for relative in sorted(files):
        path = out / relative
        current = path.read_bytes().decode("utf-8", "replace") if path.is_file() else ""
        if current != files[relative]:
            chunks.extend(
                difflib.unified_diff(
                    current.splitlines(keepends=True),
                    files[relative].splitlines(keepends=True),
                    fromfile=f"a/{relative}" if path.is_file() else "/dev/null",
                    tofile=f"b/{relative}",
                )
            )
            if not chunks[-1].endswith("\n"):
                chunks.append("\n\\ No newline at end of file\n")
    for relative in unproduced(out, files, owned_dirs):
        chunks.append(f"stale file not produced by the generator: {relative}\n")
    return "".join(chunks)


def extra_packages(out: Path, wanted: set[str]) -> list[str]:
    """Revisions generated under ``out`` that are not in ``wanted`` (a pin was removed)."""
    return sorted(set(existing_revisions(out)) - wanted)


def remove_packages(out: Path, revisions: list[str]) -> list[Path]:
    """Delete the packages of ``revisions`` under ``out``; the index is rewritten by the caller."""
    removed: list[Path] = []
    for revision in revisions:
        folder = out / package_dir(revision)
        try:
            shutil.rmtree(folder)
        except OSError as exc:
            raise CodegenError(f"cannot remove {folder}: {exc.strerror or exc}") from None
        removed.append(folder)
    return removed


def package_drift(out: Path, pinned: list[str], generated: list[str]) -> str:
    """``--check`` lines for whole packages: one generated for no pin, or a pin not generated."""
    present = set(existing_revisions(out))
    lines = [
        f"extra package not produced by the generator: {package_dir(r)} ({r} is not pinned)\n"
        for r in sorted(present - set(pinned))
    ]
    lines += [
        f"missing package: {package_dir(r)} (pinned revision {r} is not generated)\n"
        for r in sorted(set(generated) - present)
    ]
    return "".join(lines)
