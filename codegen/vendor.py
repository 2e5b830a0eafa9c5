"""The vendored schema files of a revision: their names, the examples manifest, and writing them.

Each pinned revision keeps its files in ``<folder>/<rev>/`` next to ``pins.toml``:
``schema.json``, ``schema.ts``, ``changelog.md`` and ``examples/<Definition>/<name>.json``. The
examples are many small files, so the pin holds the sha256 of ``examples/SHA256SUMS`` (the
``sha256sum`` format, sorted by path) and that manifest holds each example's sha256.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

from .errors import CodegenError
from .pins import Pin

SCHEMA = "schema.json"
TS = "schema.ts"
CHANGELOG = "changelog.md"
EXAMPLES = "examples"
MANIFEST = f"{EXAMPLES}/SHA256SUMS"
# One manifest line: 64 hex digits, two spaces, a relative path of plain names (no "..").
_LINE = re.compile(r"^([0-9a-f]{64})  ((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*)$")


def expected_sha256(pin: Pin, name: str) -> str | None:
    """The pinned sha256 of the vendored file ``name`` (``schema.ts``...), None if not pinned."""
    return {
        SCHEMA: pin.sha256,
        TS: pin.ts_sha256,
        CHANGELOG: pin.changelog_sha256,
        MANIFEST: pin.examples_sha256,
    }.get(name)


def render_manifest(files: Mapping[str, bytes]) -> bytes:
    """``SHA256SUMS`` of ``files`` (path relative to ``examples/`` -> bytes), sorted by path."""
    lines = [f"{hashlib.sha256(files[name]).hexdigest()}  {name}\n" for name in sorted(files)]
    return "".join(lines).encode("utf-8")


def parse_manifest(data: bytes, source: str) -> dict[str, str]:
    """Relative path -> sha256 from ``SHA256SUMS`` bytes; a CodegenError for a malformed line."""
    entries: dict[str, str] = {}
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        match = _LINE.match(line)
        if match is None or ".." in match.group(2).split("/"):
            raise CodegenError(f"{source}: line {number} is not '<sha256>  <path>': {line[:80]!r}")
        entries[match.group(2)] = match.group(1)
    return entries


def read_examples_folder(folder: Path) -> dict[str, bytes]:
    """Every ``<Definition>/<name>.json`` under ``folder`` (a spec ``examples/`` folder)."""
    try:
        return {
            path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.glob("*/*.json"))
            if path.is_file()
        }
    except OSError as exc:
        raise CodegenError(f"cannot read examples in {folder}: {exc.strerror or exc}") from None


def write_revision(
    folder: Path, revision: str, files: Mapping[str, bytes], examples: Mapping[str, bytes] | None
) -> Path:
    """Write a revision's vendored files into ``folder/revision``: ``files`` by name, and when
    ``examples`` is given, ``examples/`` replaced by them and their ``SHA256SUMS``."""
    target = folder / revision
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (target / name).write_bytes(data)
        if examples is not None:
            shutil.rmtree(target / EXAMPLES, ignore_errors=True)
            for name, data in examples.items():
                (target / EXAMPLES / name).parent.mkdir(parents=True, exist_ok=True)
                (target / EXAMPLES / name).write_bytes(data)
            (target / MANIFEST).parent.mkdir(parents=True, exist_ok=True)
            (target / MANIFEST).write_bytes(render_manifest(examples))
    except OSError as exc:
        raise CodegenError(
            f"cannot write the schema files in {target}: {exc.strerror or exc}"
        ) from None
    return target
