"""``mcpbind pin VERSION --extension NAME``: an extension's schema pinned and vendored the way
``mcpbind diff`` reads it, without the internet (a local HTTP server stands in for GitHub), and
each bad input one line and exit status 2 with nothing written."""

from __future__ import annotations

import hashlib
import json
import shutil
import tomllib
from pathlib import Path

import pytest
from codegen_cli import run
from mcpbind.codegen.pins import load_extension_pins, load_pins

COMMIT = "b" * 40
URL = "https://x.invalid/s.json"
TASKS = Path("extensions") / "tasks" / "2026-08-21" / "schema.json"


@pytest.fixture
def pins(tmp_path: Path, repo_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "schema"
    folder.mkdir()
    shutil.copy(repo_root / "schema" / "pins.toml", folder / "pins.toml")
    monkeypatch.setenv("MCPBIND_CACHE_DIR", str(tmp_path / "cache"))
    return folder / "pins.toml"


def newer_tasks(schema_dir: Path) -> bytes:
    """The newest pinned tasks schema with one definition more: a new version to pin."""
    document = json.loads((schema_dir / TASKS).read_bytes())
    key = "$defs" if "$defs" in document else "definitions"
    document[key]["TaskProbe"] = {"type": "object", "properties": {"probe": {"type": "string"}}}
    return json.dumps(document, indent=2).encode()


def test_a_new_version_from_a_commit_url_is_pinned_and_diffed(
    served: tuple[str, Path], pins: Path, schema_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, root = served
    data = newer_tasks(schema_dir)
    path = root / "modelcontextprotocol" / "ext-tasks" / COMMIT / "schema" / "draft"
    path.mkdir(parents=True)
    (path / "schema.json").write_bytes(data)
    revisions = load_pins(pins)
    url = f"{base}/modelcontextprotocol/ext-tasks/{COMMIT}/schema/draft/schema.json"
    code, out, err = run("pin", "2099-01-01", "--extension", "tasks", "--url", url,
                         "--commit", COMMIT, "--pins", str(pins))  # fmt: skip
    assert code == 0, err
    assert out.startswith("pinned extension tasks@2099-01-01: sha256 "), out
    assert "mcpbind diff 2026-07-28+tasks@2026-08-21 2026-07-28+tasks@2099-01-01" in out, out
    pin = load_extension_pins(pins)["tasks"]["2099-01-01"]
    # The identifier and base of the newest pinned version, the bytes beside the pins.
    assert (pin.identifier, pin.base) == ("io.modelcontextprotocol/tasks", "2026-07-28")
    assert pin.sha256 == hashlib.sha256(data).hexdigest() and pin.spec_commit == COMMIT
    assert (pin.url, pin.path) == (url, "schema/extensions/tasks/2099-01-01/schema.json")
    assert (
        pins.parent / "extensions" / "tasks" / "2099-01-01" / "schema.json"
    ).read_bytes() == data
    assert load_pins(pins) == revisions
    assert sorted(load_extension_pins(pins)["tasks"]) == ["2026-05-22", "2026-08-21", "2099-01-01"]
    # The pins file is still valid TOML with its comments, and `diff` reads the new version.
    assert pins.read_text().startswith("# Pinned MCP schema revisions.")
    tomllib.loads(pins.read_text())
    monkeypatch.setenv("MCPBIND_PINS", str(pins))
    code, out, err = run("diff", "2026-07-28+tasks@2026-08-21", "2026-07-28+tasks@2099-01-01",
                         "--format", "json")  # fmt: skip
    assert code == 0, err
    assert "TaskProbe" in out
    # Pinning the same bytes again changes nothing.
    code, out, err = run("pin", "2099-01-01", "--extension", "tasks", "--url", url,
                         "--commit", COMMIT, "--pins", str(pins))  # fmt: skip
    assert code == 0 and out.startswith("unchanged extension tasks@2099-01-01"), out + err


def test_a_package_release_is_pinned_from_a_file_with_its_source(
    pins: Path, schema_dir: Path, tmp_path: Path
) -> None:
    source = tmp_path / "schema-from-npm.json"
    source.write_bytes((schema_dir / "extensions" / "apps" / "2.0.4" / "schema.json").read_bytes())
    url = "npm:@modelcontextprotocol/ext-apps@2.1.0/dist/src/generated/schema.json"
    code, _, err = run("pin", "2.1.0", "--extension", "apps", "--url", url, "--file",
                         str(source), "--pins", str(pins))  # fmt: skip
    assert code == 0, err
    pin = load_extension_pins(pins)["apps"]["2.1.0"]
    assert (pin.url, pin.spec_commit, pin.base) == (url, None, "2025-11-25")
    assert "spec_commit" not in tomllib.loads(pins.read_text())["extensions"]["apps"]["2.1.0"]


def test_a_new_extension_names_its_identifier_and_base(
    pins: Path, tmp_path: Path, schema_dir: Path
) -> None:
    source = tmp_path / "schema.json"
    source.write_bytes(newer_tasks(schema_dir))
    args = ["pin", "1.0.0", "--extension", "probe", "--url", "https://example.invalid/s.json",
            "--file", str(source), "--pins", str(pins)]  # fmt: skip
    before = pins.read_bytes()
    code, _, err = run(*args)
    assert code == 2 and err.count("\n") == 1, err
    assert "probe is a new extension: give --identifier" in err
    assert pins.read_bytes() == before and not (pins.parent / "extensions").exists()
    code, out, err = run(*args, "--identifier", "example.com/probe", "--base", "2025-11-25")
    assert code == 0, err
    assert (
        out.startswith("pinned extension probe@1.0.0")
        and "mcpbind diff 2025-11-25 2025-11-25+probe@1.0.0" in out
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--url", "npm:@x/y@1/s.json"], "npm:@x/y@1/s.json cannot be downloaded: give its bytes with --file"),
        (["--file", "{schema}"], "give --url (with --file, the URL is recorded"),
        (["--url", URL, "--file", "{not_schema}"], "no '$defs' or 'definitions' object"),
        (["--url", URL, "--file", "{schema}", "--base", "1999-01-01"], "unknown revision '1999-01-01'"),
        (["--url", URL, "--file", "{schema}", "--commit", "abc"], "--commit 'abc': a commit is 40 hex digits"),
        (["--url", URL, "--file", "{missing}"], "cannot read"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_writes_nothing(
    args: list[str], message: str, pins: Path, tmp_path: Path, schema_dir: Path
) -> None:
    (tmp_path / "ok.json").write_bytes(newer_tasks(schema_dir))
    (tmp_path / "bad.json").write_text('{"type": "object"}')
    files = {"schema": tmp_path / "ok.json", "not_schema": tmp_path / "bad.json",
             "missing": tmp_path / "nothing-here.json"}  # fmt: skip
    before = pins.read_bytes()
    code, out, err = run("pin", "2099-02-02", "--extension", "tasks",
                         *[a.format(**files) for a in args], "--pins", str(pins))  # fmt: skip
    assert code == 2 and out == "", out
    assert err.startswith("mcpbind: error: ") and err.count("\n") == 1, err
    assert message in err, err
    assert pins.read_bytes() == before
    assert not (pins.parent / "extensions").exists()


def test_extension_options_need_the_extension_and_a_clean_name(pins: Path) -> None:
    code, _, err = run("pin", "2099-01-01", "--base", "2025-11-25", "--url", "https://x.invalid/s.json",
                       "--pins", str(pins))  # fmt: skip
    assert code == 2 and "--identifier and --base go with --extension" in err, err
    code, _, err = run("pin", "1.0", "--extension", "../up", "--url", "https://x.invalid/s.json",
                       "--pins", str(pins))  # fmt: skip
    assert code == 2 and "invalid extension name '../up'" in err, err
