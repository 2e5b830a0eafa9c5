"""Stage 1 of the pipeline: find a revision's schema bytes, verify them, parse them.

The pinned bytes are vendored next to ``pins.toml`` (``schema/<rev>/schema.json`` in the checkout
and in the installed package, see ``pins.schema_folders``); ``$MCPBIND_SCHEMA_DIR/<rev>/`` is an
optional override looked at first. Every read of a pinned file, each time, checks its bytes
against the pin: another sha256 is a one-line error naming the file and both hashes. Loading
never downloads; only ``mcpbind pin`` does, and writes what it got next to its pins file.
An explicit path is used as given: its own hash goes into the generated header.

``fetch`` and the user cache serve ``mcpbind pin`` and ``mcpbind revisions --remote/--cached``:
the cache keeps ``<cache>/<rev>/latest``, the sha256 of the newest bytes downloaded from a pinned
URL. ``MCPBIND_OFFLINE=1`` never touches the network.
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
from .jsonvalues import is_object
from .pins import ExtensionPin, Pin, get_pin, schema_folders
from .vendor import CHANGELOG, MANIFEST, SCHEMA, TS, expected_sha256, parse_manifest

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
    # Where the vendored files of ``pin`` are looked for (its schema.ts too).
    folders: tuple[Path, ...] = ()


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
        parsed: object = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CodegenError(f"{source}: not valid JSON: {exc}") from None
    if not is_object(parsed):
        raise CodegenError(f"{source}: a schema must be a JSON object, got {type(parsed).__name__}")
    document = parsed
    defs = document.get("$defs", document.get("definitions"))
    if not is_object(defs) or not defs:
        raise CodegenError(f"{source}: no '$defs' or 'definitions' object: not an MCP schema")
    return document


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CodegenError(f"cannot read schema {path}: {exc.strerror or exc}") from None


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


def _candidates(revision: str, name: str, folders: tuple[Path, ...]) -> list[Path]:
    env_dir = os.environ.get(SCHEMA_DIR_ENV)
    roots = [Path(env_dir), *folders] if env_dir else list(folders)
    return [root / revision / name for root in roots]


def verified_bytes(path: Path, expected: str) -> bytes:
    """The bytes of ``path``, read now, if their sha256 is ``expected``; else a CodegenError."""
    data = _read(path)
    actual = sha256_hex(data)
    if actual != expected:
        raise CodegenError(f"{path}: sha256 mismatch: expected {expected}, got {actual}")
    return data


def read_pinned(pin: Pin, name: str, folders: tuple[Path, ...]) -> tuple[bytes, Path] | None:
    """The verified bytes of the vendored file ``name`` of ``pin`` and where they were, from the
    first folder that has it ($MCPBIND_SCHEMA_DIR first); None if not pinned or found nowhere.
    Bytes that differ from the pin are an error, never a reason to look further."""
    expected = expected_sha256(pin, name)
    if expected is None:
        return None
    for path in _candidates(pin.revision, name, folders):
        if path.is_file():
            return verified_bytes(path, expected), path
    return None


def _missing(pin: Pin, name: str, folders: tuple[Path, ...]) -> CodegenError:
    places = ", ".join(str(p) for p in _candidates(pin.revision, name, folders))
    return CodegenError(
        f"revision {pin.revision} is pinned but its {name} is not vendored (looked for {places}); "
        f"`mcpbind pin {pin.revision} --url {pin.url}` downloads and writes it, or set "
        f"${SCHEMA_DIR_ENV} to a folder holding {pin.revision}/{name}"
    )


def resolve_pinned_bytes(pin: Pin, folders: tuple[Path, ...] | None = None) -> tuple[bytes, str]:
    """The verified ``schema.json`` bytes of a pinned revision and the file they came from."""
    folders = schema_folders() if folders is None else folders
    found = read_pinned(pin, SCHEMA, folders)
    if found is None:
        raise _missing(pin, SCHEMA, folders)
    return found[0], str(found[1])


def load_revision(revision: str, pins: Path | None = None) -> LoadedSchema:
    """Load a pinned revision from the vendored files of ``pins`` (default: the package's)."""
    pin = get_pin(revision, pins)
    folders = schema_folders(pins)
    data, source = resolve_pinned_bytes(pin, folders)
    return LoadedSchema(revision, parse_schema(data, source), pin.sha256, source, pin, folders)


def load_schema_ts(loaded: LoadedSchema) -> tuple[str | None, str]:
    """The ``schema.ts`` of ``loaded`` and where it came from, or None and why not.

    Deprecations are extra information, so a missing file is a note, not an error; a pinned file
    with other bytes is an error all the same.
    """
    if loaded.pin is not None:
        if loaded.pin.ts_sha256 is None:
            return None, f"no schema.ts pinned for {loaded.revision}"
        found = read_pinned(loaded.pin, TS, loaded.folders or schema_folders())
        if found is None:
            return None, f"no {loaded.revision}/schema.ts vendored"
        return found[0].decode("utf-8", "replace"), str(found[1])
    candidate = Path(loaded.source).with_name("schema.ts")
    if candidate.is_file():
        return _read(candidate).decode("utf-8", "replace"), str(candidate)
    return None, f"no {candidate}"


def load_changelog(revision: str, pins: Path | None = None) -> str | None:
    """The verified changelog page of a pinned revision; None when none is pinned (the first
    dated revision has none)."""
    pin = get_pin(revision, pins)
    if pin.changelog_sha256 is None:
        return None
    folders = schema_folders(pins)
    found = read_pinned(pin, CHANGELOG, folders)
    if found is None:
        raise _missing(pin, CHANGELOG, folders)
    return found[0].decode("utf-8")


def load_examples(revision: str, pins: Path | None = None) -> dict[str, bytes]:
    """The spec's example messages of a pinned revision (``<Definition>/<name>.json`` -> bytes),
    each checked against the pinned ``SHA256SUMS``; empty when the revision pins none.

    An example the manifest lists but the folder lacks, or one there the manifest does not list,
    is an error too: the set of examples is pinned, not only their bytes.
    """
    pin = get_pin(revision, pins)
    if pin.examples_sha256 is None:
        return {}
    folders = schema_folders(pins)
    found = read_pinned(pin, MANIFEST, folders)
    if found is None:
        raise _missing(pin, MANIFEST, folders)
    data, manifest = found
    listed = parse_manifest(data, str(manifest))
    folder = manifest.parent
    present = {path.relative_to(folder).as_posix() for path in folder.glob("*/*.json")}
    unlisted = sorted(present - listed.keys())
    if unlisted:
        raise CodegenError(f"{folder / unlisted[0]}: not listed in {manifest}")
    return {name: verified_bytes(folder / name, digest) for name, digest in sorted(listed.items())}


def load_file(path: Path, revision: str) -> LoadedSchema:
    """Load an explicit schema file under a revision name of the caller's choosing."""
    data = _read(path)
    return LoadedSchema(revision, parse_schema(data, str(path)), sha256_hex(data), str(path), None)


def load_extension(pin: ExtensionPin, pins: Path | None = None) -> tuple[dict[str, Any], str]:
    """The parsed, verified schema of one pinned extension version and the file it came from:
    ``extensions/<name>/<version>/schema.json`` next to the pins (``$MCPBIND_SCHEMA_DIR`` first)."""
    relative = Path("extensions", pin.name, pin.version, SCHEMA)
    env_dir = os.environ.get(SCHEMA_DIR_ENV)
    roots = [Path(env_dir), *schema_folders(pins)] if env_dir else list(schema_folders(pins))
    for root in roots:
        path = root / relative
        if path.is_file():
            return parse_schema(verified_bytes(path, pin.sha256), str(path)), str(path)
    places = ", ".join(str(root / relative) for root in roots)
    raise CodegenError(f"extension {pin.label} is pinned but not vendored (looked for {places})")
