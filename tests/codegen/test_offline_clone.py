"""A copy of the repository regenerates with no network and no schema folder of its own; a bad
byte in a vendored schema stops it in one line; the wheel carries the schemas, and ``mcpbind diff``
runs from it outside any checkout.

The copy holds the files git tracks, as they are in the working tree: a vendored file someone
forgot to ``git add`` is missing there. Its code runs through a folder of symlinks that gives it
the installed layout (``mcpbind/codegen`` -> ``codegen``...), so the child imports the copy, not
this checkout's install. In each child a ``sitecustomize`` refuses every internet connection,
name lookup and ``urlopen`` and records the attempt; the proxies point at a closed local port.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from mcpbind.codegen.pins import load_pins

ROOTS = ("codegen", "generated", "runtime", "schema")

GUARD = """
import os, socket, urllib.request

_LOG = os.environ["MCPBIND_TEST_NET_LOG"]


def _record(what):
    with open(_LOG, "a", encoding="utf-8") as log:
        log.write(what + "\\n")


def refuse(kind):
    def refused(*args, **kwargs):
        _record(f"{kind} {args[:1]!r}")
        raise OSError(f"the network is blocked in this test ({kind})")
    return refused


_connect = socket.socket.connect


def _guarded_connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        refuse("connect")(address)
    return _connect(self, address)


socket.socket.connect = _guarded_connect
socket.getaddrinfo = refuse("getaddrinfo")
socket.create_connection = refuse("create_connection")
urllib.request.urlopen = refuse("urlopen")
"""

# Runs the CLI after checking where mcpbind comes from, with the loader's download function
# replaced by one that records a call.
DRIVER = """
import os, sys, sitecustomize
import mcpbind.codegen.load as load
where = os.path.realpath(load.__file__)
assert where.startswith(os.path.realpath(os.environ["MCPBIND_TEST_ROOT"]) + os.sep), where
load.fetch = sitecustomize.refuse("fetch")
from mcpbind.codegen.cli import main
main()
"""


def closed_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port: int = probe.getsockname()[1]
    probe.close()
    return port


def offline_env(tmp: Path, pythonpath: Path, root: Path) -> dict[str, str]:
    """The environment of a child with no schema folder, no cache and no way out."""
    dropped = {"MCPBIND_SCHEMA_DIR", "MCPBIND_PINS", "MCPBIND_OFFLINE", "XDG_CACHE_HOME"}
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in dropped and not k.lower().endswith("_proxy") and k != "PYTHONPATH"
    }
    guard = tmp / "guard"
    guard.mkdir(exist_ok=True)
    (guard / "sitecustomize.py").write_text(GUARD, encoding="utf-8")
    proxy = f"http://127.0.0.1:{closed_port()}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = proxy
    (tmp / "home").mkdir(exist_ok=True)
    env.update(
        PYTHONPATH=os.pathsep.join([str(guard), str(pythonpath)]),
        PYTHONDONTWRITEBYTECODE="1",
        HOME=str(tmp / "home"),
        MCPBIND_CACHE_DIR=str(tmp / "empty-cache"),
        MCPBIND_TEST_NET_LOG=str(tmp / "network.log"),
        MCPBIND_TEST_ROOT=str(root),
    )
    return env


def mcpbind(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", DRIVER, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def network_attempts(tmp: Path) -> str:
    log = tmp / "network.log"
    return log.read_text(encoding="utf-8") if log.exists() else ""


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Path:
    """The tracked files of this checkout, as they are now, in a folder of their own."""
    listed = subprocess.run(
        ["git", "-C", str(repo_root), "ls-files", "-z"],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    copy = tmp_path_factory.mktemp("clone") / "mcpbind"
    for name in filter(None, listed.split("\0")):
        source = repo_root / name
        if source.is_file():  # a file deleted in the working tree is not part of the copy
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    return copy


def layout(clone: Path, tmp: Path) -> Path:
    """A folder holding ``mcpbind/<root>`` -> the copy's ``<root>``, for PYTHONPATH."""
    tree = tmp / "tree"
    (tree / "mcpbind").mkdir(parents=True)
    for root in ROOTS:
        (tree / "mcpbind" / root).symlink_to(clone / root, target_is_directory=True)
    return tree


def test_the_copy_has_the_vendored_schemas_and_no_schema_dir_setting(clone: Path) -> None:
    for pin in load_pins(clone / "schema" / "pins.toml").values():
        data = (clone / "schema" / pin.revision / "schema.json").read_bytes()
        assert hashlib.sha256(data).hexdigest() == pin.sha256
    ci = (clone / ".ci" / "run").read_text(encoding="utf-8")
    conftest = (clone / "tests" / "conftest.py").read_text(encoding="utf-8")
    assert "MCPBIND_SCHEMA_DIR=" not in ci and "shared" not in ci
    assert "setdefault" not in conftest and "shared" not in conftest


def test_a_copy_regenerates_offline_and_a_flipped_byte_stops_it(
    clone: Path, tmp_path: Path
) -> None:
    env = offline_env(tmp_path, layout(clone, tmp_path), clone)
    result = mcpbind(env, clone, "generate", "--check")
    assert result.returncode == 0, result.stderr
    revisions = ", ".join(load_pins(clone / "schema" / "pins.toml"))
    assert result.stdout.strip() == f"{clone / 'generated'}: up to date ({revisions})"
    assert network_attempts(tmp_path) == ""
    assert not (tmp_path / "empty-cache").exists()

    schema = clone / "schema" / "2025-11-25" / "schema.json"
    good = schema.read_bytes()
    bad = bytearray(good)
    bad[1000] ^= 0x01
    try:
        schema.write_bytes(bytes(bad))
        result = mcpbind(env, clone, "generate", "--check")
    finally:
        schema.write_bytes(good)
    expected = hashlib.sha256(good).hexdigest()
    got = hashlib.sha256(bad).hexdigest()
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"mcpbind: error: {schema}: sha256 mismatch: expected {expected}, got {got}"
    ]
    assert network_attempts(tmp_path) == ""


def test_the_wheel_carries_the_schemas_and_diff_runs_from_it(clone: Path, tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(clone)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    [wheel] = tmp_path.glob("mcpbind-*.whl")
    site = tmp_path / "site"
    pip_install = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index"]
    installed = subprocess.run(
        [*pip_install, "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr

    [dist] = metadata.distributions(name="mcpbind", path=[str(site)])
    recorded = {str(f) for f in dist.files or ()}
    vendored = sorted(
        p.relative_to(clone).as_posix() for p in (clone / "schema").rglob("*") if p.is_file()
    )
    assert len(vendored) > 140  # pins, README, 5 x (schema.json, schema.ts), changelogs, examples
    for name in vendored:
        assert f"mcpbind/{name}" in recorded, name
        assert (site / "mcpbind" / name).read_bytes() == (clone / name).read_bytes(), name

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = offline_env(tmp_path, site, site)
    result = mcpbind(env, elsewhere, "diff", "2025-06-18", "2025-11-25", "--format", "json")
    assert result.returncode in (0, 1), result.stderr  # 1: breaking changes, by design
    report = json.loads(result.stdout)
    assert (report["old"], report["new"]) == ("2025-06-18", "2025-11-25")
    assert report["entries"] and report["notes"] == []  # schema.ts of both sides was read
    assert network_attempts(tmp_path) == ""
