"""``mcpbind pin VERSION --extension NAME``: pin one version of a protocol extension's schema.

The bytes go into ``extensions/<name>/<version>/schema.json`` next to the pins file and an
``[extensions."<name>"."<version>"]`` table into it, as ``mcpbind diff`` reads them
(``REV+name@version``). An extension's schema is published in its own repository or in a
package release (the MCP Apps schema ships in an npm package), so the URL is only downloaded
when it is http or https; any other (``npm:...``) is recorded as the source of a ``--file``.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import CodegenError
from ..load import parse_schema, sha256_hex
from ..pins import (
    ExtensionPin,
    commit_of,
    get_pin,
    is_commit,
    load_extension_pins,
    load_pins,
    write_pins,
)
from ..vendor import SCHEMA
from .common import download, read_input

__all__ = ["pin_extension"]

_DOWNLOADED = ("http://", "https://")


def _bytes(url: str, file: Path | None) -> bytes:
    if file is not None:
        return read_input(file)
    if not url.startswith(_DOWNLOADED):
        raise CodegenError(f"{url} cannot be downloaded: give its bytes with --file")
    return download(url)


def _commit(commit: str | None, url: str) -> str | None:
    found = commit or (at[0] if (at := commit_of(url)) else None)
    if found is None:
        return None
    if not is_commit(found.lower()):
        raise CodegenError(f"--commit {commit!r}: a commit is 40 hex digits")
    return found.lower()


def pin_extension(
    target: Path,
    name: str,
    version: str,
    *,
    url: str | None,
    file: Path | None,
    commit: str | None,
    identifier: str | None,
    base: str | None,
) -> str:
    """Pin ``name`` at ``version`` in the pins file ``target`` and vendor its schema beside it;
    the line to print. The identifier and base default to the newest pinned version's."""
    if url is None:
        raise CodegenError(
            "an extension's pin records where its bytes are published: give --url "
            "(with --file, the URL is recorded and the file read)"
        )
    data = _bytes(url, file)
    parse_schema(data, str(file or url))
    extensions = load_extension_pins(target) if target.is_file() else {}
    versions = extensions.get(name, {})
    newest = versions[max(versions)] if versions else None
    identifier = identifier or (newest.identifier if newest else None)
    base = base or (newest.base if newest else None)
    if identifier is None or base is None:
        raise CodegenError(
            f"{name} is a new extension: give --identifier (its capability key, as "
            "io.modelcontextprotocol/tasks) and --base (the revision it extends)"
        )
    get_pin(base, target)  # the revision it extends is pinned, or an error naming those that are
    relative = Path("extensions", name, version, SCHEMA)
    pin = ExtensionPin(
        name=name,
        version=version,
        identifier=identifier,
        base=base,
        path=f"schema/{relative.as_posix()}",
        sha256=sha256_hex(data),
        url=url,
        spec_commit=_commit(commit, url),
    )
    destination = target.parent / relative
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(data)
    except OSError as exc:
        raise CodegenError(f"cannot write {destination}: {exc.strerror or exc}") from None
    before = versions.get(version)
    write_pins(target, load_pins(target), {**extensions, name: {**versions, version: pin}})
    verb = "pinned" if before is None else ("unchanged" if before == pin else "re-pinned")
    previous = (
        f"`mcpbind diff {base}+{newest.label} {base}+{pin.label}`"
        if newest is not None and newest.version != version
        else f"`mcpbind diff {base} {base}+{pin.label}`"
    )
    return (
        f"{verb} extension {pin.label}: sha256 {pin.sha256[:12]}, extends {base}, in {target}, "
        f"schema in {destination}; now run {previous}"
    )
