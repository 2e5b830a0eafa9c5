"""Stage 1: pins, the vendored files and the loader's resolution order, hash checks and errors."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shutil
import socket
import urllib.request
from pathlib import Path

import pytest
from mcpbind.codegen import load
from mcpbind.codegen.errors import CodegenError
from mcpbind.codegen.load import (
    LoadedSchema,
    load_changelog,
    load_examples,
    load_file,
    load_revision,
    load_schema_ts,
)
from mcpbind.codegen.pins import get_pin, load_pins, package_schema_dir

REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]


def test_every_revision_is_pinned_to_a_commit_url_and_hash() -> None:
    pins = load_pins()
    assert list(pins) == REVISIONS
    for pin in pins.values():
        assert len(pin.spec_commit) == 40
        assert len(pin.sha256) == 64
        assert pin.url.endswith(f"/{pin.spec_commit}/{pin.path}")


def test_pins_match_the_bytes_in_the_schema_dir(schema_dir: Path) -> None:
    for pin in load_pins().values():
        for name, digest in (
            ("schema.json", pin.sha256),
            ("schema.ts", pin.ts_sha256),
            ("changelog.md", pin.changelog_sha256),
            ("examples/SHA256SUMS", pin.examples_sha256),
        ):
            path = schema_dir / pin.revision / name
            if digest is None:  # only 2024-11-05 lacks a changelog, only 2026-07-28 has examples
                assert not path.exists()
                continue
            assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, path
    pins = load_pins()
    assert [r for r, p in pins.items() if p.changelog_sha256 is None] == ["2024-11-05"]
    assert [r for r, p in pins.items() if p.examples_sha256] == ["2026-07-28"]


def test_unknown_revision_names_the_known_ones() -> None:
    with pytest.raises(CodegenError, match=r"unknown revision '1999-01-01'.*2025-11-25"):
        get_pin("1999-01-01")


def test_env_dir_bytes_with_another_hash_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "2025-11-25").mkdir()
    (tmp_path / "2025-11-25" / "schema.json").write_text('{"$defs": {"A": {}}}')
    monkeypatch.setenv("MCPBIND_SCHEMA_DIR", str(tmp_path))
    pin = get_pin("2025-11-25")
    actual = hashlib.sha256(b'{"$defs": {"A": {}}}').hexdigest()
    with pytest.raises(CodegenError) as excinfo:
        load_revision("2025-11-25")
    assert pin.sha256 in str(excinfo.value) and actual in str(excinfo.value)


@pytest.fixture
def vendored(tmp_path: Path, schema_dir: Path) -> Path:
    """A copy of the pins and of two revisions' vendored files: ``--pins`` of a checkout copy."""
    folder = tmp_path / "schema"
    folder.mkdir()
    shutil.copy(schema_dir / "pins.toml", folder / "pins.toml")
    for revision in ("2025-06-18", "2026-07-28"):
        shutil.copytree(schema_dir / revision, folder / revision)
    return folder / "pins.toml"


def flip_byte(path: Path, offset: int = 100) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_every_read_checks_the_bytes_not_only_the_first(vendored: Path) -> None:
    schema = vendored.parent / "2025-06-18" / "schema.json"
    loaded = load_revision("2025-06-18", vendored)
    assert loaded.source == str(schema) and loaded.sha256 == get_pin("2025-06-18").sha256
    flip_byte(schema)
    got = hashlib.sha256(schema.read_bytes()).hexdigest()
    with pytest.raises(CodegenError) as excinfo:
        load_revision("2025-06-18", vendored)
    message = str(excinfo.value)
    assert message == f"{schema}: sha256 mismatch: expected {loaded.sha256}, got {got}"


def test_a_bad_vendored_file_is_not_skipped_for_the_package_copy(vendored: Path) -> None:
    """The package's own copy is good; the pins' folder is looked at first and its bad bytes
    are an error, not a reason to use another copy."""
    flip_byte(vendored.parent / "2026-07-28" / "schema.json")
    with pytest.raises(CodegenError, match="sha256 mismatch"):
        load_revision("2026-07-28", vendored)
    # a revision the copied folder lacks comes from the package's folder
    assert load_revision("2024-11-05", vendored).source == str(
        package_schema_dir() / "2024-11-05" / "schema.json"
    )


def test_a_pinned_revision_without_files_says_how_to_get_them(
    vendored: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = vendored.read_text().replace('[revisions."2026-07-28"]', '[revisions."2099-01-01"]')
    vendored.write_text(text)
    monkeypatch.setattr(load, "fetch", refuse_download)
    with pytest.raises(CodegenError) as excinfo:
        load_revision("2099-01-01", vendored)
    message = str(excinfo.value)
    assert "\n" not in message
    for fragment in (
        "revision 2099-01-01 is pinned but its schema.json is not vendored",
        str(vendored.parent / "2099-01-01" / "schema.json"),
        "`mcpbind pin 2099-01-01 --url https://raw.githubusercontent.com/",
        "$MCPBIND_SCHEMA_DIR",
    ):
        assert fragment in message


def refuse_download(url: str) -> bytes:
    raise AssertionError(f"a load downloaded {url}")


def test_loading_never_downloads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(load, "fetch", refuse_download)
    monkeypatch.setattr(urllib.request, "urlopen", refuse_download)
    for revision in REVISIONS:
        loaded = load_revision(revision)
        assert load_schema_ts(loaded)[0] is not None
        assert (load_changelog(revision) is None) is (revision == "2024-11-05")
    assert len(load_examples("2026-07-28")) == 129


def test_schema_ts_with_other_bytes_is_an_error_and_a_missing_one_a_note(vendored: Path) -> None:
    ts = vendored.parent / "2025-06-18" / "schema.ts"
    loaded = load_revision("2025-06-18", vendored)
    text, where = load_schema_ts(loaded)
    assert text is not None and "export interface" in text and where == str(ts)
    flip_byte(ts)
    with pytest.raises(CodegenError, match=re.escape(f"{ts}: sha256 mismatch: expected ")):
        load_schema_ts(loaded)
    ts.unlink()
    # the package's folder has a good schema.ts; without one anywhere, deprecations are a note
    assert load_schema_ts(loaded)[1] == str(package_schema_dir() / "2025-06-18" / "schema.ts")
    bare = dataclasses.replace(loaded, folders=(vendored.parent,))
    assert load_schema_ts(bare) == (None, "no 2025-06-18/schema.ts vendored")


def test_changelog_is_pinned_and_checked(vendored: Path) -> None:
    text = load_changelog("2025-06-18", vendored)
    assert text is not None and "Major changes" in text
    assert load_changelog("2024-11-05", vendored) is None  # the first revision has none
    changelog = vendored.parent / "2025-06-18" / "changelog.md"
    flip_byte(changelog, 10)
    pin = get_pin("2025-06-18")
    with pytest.raises(
        CodegenError,
        match=re.escape(f"{changelog}: sha256 mismatch: expected {pin.changelog_sha256}"),
    ):
        load_changelog("2025-06-18", vendored)


def test_examples_are_checked_one_by_one_and_as_a_set(vendored: Path) -> None:
    folder = vendored.parent / "2026-07-28" / "examples"
    examples = load_examples("2026-07-28", vendored)
    assert len(examples) == 129
    assert json.loads(examples["AudioContent/audio-wav-content.json"])["type"] == "audio"
    assert load_examples("2025-06-18", vendored) == {}  # no examples before 2026-07-28

    extra = folder / "AudioContent" / "extra.json"
    extra.write_text("{}")
    with pytest.raises(
        CodegenError, match=re.escape(f"{extra}: not listed in {folder / 'SHA256SUMS'}")
    ):
        load_examples("2026-07-28", vendored)
    extra.unlink()
    example = folder / "CallToolRequest" / "call-tool-request.json"
    flip_byte(example, 5)
    with pytest.raises(
        CodegenError, match=re.escape(f"{example}: sha256 mismatch: expected ") + "[0-9a-f]{64}"
    ):
        load_examples("2026-07-28", vendored)
    example.unlink()
    with pytest.raises(CodegenError, match=r"cannot read schema .*call-tool-request\.json"):
        load_examples("2026-07-28", vendored)
    flip_byte(folder / "SHA256SUMS")  # the manifest itself is pinned
    with pytest.raises(CodegenError, match=r"SHA256SUMS: sha256 mismatch"):
        load_examples("2026-07-28", vendored)


def test_explicit_file_is_used_as_given_with_its_own_hash(tmp_path: Path, schema_dir: Path) -> None:
    data = (schema_dir / "2025-11-25" / "schema.json").read_bytes().replace(b"Used by", b"Used  by")
    path = tmp_path / "edited.json"
    path.write_bytes(data)
    loaded = load_file(path, "2025-11-25")
    assert isinstance(loaded, LoadedSchema)
    assert loaded.sha256 == hashlib.sha256(data).hexdigest() != get_pin("2025-11-25").sha256
    assert loaded.pin is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"type": "object"}', "not an MCP schema"),
        (b"\xff\xfe", "not valid JSON"),
    ],
)
def test_invalid_schema_files_are_clear_errors(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(CodegenError, match=message):
        load_file(path, "x")


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CodegenError, match=r"cannot read schema .*missing\.json"):
        load_file(tmp_path / "missing.json", "x")


def test_pinned_revision_loads_from_the_vendored_files() -> None:
    loaded = load_revision("2024-11-05")
    assert loaded.source == str(package_schema_dir() / "2024-11-05" / "schema.json")
    assert loaded.pin is not None and loaded.sha256 == loaded.pin.sha256
    assert "definitions" in loaded.document and json.dumps(loaded.document)


def test_schema_dir_overrides_the_vendored_files(
    tmp_path: Path, schema_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(schema_dir / "2025-11-25", tmp_path / "2025-11-25")
    monkeypatch.setenv("MCPBIND_SCHEMA_DIR", str(tmp_path))
    loaded = load_revision("2025-11-25")
    assert loaded.source == str(tmp_path / "2025-11-25" / "schema.json")
    assert load_schema_ts(loaded)[1] == str(tmp_path / "2025-11-25" / "schema.ts")
    # a revision the override folder lacks still comes from the vendored files
    assert load_revision("2024-11-05").source.startswith(str(package_schema_dir()))


def test_a_silent_server_fails_within_the_download_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host that accepts and never answers (a black-holed network) is an error, not a hang."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        monkeypatch.setattr(load, "DOWNLOAD_TIMEOUT_S", 0.2)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/schema.json"
        with pytest.raises(OSError, match=r"timed out|no answer"):
            load.fetch(url)
    finally:
        listener.close()
