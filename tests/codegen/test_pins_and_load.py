"""Stage 1: pins and the loader's resolution order, hash checks and error messages."""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path

import pytest
from mcpbind.codegen import load
from mcpbind.codegen.errors import CodegenError
from mcpbind.codegen.load import LoadedSchema, load_file, load_revision, resolve_pinned_bytes
from mcpbind.codegen.pins import Pin, get_pin, load_pins

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
        data = (schema_dir / pin.revision / "schema.json").read_bytes()
        assert hashlib.sha256(data).hexdigest() == pin.sha256


def test_unknown_revision_names_the_known_ones() -> None:
    with pytest.raises(CodegenError, match=r"unknown revision '1999-01-01'.*2025-11-25"):
        get_pin("1999-01-01")


def test_env_dir_bytes_with_another_hash_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "2025-11-25").mkdir()
    (tmp_path / "2025-11-25" / "schema.json").write_text('{"$defs": {"A": {}}}')
    monkeypatch.setenv("MCPBIND_SCHEMA_DIR", str(tmp_path))
    monkeypatch.setenv("MCPBIND_CACHE_DIR", str(tmp_path / "cache"))
    pin = get_pin("2025-11-25")
    actual = hashlib.sha256(b'{"$defs": {"A": {}}}').hexdigest()
    with pytest.raises(CodegenError) as excinfo:
        load_revision("2025-11-25")
    assert pin.sha256 in str(excinfo.value) and actual in str(excinfo.value)


def test_download_is_verified_then_cached(
    served: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, schema_dir: Path
) -> None:
    base, root = served
    data = (schema_dir / "2025-06-18" / "schema.json").read_bytes()
    (root / "s.json").write_bytes(data)
    cache = tmp_path / "cache"
    monkeypatch.delenv("MCPBIND_SCHEMA_DIR")
    monkeypatch.setenv("MCPBIND_CACHE_DIR", str(cache))
    pin = Pin(
        "2025-06-18",
        "c" * 40,
        "s.json",
        hashlib.sha256(data).hexdigest(),
        f"{base}/s.json",
        "c" * 40,
    )

    got, source = resolve_pinned_bytes(pin)
    assert got == data and source == pin.url
    cached = cache / "2025-06-18" / f"{pin.sha256}.json"
    assert cached.read_bytes() == data

    (root / "s.json").unlink()  # the second load must come from the cache, not the network
    assert resolve_pinned_bytes(pin) == (data, str(cached))


def test_download_with_wrong_hash_is_refused_and_not_cached(
    served: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, root = served
    (root / "s.json").write_bytes(b'{"$defs": {}}')
    monkeypatch.delenv("MCPBIND_SCHEMA_DIR")
    monkeypatch.setenv("MCPBIND_CACHE_DIR", str(tmp_path / "cache"))
    pin = Pin("x", "c" * 40, "s.json", "0" * 64, f"{base}/s.json", "c" * 40)
    with pytest.raises(CodegenError, match=r"sha256 mismatch.*expected 0{64}, got"):
        resolve_pinned_bytes(pin)
    # nothing is cached under the pinned hash; the other bytes are recorded as the URL's latest,
    # which `mcpbind revisions --cached` reports as an upstream change
    assert not (tmp_path / "cache" / "x" / f"{'0' * 64}.json").exists()
    latest = (tmp_path / "cache" / "x" / "latest").read_text().strip()
    assert latest != "0" * 64 and (tmp_path / "cache" / "x" / f"{latest}.json").is_file()


def test_unreachable_download_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("MCPBIND_SCHEMA_DIR")
    monkeypatch.setenv("MCPBIND_CACHE_DIR", str(tmp_path))
    pin = Pin("x", "c" * 40, "s.json", "0" * 64, "http://127.0.0.1:9/none.json", "c" * 40)
    with pytest.raises(CodegenError, match=r"downloading failed") as excinfo:
        resolve_pinned_bytes(pin)
    message = str(excinfo.value)
    for fragment in ("$MCPBIND_SCHEMA_DIR", "<dir>/<revision>/schema.json", str(tmp_path), pin.url):
        assert fragment in message


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


def test_pinned_revision_loads_from_env_dir(schema_dir: Path) -> None:
    loaded = load_revision("2024-11-05")
    assert loaded.source == str(schema_dir / "2024-11-05" / "schema.json")
    assert loaded.pin is not None and loaded.sha256 == loaded.pin.sha256
    assert "definitions" in loaded.document and json.dumps(loaded.document)


def test_a_silent_server_fails_within_the_download_bound(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A host that accepts and never answers (a black-holed network) is an error, not a hang."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        monkeypatch.setattr(load, "DOWNLOAD_TIMEOUT_S", 0.2)
        monkeypatch.delenv("MCPBIND_SCHEMA_DIR")
        monkeypatch.setenv("MCPBIND_CACHE_DIR", str(tmp_path))
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/schema.json"
        pin = Pin("x", "c" * 40, "s.json", "0" * 64, url, "c" * 40)
        with pytest.raises(CodegenError, match=r"downloading failed .*(timed out|no answer)"):
            resolve_pinned_bytes(pin)
    finally:
        listener.close()
