"""``mcpbind pin`` (record a revision's bytes and vendor its files) and ``mcpbind revisions``
(what is pinned, generated, and whether the bytes at a pinned URL changed upstream).

``pin`` is the one command that downloads schemas: it writes ``schema.json``, ``schema.ts``, the
changelog page (and, from a ``--file`` in a spec checkout, the ``examples/``) into
``<rev>/`` next to the pins file, and their sha256 into the pin.

A released schema was edited upstream more than once; a pin at a commit URL never changes, but a
pin at a branch URL (or a re-tagged release) can: ``revisions --remote`` downloads each pinned URL
and compares its sha256 with the pin (recording the download in the cache), ``--cached`` compares
the newest download the cache recorded, without the network. Both exit 1 when bytes changed.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import click

from ..errors import CodegenError
from ..load import cached_latest, fetch, parse_schema, remember, sha256_hex
from ..pins import Pin, commit_of, is_commit, load_pins, write_pins
from ..vendor import CHANGELOG, SCHEMA, TS, read_examples_folder, render_manifest, write_revision
from ..write import existing_revisions, package_dir
from .common import (
    PINS_OPTION,
    default_out,
    download,
    fail,
    guarded,
    installed_generated,
    pins_path,
    read_input,
)
from .pin_extension import pin_extension

SPEC_RAW = "https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol"
# A revision names a folder under schema/: no separators, no leading dot.
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@click.command("revisions")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder of the generated packages (default: the checkout's or the installed ones).",
)
@click.option("--remote", is_flag=True, help="Download each pinned URL and compare its sha256.")
@click.option(
    "--cached", is_flag=True, help="Compare the newest download recorded in the user cache."
)
@PINS_OPTION
def revisions_command(out: Path | None, remote: bool, cached: bool, pins: Path | None) -> None:
    """List the pinned revisions and whether each generated package is up to date.

    With --remote or --cached, also whether the bytes at each pinned URL changed upstream
    (exit status 1 if any did).
    """
    if remote and cached:
        fail("give --remote or --cached, not both")
    folder = out or default_out() or installed_generated()
    generated = existing_revisions(folder)
    changed = False
    for pin in guarded(lambda: load_pins(pins_path(pins))).values():
        if pin.revision not in generated:
            state = "not generated"
        else:
            header = (folder / package_dir(pin.revision) / "methods.py").read_text(encoding="utf-8")
            state = (
                "up to date" if f"# Input sha256: {pin.sha256}" in header else "stale (other input)"
            )
        line = f"{pin.revision}  spec {pin.spec_commit[:12]}  sha256 {pin.sha256[:12]}  {state}"
        if remote or cached:
            upstream, moved = _upstream(pin, remote)
            changed = changed or moved
            line += f"  upstream: {upstream}"
        click.echo(line)
    for extra in sorted(set(generated) - set(load_pins(pins_path(pins)))):
        click.echo(f"{extra}  not pinned, but generated in {folder}: `mcpbind generate` removes it")
    if changed:
        click.echo("mcpbind: the bytes at a pinned URL changed; review and `mcpbind pin`", err=True)
        sys.exit(1)


def _upstream(pin: Pin, remote: bool) -> tuple[str, bool]:
    """What the pinned URL serves now (remote) or served last (cached), and whether it moved."""
    if remote:
        try:
            data = fetch(pin.url)
        except OSError as exc:
            return f"unreachable ({exc})", False
        remember(pin.revision, data, latest=True)
        digest: str | None = sha256_hex(data)
    else:
        digest = cached_latest(pin.revision)
        if digest is None:
            return "unknown (no download recorded in the cache; use --remote)", False
    if digest == pin.sha256:
        return "unchanged", False
    return f"CHANGED: now sha256 {digest}", True


@click.command("pin")
@click.argument("revision")
@click.option("--url", default=None, help="Where the schema.json of REVISION is published.")
@click.option(
    "--file",
    "file",
    type=click.Path(path_type=Path),
    default=None,
    help="Read the bytes from this file instead of downloading --url.",
)
@click.option(
    "--commit",
    default=None,
    help="Spec repository commit (default: read from a raw.githubusercontent.com commit URL).",
)
@click.option(
    "--extension",
    default=None,
    help="Pin version REVISION of this protocol extension's schema instead (for `mcpbind diff`).",
)
@click.option(
    "--identifier",
    default=None,
    help="With --extension: its capability key (default: the newest pinned version's).",
)
@click.option(
    "--base",
    default=None,
    help="With --extension: the revision it extends (default: the newest pinned version's).",
)
@PINS_OPTION
def pin_command(
    revision: str,
    url: str | None,
    file: Path | None,
    commit: str | None,
    extension: str | None,
    identifier: str | None,
    base: str | None,
    pins: Path | None,
) -> None:
    """Pin REVISION to the exact bytes at --url (or in --file): the files go into REVISION/ next
    to schema/pins.toml, their sha256, URL and spec commit into the pins, sorted, comments kept.
    schema.ts and the changelog page are pinned too when they can be found, and the examples/
    folder beside a --file. Then run `mcpbind generate REVISION`.

    With --extension NAME, REVISION is a version of that extension: its schema goes into
    extensions/NAME/REVISION/ and its pin into the same file, for `mcpbind diff REV+NAME@REVISION`.
    """
    target = pins_path(pins)
    if target is None:
        fail("pin edits schema/pins.toml of a source checkout; outside one, give --pins FILE")
    for what, value in (("revision", revision), ("extension", extension)):
        if value is not None and not _REVISION.match(value):
            fail(f"invalid {what} name {value!r}: use letters, digits, '.', '_' or '-'")
    if extension is not None:
        name = extension
        line = guarded(
            lambda: pin_extension(
                target, name, revision, url=url, file=file, commit=commit,
                identifier=identifier, base=base,
            )
        )  # fmt: skip
        click.echo(line)
        return
    if identifier is not None or base is not None:
        fail("--identifier and --base go with --extension")
    made = guarded(lambda: _make_pin(revision, url, file, commit))
    existing = guarded(lambda: load_pins(target) if target.is_file() else {})
    before = existing.get(revision)
    pin = made.pin
    if before is not None and before.spec_commit == pin.spec_commit:
        pin = replace(pin, last_change=before.last_change, last_change_date=before.last_change_date)
    if made.examples is None and before is not None:
        # examples cannot be listed over a URL: those already vendored stay, and stay pinned
        pin = replace(pin, examples_sha256=before.examples_sha256)
    folder = guarded(lambda: write_revision(target.parent, revision, made.files, made.examples))
    guarded(lambda: write_pins(target, {**existing, revision: pin}))
    verb = "pinned" if before is None else ("unchanged" if before == pin else "re-pinned")
    ts_note = f", schema.ts {pin.ts_sha256[:12]}" if pin.ts_sha256 else ", no schema.ts found"
    log_note = ", changelog" if pin.changelog_sha256 else ", no changelog found"
    examples_note = f", {len(made.examples)} examples" if made.examples else ""
    click.echo(
        f"{verb} {revision}: sha256 {pin.sha256[:12]}, spec commit {pin.spec_commit[:12]}"
        f"{ts_note}{log_note}{examples_note} in {target}, files in {folder}; "
        f"now run `mcpbind generate {revision}`"
    )


@dataclass(frozen=True)
class _Made:
    """A new pin and the files to vendor for it (by name; examples by relative path)."""

    pin: Pin
    files: dict[str, bytes]
    examples: dict[str, bytes] | None


def _make_pin(revision: str, url: str | None, file: Path | None, commit: str | None) -> _Made:
    if (url is None) == (file is None) and not (url and file):
        raise CodegenError("give --url URL or --file PATH")
    if file is not None:
        data = read_input(file)
    else:
        assert url is not None
        data = download(url)
    parse_schema(data, str(file or url))
    from_url = commit_of(url) if url else None
    spec_commit = (commit or (from_url[0] if from_url else "")).lower()
    if not is_commit(spec_commit):
        raise CodegenError(
            "the spec commit is unknown: give --commit SHA (40 hex digits), or a "
            "raw.githubusercontent.com URL at a commit"
        )
    path = from_url[1] if from_url else f"schema/{revision}/schema.json"
    url = url or f"{SPEC_RAW}/{spec_commit}/{path}"
    ts = _beside(file, url, TS, TS)
    changelog = _beside(file, _changelog_url(url, revision), CHANGELOG, None)
    examples_dir = file.with_name("examples") if file is not None else None
    examples = (
        read_examples_folder(examples_dir)
        if examples_dir is not None and examples_dir.is_dir()
        else None
    )
    pin = Pin(
        revision=revision,
        spec_commit=spec_commit,
        path=path,
        sha256=sha256_hex(data),
        url=url,
        ts_sha256=sha256_hex(ts) if ts is not None else None,
        changelog_sha256=sha256_hex(changelog) if changelog is not None else None,
        examples_sha256=sha256_hex(render_manifest(examples)) if examples else None,
    )
    files = {
        SCHEMA: data,
        **({TS: ts} if ts else {}),
        **({CHANGELOG: changelog} if changelog else {}),
    }
    return _Made(pin, files, examples or None)


def _changelog_url(url: str, revision: str) -> str:
    """The changelog page at the pinned commit of the specification repository; for any other
    URL, a ``changelog.md`` beside the schema."""
    at = commit_of(url)
    if at is None or not url.startswith(SPEC_RAW + "/"):
        return url.rsplit("/", 1)[0] + "/" + CHANGELOG
    return f"{SPEC_RAW}/{at[0]}/docs/specification/{revision}/changelog.mdx"


def _beside(file: Path | None, url: str, name: str, url_name: str | None) -> bytes | None:
    """``name`` beside the --file, else the bytes at ``url`` (its last part replaced by
    ``url_name`` when given); None when there is no such file."""
    if file is not None:
        sibling = file.with_name(name)
        return read_input(sibling) if sibling.is_file() else None
    where = url.rsplit("/", 1)[0] + "/" + url_name if url_name else url
    try:
        return fetch(where)
    except OSError:
        return None
