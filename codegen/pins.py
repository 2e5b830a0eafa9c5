"""Read and write the revision pins in ``schema/pins.toml``, and find the vendored files.

A pin ties a revision name to the exact bytes we generate from (spec commit, URL, sha256), because
released schema files were edited after their release date. ``schema.ts`` (read by ``mcpbind
diff`` for ``@deprecated``), the changelog page and the spec's example messages (through their
``SHA256SUMS``) are pinned beside it, each with its own sha256. The pinned files themselves are
vendored as ``<rev>/schema.json`` (and so on) next to ``pins.toml``: in ``schema/`` of the checkout
and in the installed package. ``write_pins`` rewrites the file in one fixed form: the leading
comment block kept, revisions sorted, keys in ``KEYS`` order, so ``mcpbind pin`` changes only the
lines of the revision it pins. ``[extensions."<name>"."<version>"]`` tables pin protocol
extensions' schemas for ``mcpbind diff`` (``ExtensionPin``, vendored in
``extensions/<name>/<version>/``); ``load_pins`` (and so ``generate``) never reads them, and
``write_pins`` keeps them.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .errors import CodegenError

PINS_ENV = "MCPBIND_PINS"
KEYS = (
    "spec_commit",
    "path",
    "last_change",
    "last_change_date",
    "sha256",
    "url",
    "ts_sha256",
    "changelog_sha256",
    "examples_sha256",
)
_REQUIRED = ("spec_commit", "path", "sha256", "url")
_RAW_GITHUB = re.compile(
    r"^https://raw\.githubusercontent\.com/[^/]+/[^/]+/([0-9a-f]{40})/(.+)$", re.IGNORECASE
)


@dataclass(frozen=True)
class Pin:
    """Where one revision's ``schema.json`` comes from, and the sha256 its bytes must have."""

    revision: str
    spec_commit: str
    path: str
    sha256: str
    url: str
    last_change: str | None = None
    last_change_date: str | None = None
    ts_sha256: str | None = None
    changelog_sha256: str | None = None
    examples_sha256: str | None = None

    @property
    def ts_url(self) -> str:
        """``schema.ts`` sits next to ``schema.json`` in the specification repository."""
        return self.url.rsplit("/", 1)[0] + "/schema.ts"

    def entry(self) -> dict[str, str]:
        values = {
            "spec_commit": self.spec_commit,
            "path": self.path,
            "last_change": self.last_change,
            "last_change_date": self.last_change_date,
            "sha256": self.sha256,
            "url": self.url,
            "ts_sha256": self.ts_sha256,
            "changelog_sha256": self.changelog_sha256,
            "examples_sha256": self.examples_sha256,
        }
        return {k: v for k in KEYS if (v := values[k]) is not None}


#: The keys of an ``[extensions."<name>"."<version>"]`` table, in the order they are written.
EXTENSION_KEYS = ("identifier", "base", "spec_commit", "path", "sha256", "url")
_EXTENSION_REQUIRED = ("identifier", "base", "path", "sha256", "url")


@dataclass(frozen=True)
class ExtensionPin:
    """One version of a protocol extension's JSON schema: where its bytes come from, their sha256,
    and the revision it extends (``base``). ``spec_commit`` is None for bytes taken from a
    package release rather than a repository commit. ``generate`` never reads these."""

    name: str
    version: str
    identifier: str
    base: str
    path: str
    sha256: str
    url: str
    spec_commit: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"

    def entry(self) -> dict[str, str]:
        values = {
            "identifier": self.identifier,
            "base": self.base,
            "spec_commit": self.spec_commit,
            "path": self.path,
            "sha256": self.sha256,
            "url": self.url,
        }
        return {k: v for k in EXTENSION_KEYS if (v := values[k]) is not None}


def is_commit(text: str) -> bool:
    """Whether ``text`` is a full commit hash: 40 lowercase hex digits."""
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)


def commit_of(url: str) -> tuple[str, str] | None:
    """(commit, path in the repository) of a raw.githubusercontent URL at a full commit hash."""
    match = _RAW_GITHUB.match(url)
    return (match.group(1).lower(), match.group(2)) if match else None


def pins_file() -> Path | None:
    """``$MCPBIND_PINS``, else None: the pins shipped in the package are read then."""
    explicit = os.environ.get(PINS_ENV)
    return Path(explicit) if explicit else None


def package_schema_dir() -> Path:
    """The package's own ``schema/`` folder: the checkout's, or the installed copy's."""
    return Path(__file__).resolve().parent.parent / "schema"


def schema_folders(pins: Path | None = None) -> tuple[Path, ...]:
    """Where the vendored files of the pins in use live, in the order they are looked for: next to
    the pins file (``pins``, else ``$MCPBIND_PINS``), then the package's own ``schema/``."""
    source = pins or pins_file()
    folders = [source.resolve().parent] if source is not None else []
    package = package_schema_dir()
    return tuple(folders) if package in folders else (*folders, package)


def _text(path: Path | None) -> str:
    if path is None:
        path = package_schema_dir() / "pins.toml"
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CodegenError(f"cannot read pins {path}: {exc.strerror or exc}") from None


def load_pins(path: Path | None = None) -> dict[str, Pin]:
    """All pinned revisions, oldest first (``path``, else ``$MCPBIND_PINS``, else the package's)."""
    source = path or pins_file()
    try:
        table = tomllib.loads(_text(source)).get("revisions", {})
    except tomllib.TOMLDecodeError as exc:
        raise CodegenError(f"{source or 'pins.toml'}: not valid TOML: {exc}") from None
    pins: dict[str, Pin] = {}
    for rev, entry in sorted(table.items()):
        missing = [k for k in _REQUIRED if not isinstance(entry.get(k), str)]
        if missing:
            raise CodegenError(f"pin {rev}: missing {', '.join(missing)}")
        pins[rev] = Pin(revision=rev, **{k: entry[k] for k in KEYS if k in entry})
    return pins


def load_extension_pins(path: Path | None = None) -> dict[str, dict[str, ExtensionPin]]:
    """Every pinned extension version: name -> version -> pin, both sorted."""
    source = path or pins_file()
    try:
        table = tomllib.loads(_text(source)).get("extensions", {})
    except tomllib.TOMLDecodeError as exc:
        raise CodegenError(f"{source or 'pins.toml'}: not valid TOML: {exc}") from None
    pins: dict[str, dict[str, ExtensionPin]] = {}
    for name, versions in sorted(table.items()):
        for version, entry in sorted(versions.items()):
            missing = [k for k in _EXTENSION_REQUIRED if not isinstance(entry.get(k), str)]
            if missing:
                raise CodegenError(f"extension pin {name}@{version}: missing {', '.join(missing)}")
            values = {k: entry[k] for k in EXTENSION_KEYS if k in entry}
            pins.setdefault(name, {})[version] = ExtensionPin(name=name, version=version, **values)
    return pins


def get_extension_pin(name: str, version: str | None, path: Path | None = None) -> ExtensionPin:
    """The pin of extension ``name`` at ``version`` (the newest pinned when None)."""
    pins = load_extension_pins(path)
    if name not in pins:
        known = ", ".join(pins) or "none"
        raise CodegenError(f"unknown extension {name!r}; pinned extensions: {known}")
    versions = pins[name]
    if version is None:
        return versions[max(versions)]
    if version not in versions:
        raise CodegenError(
            f"extension {name} has no pinned version {version!r}; pinned: {', '.join(versions)}"
        )
    return versions[version]


def get_pin(revision: str, path: Path | None = None) -> Pin:
    """The pin of ``revision``, or a CodegenError listing the known ones."""
    pins = load_pins(path)
    try:
        return pins[revision]
    except KeyError:
        known = ", ".join(pins)
        raise CodegenError(f"unknown revision {revision!r}; pinned revisions: {known}") from None


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_pins(
    header: str,
    pins: dict[str, Pin],
    extensions: dict[str, dict[str, ExtensionPin]] | None = None,
) -> str:
    """The file text: ``header`` (comment lines), one table per revision, then one per extension
    version, each sorted."""
    blocks: list[str] = []
    for rev in sorted(pins):
        lines = [f"[revisions.{_quote(rev)}]"]
        lines += [f"{key} = {_quote(value)}" for key, value in pins[rev].entry().items()]
        blocks.append("\n".join(lines))
    for name, versions in sorted((extensions or {}).items()):
        for version, pin in sorted(versions.items()):
            lines = [f"[extensions.{_quote(name)}.{_quote(version)}]"]
            lines += [f"{key} = {_quote(value)}" for key, value in pin.entry().items()]
            blocks.append("\n".join(lines))
    return header.rstrip("\n") + "\n\n" + "\n\n".join(blocks) + "\n"


def write_pins(
    path: Path,
    pins: dict[str, Pin],
    extensions: dict[str, dict[str, ExtensionPin]] | None = None,
) -> None:
    """Rewrite ``path`` with ``pins`` and ``extensions`` (None: the ones it has), keeping its
    leading comment block."""
    text = _text(path) if path.is_file() else "# Pinned MCP schema revisions.\n"
    header = text.split("\n[", 1)[0] if not text.startswith("[") else ""
    if extensions is None:
        extensions = load_extension_pins(path) if path.is_file() else {}
    try:
        path.write_text(render_pins(header, pins, extensions), encoding="utf-8")
    except OSError as exc:
        raise CodegenError(f"cannot write {path}: {exc.strerror or exc}") from None
