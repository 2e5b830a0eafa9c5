"""Stage 1 of the pipeline: find a revision's schema bytes, verify them, parse them.

Resolution order for a pinned revision: an explicit path; ``$MCPBIND_SCHEMA_DIR/<rev>/schema.json``;
the user cache; a download of the pinned URL (then cached). Bytes from the environment directory,
the cache or the network must match the pinned sha256. An explicit path is used as given: its own
hash goes into the generated header.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import CodegenError
from .pins import Pin, get_pin

SCHEMA_DIR_ENV = "MCPBIND_SCHEMA_DIR"
CACHE_DIR_ENV = "MCPBIND_CACHE_DIR"
DOWNLOAD_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class LoadedSchema:
    """A parsed schema document and what we know of where it came from."""

    revision: str
    document: dict[str, Any]
    sha256: str
    source: str
    pin: Pin | None


def cache_dir() -> Path:
    """The user cache of verified schema files (``$MCPBIND_CACHE_DIR`` or ``~/.cache/mcpbind``)."""
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mcpbind" / "schema"


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse_schema(data: bytes, source: str) -> dict[str, Any]:
    """Parse schema bytes, with one clear error for bytes that are not a JSON Schema document."""
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CodegenError(f"{source}: not valid JSON: {exc}") from None
    if not isinstance(document, dict):
        raise CodegenError(
            f"{source}: a schema must be a JSON object, got {type(document).__name__}"
        )
    defs = document.get("$defs", document.get("definitions"))
    if not isinstance(defs, dict) or not defs:
        raise CodegenError(f"{source}: no '$defs' or 'definitions' object: not an MCP schema")
    return document


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CodegenError(f"cannot read schema {path}: {exc.strerror or exc}") from None


def _verified(pin: Pin, data: bytes, source: str) -> bytes:
    actual = sha256_hex(data)
    if actual != pin.sha256:
        raise CodegenError(
            f"{source}: sha256 mismatch for revision {pin.revision}: "
            f"expected {pin.sha256}, got {actual}"
        )
    return data


def _download(pin: Pin) -> bytes:
    try:
        with urllib.request.urlopen(pin.url, timeout=DOWNLOAD_TIMEOUT_S) as response:
            data: bytes = response.read()
    except (urllib.error.URLError, OSError) as exc:
        raise CodegenError(
            f"revision {pin.revision}: not found in ${SCHEMA_DIR_ENV} or the cache, "
            f"and downloading {pin.url} failed: {exc}"
        ) from None
    return data


def resolve_pinned_bytes(pin: Pin) -> tuple[bytes, str]:
    """The verified bytes of a pinned revision and a description of where they came from."""
    env_dir = os.environ.get(SCHEMA_DIR_ENV)
    if env_dir:
        candidate = Path(env_dir) / pin.revision / "schema.json"
        if candidate.is_file():
            return _verified(pin, _read(candidate), str(candidate)), str(candidate)
    cached = cache_dir() / pin.revision / f"{pin.sha256}.json"
    if cached.is_file():
        return _verified(pin, _read(cached), str(cached)), str(cached)
    data = _verified(pin, _download(pin), pin.url)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_bytes(data)
    except OSError:
        pass  # a read-only home must not stop generation; the bytes are verified either way
    return data, pin.url


def load_revision(revision: str) -> LoadedSchema:
    """Load a pinned revision from the first place that has its verified bytes."""
    pin = get_pin(revision)
    data, source = resolve_pinned_bytes(pin)
    return LoadedSchema(revision, parse_schema(data, source), pin.sha256, source, pin)


def load_file(path: Path, revision: str) -> LoadedSchema:
    """Load an explicit schema file under a revision name of the caller's choosing."""
    data = _read(path)
    return LoadedSchema(revision, parse_schema(data, str(path)), sha256_hex(data), str(path), None)
