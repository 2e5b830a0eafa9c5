"""Stage 1 of the pipeline: find a revision's schema bytes, verify them, parse them.

Resolution order for a pinned revision: an explicit path; ``$MCPBIND_SCHEMA_DIR/<rev>/schema.json``;
the user cache; a download of the pinned URL (then cached). Bytes from the environment directory,
the cache or the network must match the pinned sha256. An explicit path is used as given: its own
hash goes into the generated header. ``schema.ts`` is found the same way, next to ``schema.json``.

The cache holds ``<cache>/<rev>/<sha256>.json`` (and ``.ts``), and ``<rev>/latest``: the sha256
of the newest bytes downloaded from the pinned URL, which ``mcpbind revisions --cached`` compares
with the pin. ``MCPBIND_OFFLINE=1`` never touches the network; a failed download fails at once,
with how to provide the schema instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import CodegenError
from .pins import Pin, get_pin

SCHEMA_DIR_ENV = "MCPBIND_SCHEMA_DIR"
CACHE_DIR_ENV = "MCPBIND_CACHE_DIR"
OFFLINE_ENV = "MCPBIND_OFFLINE"
DOWNLOAD_TIMEOUT_S = 10.0


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


def offline() -> bool:
    return os.environ.get(OFFLINE_ENV, "") not in ("", "0")


def fetch(url: str) -> bytes:
    """The bytes at ``url`` (http, https or file); ``OSError`` when they cannot be had.

    The whole attempt, name resolution included, is bounded by ``DOWNLOAD_TIMEOUT_S``: a socket
    timeout does not cover ``getaddrinfo``, whose retries make an offline lookup take most of a
    minute, so the download runs in a daemon thread that is abandoned when time is up.
    """
    if offline():
        raise OSError(f"${OFFLINE_ENV} is set")
    outcome: list[bytes | BaseException] = []

    def attempt() -> None:
        try:
            with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response:
                outcome.append(response.read())
        except urllib.error.URLError as exc:
            outcome.append(OSError(str(exc.reason)))
        except OSError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=attempt, name=f"mcpbind-fetch {url}", daemon=True)
    worker.start()
    worker.join(DOWNLOAD_TIMEOUT_S)
    if not outcome:
        raise OSError(f"no answer within {DOWNLOAD_TIMEOUT_S:g} s (offline? set ${OFFLINE_ENV}=1)")
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


def how_to_provide(revision: str, url: str, name: str = "schema.json") -> str:
    """The one-line advice for a schema that is nowhere to be found."""
    return (
        f"set ${SCHEMA_DIR_ENV} to a folder holding {revision}/{name} "
        f"(layout <dir>/<revision>/{name}), or download {url} "
        f"into {cache_dir() / revision}/ once online"
    )


def _download(pin: Pin) -> bytes:
    try:
        return fetch(pin.url)
    except OSError as exc:
        raise CodegenError(
            f"revision {pin.revision}: no schema in ${SCHEMA_DIR_ENV} or the cache, and "
            f"downloading failed ({exc}); {how_to_provide(pin.revision, pin.url)}"
        ) from None


def remember(revision: str, data: bytes, suffix: str = "json", latest: bool = False) -> Path:
    """Store downloaded bytes in the user cache (best effort: a read-only home is no error)."""
    digest = sha256_hex(data)
    folder = cache_dir() / revision
    path = folder / f"{digest}.{suffix}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not path.is_file():
            path.write_bytes(data)
        if latest:
            (folder / "latest").write_text(digest + "\n", encoding="utf-8")
    except OSError:
        pass
    return path


def cached_latest(revision: str) -> str | None:
    """The sha256 of the newest download of ``revision``'s URL, if the cache recorded one."""
    try:
        return (cache_dir() / revision / "latest").read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


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
    downloaded = _download(pin)
    remember(pin.revision, downloaded, latest=True)
    return _verified(pin, downloaded, pin.url), pin.url


def load_revision(revision: str, pins: Path | None = None) -> LoadedSchema:
    """Load a pinned revision from the first place that has its verified bytes."""
    pin = get_pin(revision, pins)
    data, source = resolve_pinned_bytes(pin)
    return LoadedSchema(revision, parse_schema(data, source), pin.sha256, source, pin)


def _pinned_ts(pin: Pin) -> tuple[str | None, str]:
    env_dir = os.environ.get(SCHEMA_DIR_ENV)
    candidates = [Path(env_dir) / pin.revision / "schema.ts"] if env_dir else []
    if pin.ts_sha256:
        candidates.append(cache_dir() / pin.revision / f"{pin.ts_sha256}.ts")
    for candidate in candidates:
        if candidate.is_file():
            data = _read(candidate)
            if pin.ts_sha256 and sha256_hex(data) != pin.ts_sha256:
                return None, f"{candidate}: sha256 is not the pinned ts_sha256"
            return data.decode("utf-8", "replace"), str(candidate)
    if not pin.ts_sha256:
        return None, f"no schema.ts pinned for {pin.revision}"
    try:
        data = fetch(pin.ts_url)
    except OSError as exc:
        return None, f"{pin.ts_url}: {exc}"
    if sha256_hex(data) != pin.ts_sha256:
        return None, f"{pin.ts_url}: sha256 is not the pinned ts_sha256"
    remember(pin.revision, data, suffix="ts")
    return data.decode("utf-8", "replace"), pin.ts_url


def load_schema_ts(loaded: LoadedSchema) -> tuple[str | None, str]:
    """The ``schema.ts`` of ``loaded`` and where it came from, or None and why not.

    Never fails: deprecations are extra information, so a missing file is a note, not an error.
    """
    if loaded.pin is not None:
        return _pinned_ts(loaded.pin)
    candidate = Path(loaded.source).with_name("schema.ts")
    if candidate.is_file():
        return _read(candidate).decode("utf-8", "replace"), str(candidate)
    return None, f"no {candidate}"


def load_file(path: Path, revision: str) -> LoadedSchema:
    """Load an explicit schema file under a revision name of the caller's choosing."""
    data = _read(path)
    return LoadedSchema(revision, parse_schema(data, str(path)), sha256_hex(data), str(path), None)
