"""The support module is source copied verbatim; the names module is derived from the IR.

``codegen/emit/support.py`` is checked as source and copied byte for byte to
``generated/support.py`` (a hand edit of the copy is drift); ``generated/names.py`` holds every
method name and reserved ``_meta`` key of the generated revisions, whichever a run regenerates.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcpbind.codegen.emit.names_module import RevisionNames, name_views
from mcpbind.codegen.emit.render import support_source
from mcpbind.codegen.errors import CodegenError
from mcpbind.codegen.ir import RevisionIR
from mcpbind.codegen.ir.meta import is_reserved_meta_key
from test_cli import assert_one_line_error, run

STATELESS_KEYS = (
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/logLevel",
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/serverInfo",
    "io.modelcontextprotocol/subscriptionId",
)


@pytest.fixture
def copied(tmp_path: Path, repo_root: Path) -> Path:
    out = tmp_path / "generated"
    shutil.copytree(repo_root / "generated", out, ignore=shutil.ignore_patterns("__pycache__"))
    return out


def test_the_support_copy_is_the_source_byte_for_byte(repo_root: Path) -> None:
    source = (repo_root / "codegen" / "emit" / "support.py").read_bytes()
    assert support_source().encode("utf-8") == source
    assert (repo_root / "generated" / "support.py").read_bytes() == source
    assert not (repo_root / "generated" / "_support.py").exists()


def test_a_hand_edit_of_the_support_copy_is_drift(copied: Path) -> None:
    support = copied / "support.py"
    support.write_text(support.read_text().replace("class MCPModel", "class MCPModelX"))
    code, diff, err = run("generate", "2024-11-05", "--check", "--out", str(copied))
    assert code == 1 and "is not what the generator produces" in err
    assert "+++ b/support.py" in diff and "-class MCPModelX(BaseModel):" in diff


def test_line_endings_of_the_copy_count(copied: Path) -> None:
    support = copied / "support.py"
    support.write_bytes(support.read_bytes().replace(b"\n", b"\r\n"))
    code, diff, _ = run("generate", "2024-11-05", "--check", "--out", str(copied))
    assert code == 1 and "+++ b/support.py" in diff


def test_the_old_private_module_is_stale_and_generate_removes_it(copied: Path) -> None:
    (copied / "_support.py").write_text("x = 1\n")
    code, diff, _ = run("generate", "2024-11-05", "--check", "--out", str(copied))
    assert code == 1
    assert diff.strip() == "stale file not produced by the generator: _support.py"
    code, message, _ = run("generate", "2024-11-05", "--out", str(copied))
    assert code == 0 and "removed _support.py (not produced)" in message
    assert not (copied / "_support.py").exists()
    assert run("generate", "2024-11-05", "--check", "--out", str(copied))[0] == 0


def test_one_revision_regenerated_keeps_the_names_of_the_others(
    copied: Path, repo_root: Path
) -> None:
    (copied / "names.py").unlink()
    code, _, _ = run("generate", "2024-11-05", "--out", str(copied))
    assert code == 0
    assert (copied / "names.py").read_bytes() == (repo_root / "generated" / "names.py").read_bytes()


def test_names_grow_with_the_revisions_generated(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    assert run("generate", "2024-11-05", "--out", str(out))[0] == 0
    first = (out / "names.py").read_text()
    assert 'INITIALIZE: Final = "initialize"' in first and "SERVER_DISCOVER" not in first
    assert "#: every revision\nINITIALIZE" in first
    assert (
        "META_PROTOCOL_VERSION" not in first
        and "META_KEYS: Final[frozenset[str]] = frozenset()" in first
    )
    assert 'TASKS_UPDATE: Final = "tasks/update"' in first  # the tasks extension, always
    assert run("generate", "2026-07-28", "--out", str(out))[0] == 0
    both = (out / "names.py").read_text()
    assert 'SERVER_DISCOVER: Final = "server/discover"' in both
    assert "#: 2024-11-05\nINITIALIZE" in both and "#: 2026-07-28\nSERVER_DISCOVER" in both
    assert (
        '#: 2026-07-28\nMETA_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"'
        in both
    )


def test_a_method_table_from_an_older_generator_is_one_line_error(copied: Path) -> None:
    methods = copied / "v2024_11_05" / "methods.py"
    methods.write_text(
        "".join(line for line in methods.read_text().splitlines(True) if "META_KEYS" not in line)
    )
    code, _, err = run("generate", "2026-07-28", "--out", str(copied))
    assert code == 2
    assert_one_line_error(err, "regenerate revision 2024-11-05")


def test_the_ir_reads_meta_keys_from_properties_and_prose(irs: dict[str, RevisionIR]) -> None:
    assert irs["2026-07-28"].meta_keys == STATELESS_KEYS
    assert irs["2025-11-25"].meta_keys == ("io.modelcontextprotocol/related-task",)
    assert all(irs[r].meta_keys == () for r in ("2024-11-05", "2025-03-26", "2025-06-18"))


@pytest.mark.parametrize(
    ("key", "reserved"),
    [
        ("io.modelcontextprotocol/protocolVersion", True),
        ("dev.mcp/x", True),
        ("org.modelcontextprotocol.api/y", True),
        ("com.example.mcp/x", False),
        ("progressToken", False),
        ("io.modelcontextprotocol/", False),
    ],
)
def test_reserved_prefixes(key: str, reserved: bool) -> None:
    assert is_reserved_meta_key(key) is reserved


def test_where_each_name_exists() -> None:
    views = name_views(
        [
            RevisionNames("r1", ("a/b", "c"), ("notifications/n",), ()),
            RevisionNames("r2", ("a/b",), ("notifications/n",), ("io.mcp/k",)),
            RevisionNames("r3", ("a/b", "c"), (), ()),
        ]
    )
    where = {v.const: v.where for section in views.values() for v in section}
    assert where["A_B"] == "every revision"
    assert where["C"] == "r1, r3"
    assert where["NOTIFICATIONS_N"] == "r1 to r2"
    assert where["META_K"] == "r2"
    assert where["TASKS_UPDATE"] == "tasks extension"
    assert where["TASKS_GET"] == "tasks extension"


def test_two_methods_with_one_python_name_are_refused() -> None:
    with pytest.raises(CodegenError, match=re.escape("'a_b' and 'a/b' would both be names.A_B")):
        name_views([RevisionNames("r", ("a/b", "a_b"), (), ())])


def test_the_support_source_is_pyright_strict_clean(tmp_path: Path, repo_root: Path) -> None:
    # mypy --strict and ruff see it as part of mcpbind.codegen (tests/test_static_checks.py).
    shutil.copy(repo_root / "codegen" / "emit" / "support.py", tmp_path / "support.py")
    (tmp_path / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "strict", "pythonVersion": "3.11"})
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyright",
            "--pythonpath",
            sys.executable,
            "--outputjson",
            "support.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=dict(os.environ),
    )
    report = json.loads(done.stdout)
    assert report["summary"]["filesAnalyzed"] == 1
    assert report["generalDiagnostics"] == []
