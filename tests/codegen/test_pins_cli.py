"""``mcpbind pin``, ``revisions --remote/--cached`` and removing a pin, without the internet: a
local HTTP server stands in for raw.githubusercontent.com, a copy of generated/ for the checkout."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from codegen_cli import run
from mcpbind.codegen.load import load_changelog, load_examples, load_revision
from mcpbind.codegen.pins import commit_of, load_pins

COMMIT = "a" * 40


@pytest.fixture
def pins(tmp_path: Path, repo_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "pins.toml"
    shutil.copy(repo_root / "schema" / "pins.toml", copy)
    monkeypatch.setenv("MCPBIND_CACHE_DIR", str(tmp_path / "cache"))
    return copy


def test_commit_is_read_from_a_raw_github_commit_url() -> None:
    url = f"https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/{COMMIT}/schema/x/schema.json"
    assert commit_of(url) == (COMMIT, "schema/x/schema.json")
    assert commit_of("https://raw.githubusercontent.com/o/r/main/schema.json") is None


def test_pin_from_a_url_records_sha256_commit_and_schema_ts(
    served: tuple[str, Path], pins: Path, schema_dir: Path
) -> None:
    base, root = served
    folder = root / "spec" / "2099-01-01"
    folder.mkdir(parents=True)
    data = (schema_dir / "2026-07-28" / "schema.json").read_bytes()
    ts = (schema_dir / "2026-07-28" / "schema.ts").read_bytes()
    changelog = (schema_dir / "2026-07-28" / "changelog.md").read_bytes()
    (folder / "schema.json").write_bytes(data)
    (folder / "schema.ts").write_bytes(ts)
    (folder / "changelog.md").write_bytes(changelog)
    before = pins.read_text()
    url = f"{base}/spec/2099-01-01/schema.json"
    code, out, err = run("pin", "2099-01-01", "--url", url, "--commit", COMMIT, "--pins", str(pins))
    assert code == 0, err
    assert out.startswith("pinned 2099-01-01: sha256 ") and "mcpbind generate 2099-01-01" in out
    pin = load_pins(pins)["2099-01-01"]
    assert pin.sha256 == hashlib.sha256(data).hexdigest()
    assert pin.ts_sha256 == hashlib.sha256(ts).hexdigest()
    assert pin.changelog_sha256 == hashlib.sha256(changelog).hexdigest()
    assert pin.examples_sha256 is None  # examples cannot be listed over a URL
    assert (pin.spec_commit, pin.url) == (COMMIT, url)
    # the files are vendored next to the pins, and the loader reads them from there, offline
    vendored = pins.parent / "2099-01-01"
    assert sorted(p.name for p in vendored.iterdir()) == [
        "changelog.md",
        "schema.json",
        "schema.ts",
    ]
    assert (vendored / "schema.json").read_bytes() == data
    root.joinpath("spec", "2099-01-01", "schema.json").unlink()
    loaded = load_revision("2099-01-01", pins)
    assert loaded.source == str(vendored / "schema.json") and loaded.sha256 == pin.sha256
    assert load_changelog("2099-01-01", pins) == changelog.decode()
    root.joinpath("spec", "2099-01-01", "schema.json").write_bytes(data)
    after = pins.read_text()
    # comments, older pins and the extension pins untouched; the new revision sorted among the
    # revisions, before the extensions
    assert all(block in after for block in before.rstrip("\n").split("\n\n"))
    assert after.index('\n[revisions."2099-01-01"]') < after.index("\n[extensions.")
    assert list(load_pins(pins))[-1] == "2099-01-01"
    # pinning the same bytes again changes nothing
    assert run("pin", "2099-01-01", "--url", url, "--commit", COMMIT, "--pins", str(pins))[
        1
    ].startswith("unchanged")
    assert pins.read_text() == after


def test_pin_from_a_spec_checkout_reproduces_the_vendored_files(
    tmp_path: Path, schema_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-pinning 2026-07-28 from a copy of the spec repository's files (examples/ beside the
    schema) writes the same files and changes no pin: the vendored tree is reproducible."""
    spec = tmp_path / "spec" / "schema" / "2026-07-28"
    shutil.copytree(schema_dir / "2026-07-28", spec)
    (spec / "examples" / "SHA256SUMS").unlink()  # the spec repository has none; pin writes it
    target = tmp_path / "repo" / "schema"
    target.mkdir(parents=True)
    shutil.copy(schema_dir / "pins.toml", target / "pins.toml")
    monkeypatch.setenv("MCPBIND_OFFLINE", "1")
    commit = load_pins()["2026-07-28"].spec_commit
    code, out, err = run(
        "pin",
        "2026-07-28",
        "--file",
        str(spec / "schema.json"),
        "--commit",
        commit,
        "--pins",
        str(target / "pins.toml"),
    )
    assert code == 0, err
    assert out.startswith("unchanged 2026-07-28:") and ", 129 examples" in out
    assert (target / "pins.toml").read_bytes() == (schema_dir / "pins.toml").read_bytes()
    written = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    ours = sorted(
        p.relative_to(schema_dir).as_posix()
        for p in (schema_dir / "2026-07-28").rglob("*")
        if p.is_file()
    )
    assert written == sorted(["pins.toml", *ours])
    for name in ours:
        assert (target / name).read_bytes() == (schema_dir / name).read_bytes(), name
    assert len(load_examples("2026-07-28", target / "pins.toml")) == 129


def test_pin_refuses_a_revision_name_that_is_not_a_folder_name(pins: Path) -> None:
    code, _, err = run("pin", "../x", "--file", "y.json", "--commit", COMMIT, "--pins", str(pins))
    assert code == 2 and "invalid revision name '../x'" in err
    assert not (pins.parent.parent / "x").exists()


def test_pin_needs_a_commit_and_an_mcp_schema(
    served: tuple[str, Path], pins: Path, tmp_path: Path
) -> None:
    base, root = served
    (root / "s.json").write_text('{"$defs": {"A": {}}}')
    code, _, err = run("pin", "x", "--url", f"{base}/s.json", "--pins", str(pins))
    assert code == 2 and "give --commit SHA" in err
    (root / "bad.json").write_text("[]")
    code, _, err = run("pin", "x", "--file", str(root / "bad.json"), "--commit", COMMIT)
    assert code == 2 and "a schema must be a JSON object" in err
    code, _, err = run("pin", "x", "--pins", str(pins))
    assert code == 2 and "give --url URL or --file PATH" in err


def test_revisions_remote_and_cached_say_when_upstream_bytes_changed(
    served: tuple[str, Path], pins: Path, schema_dir: Path, repo_root: Path
) -> None:
    base, root = served
    source = schema_dir / "2025-11-25" / "schema.json"
    (root / "schema.json").write_bytes(source.read_bytes())
    url = f"{base}/schema.json"
    assert (
        run(
            "pin",
            "2025-11-25",
            "--file",
            str(source),
            "--url",
            url,
            "--commit",
            COMMIT,
            "--pins",
            str(pins),
        )[0]
        == 0
    )
    out_dir = str(repo_root / "generated")
    code, out, _ = run("revisions", "--remote", "--pins", str(pins), "--out", out_dir)
    line = next(x for x in out.splitlines() if x.startswith("2025-11-25"))
    assert code == 0 and line.endswith("upstream: unchanged")
    # upstream edits the released file
    (root / "schema.json").write_bytes(source.read_bytes().replace(b"Used by", b"Used  by"))
    code, out, err = run("revisions", "--remote", "--pins", str(pins), "--out", out_dir)
    line = next(x for x in out.splitlines() if x.startswith("2025-11-25"))
    assert code == 1 and "upstream: CHANGED: now sha256 " in line
    assert "the bytes at a pinned URL changed" in err
    # the cache remembers: --cached says the same without the network
    (root / "schema.json").unlink()
    code, out, _ = run("revisions", "--cached", "--pins", str(pins), "--out", out_dir)
    line = next(x for x in out.splitlines() if x.startswith("2025-11-25"))
    assert code == 1 and "upstream: CHANGED" in line
    other = next(x for x in out.splitlines() if x.startswith("2024-11-05"))
    assert "no download recorded in the cache" in other


def test_removing_a_pin_removes_its_package_and_index_entry(
    tmp_path: Path, repo_root: Path, pins: Path
) -> None:
    out = tmp_path / "generated"
    shutil.copytree(repo_root / "generated", out, ignore=shutil.ignore_patterns("__pycache__"))
    text = pins.read_text()
    start = text.index('[revisions."2024-11-05"]')
    pins.write_text(text[:start] + text[text.index('[revisions."2025-03-26"]') :])
    code, report, _ = run("generate", "--check", "--pins", str(pins), "--out", str(out))
    assert code == 1
    assert (
        "extra package not produced by the generator: v2024_11_05 (2024-11-05 is not pinned)"
        in (report)
    )
    assert "a/__init__.py" in report  # the index still lists it
    code, msg, _ = run("generate", "2025-11-25", "--pins", str(pins), "--out", str(out))
    assert code == 0 and "removed 2024-11-05 (no longer pinned)" in msg
    assert not (out / "v2024_11_05").exists()
    index = (out / "__init__.py").read_text()
    assert "2024-11-05" not in index and "2025-03-26" in index
    assert run("generate", "--check", "--pins", str(pins), "--out", str(out))[0] == 0
    # a pinned revision whose package is missing is drift too
    shutil.rmtree(out / "v2025_03_26")
    code, report, _ = run("generate", "--check", "--pins", str(pins), "--out", str(out))
    assert code == 1
    assert "missing package: v2025_03_26 (pinned revision 2025-03-26 is not generated)" in report
