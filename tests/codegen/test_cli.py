"""The ``mcpbind`` CLI: drift check on the committed tree, and one clear line for bad input."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from codegen_cli import run
from mcpbind.codegen.pins import load_pins


def assert_one_line_error(stderr: str, fragment: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("mcpbind: error: ") and fragment in lines[0]
    assert "Traceback" not in stderr


def test_committed_generated_tree_has_no_drift(repo_root: Path) -> None:
    code, out, _ = run("generate", "--check", "--out", str(repo_root / "generated"))
    assert code == 0, out
    assert "up to date" in out


def test_check_reports_a_hand_edit_and_a_stale_file(tmp_path: Path, repo_root: Path) -> None:
    out = tmp_path / "generated"
    shutil.copytree(repo_root / "generated", out, ignore=shutil.ignore_patterns("__pycache__"))
    target = out / "v2024_11_05" / "methods.py"
    target.write_text(target.read_text().replace('handler_name="call_tool"', 'handler_name="call"'))
    (out / "v2024_11_05" / "extra.py").write_text("x = 1\n")
    (out / "v2024_11_05" / "extra.pyi").write_text("x: int\n")
    stub = out / "v2024_11_05" / "types.pyi"
    stub.write_text(stub.read_text().replace("class Result(MCPModel):", "class Result2(MCPModel):"))
    code, diff, err = run("generate", "2024-11-05", "--check", "--out", str(out))
    assert code == 1
    assert '-    handler_name="call",' in diff and '+    handler_name="call_tool",' in diff
    assert "stale file not produced by the generator: v2024_11_05/extra.py" in diff
    assert "stale file not produced by the generator: v2024_11_05/extra.pyi" in diff
    assert "-class Result2(MCPModel):" in diff and "+class Result(MCPModel):" in diff
    assert "is not what the generator produces" in err


def test_generate_writes_then_check_passes(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    code, msg, _ = run("generate", "2024-11-05", "--out", str(out))
    assert code == 0 and "file(s) written" in msg
    assert (out / "v2024_11_05" / "types.py").is_file() and (out / "support.py").is_file()
    assert run("generate", "2024-11-05", "--check", "--out", str(out))[0] == 0
    assert "0 file(s) written" in run("generate", "2024-11-05", "--out", str(out))[1]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["generate", "2099-01-01"], "unknown revision '2099-01-01'"),
        (["generate", "--schema", "/nonexistent/schema.json"], "cannot read schema"),
        (["generate", "--revision", "x"], "give --schema too"),
        (["generate", "2025-11-25", "--schema", "x.json"], "not both"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], fragment: str) -> None:
    code, _, err = run(*args)
    assert code == 2
    assert_one_line_error(err, fragment)


def test_invalid_schema_file(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"$defs": ')
    code, _, err = run("generate", "--schema", str(path), "--revision", "x", "--out", str(tmp_path))
    assert code == 2
    assert_one_line_error(err, "not valid JSON")


def test_hash_mismatch_names_both_hashes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "2025-03-26").mkdir()
    (tmp_path / "2025-03-26" / "schema.json").write_text('{"$defs": {"A": {}}}')
    monkeypatch.setenv("MCPBIND_SCHEMA_DIR", str(tmp_path))
    code, _, err = run("generate", "2025-03-26", "--out", str(tmp_path / "out"))
    assert code == 2
    assert_one_line_error(
        err, "expected e720669548c8100a4282c49e580efd6ddf7f28899ea786fc8db251dbdb356131"
    )


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["generate", "--check"], "schema.json"),
        (["diff", "2025-06-18", "2026-07-28"], "schema.ts"),
    ],
)
def test_a_flipped_byte_in_a_vendored_file_is_one_line_and_exit_2(
    tmp_path: Path,
    schema_dir: Path,
    repo_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
    name: str,
) -> None:
    """``$MCPBIND_PINS`` in a copy of schema/: its files are read first, and checked each time."""
    folder = tmp_path / "schema"
    shutil.copytree(schema_dir, folder, ignore=shutil.ignore_patterns("__pycache__"))
    bad = folder / "2026-07-28" / name
    data = bytearray(bad.read_bytes())
    data[200] ^= 0x20
    bad.write_bytes(bytes(data))
    got = hashlib.sha256(data).hexdigest()
    pin = load_pins(folder / "pins.toml")["2026-07-28"]
    expected = pin.sha256 if name == "schema.json" else pin.ts_sha256
    extra = ["--out", str(repo_root / "generated")] if command[0] == "generate" else []
    monkeypatch.setenv("MCPBIND_PINS", str(folder / "pins.toml"))
    code, _, err = run(*command, *extra)
    assert code == 2
    assert_one_line_error(err, f"{bad}: sha256 mismatch: expected {expected}, got {got}")


def test_unwritable_output(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = run("generate", "2024-11-05", "--out", str(blocker))
    assert code == 2
    assert_one_line_error(err, "cannot write")


def test_revisions_lists_pins_and_state(repo_root: Path, tmp_path: Path) -> None:
    code, out, _ = run("revisions", "--out", str(repo_root / "generated"))
    lines = out.strip().splitlines()
    assert code == 0 and len(lines) == 5
    assert all(line.endswith("up to date") for line in lines)
    assert all(
        line.endswith("not generated")
        for line in run("revisions", "--out", str(tmp_path))[1].splitlines()
    )
