"""Fixtures of the release checks: the sdist and wheel, built once per session, and fresh
virtual environments with the wheel installed, one without extras and one with every extra a
user may ask for."""

from __future__ import annotations

import os
import sys
import tarfile
import tomllib
import zipfile
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

import pytest
from releasekit import DEVELOPER_EXTRAS, Dist, Env, checked, make_env, vendored_schemas


@pytest.fixture(scope="session")
def project(repo_root: Path) -> dict[str, Any]:
    """The ``[project]`` table of ``pyproject.toml``."""
    with (repo_root / "pyproject.toml").open("rb") as f:
        table: dict[str, Any] = tomllib.load(f)["project"]
    return table


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Dist:
    """``python -m build``: the sdist, then the wheel built from that sdist (so a file the sdist
    forgets is missing from the wheel too)."""
    out = tmp_path_factory.mktemp("dist")
    checked(
        [sys.executable, "-m", "build", "--outdir", str(out), str(repo_root)],
        repo_root,
        "python -m build",
    )
    sdists, wheels = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, (
        f"expected one sdist and one wheel: {os.listdir(out)}"
    )
    with tarfile.open(sdists[0]) as tar:
        sdist_names = frozenset(m.name for m in tar.getmembers() if m.isfile())
    with zipfile.ZipFile(wheels[0]) as whl:
        wheel_names = frozenset(whl.namelist())
        meta_name = next(n for n in wheel_names if n.endswith(".dist-info/METADATA"))
        message = HeaderParser().parsestr(whl.read(meta_name).decode("utf-8"))
    metadata = {key: message.get_all(key) or [] for key in set(message.keys())}
    return Dist(sdists[0], wheels[0], wheel_names, sdist_names, metadata)


@pytest.fixture(scope="session")
def bare_env(tmp_path_factory: pytest.TempPathFactory, dist: Dist) -> Env:
    """The wheel alone, with its required dependencies."""
    return make_env(tmp_path_factory, "bare", str(dist.wheel))


@pytest.fixture(scope="session")
def user_extras(dist: Dist) -> list[str]:
    """Every extra the wheel declares, but those for developing mcpbind."""
    return sorted(set(dist.metadata.get("Provides-Extra", [])) - DEVELOPER_EXTRAS)


@pytest.fixture(scope="session")
def full_env(tmp_path_factory: pytest.TempPathFactory, dist: Dist, user_extras: list[str]) -> Env:
    """The wheel with every user-facing extra."""
    return make_env(tmp_path_factory, "full", f"{dist.wheel}[{','.join(user_extras)}]")


@pytest.fixture(scope="session")
def schema_env(repo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | None]:
    """How a command in a fresh environment finds the pinned schemas.

    With the schemas vendored, the wheel must carry them: no schema folder, an empty cache and no
    network. Until then, the folder the rest of the suite reads (``MCPBIND_SCHEMA_DIR``)."""
    if vendored_schemas(repo_root):
        return {
            "MCPBIND_SCHEMA_DIR": None,
            "MCPBIND_CACHE_DIR": str(tmp_path_factory.mktemp("empty-cache")),
            "MCPBIND_OFFLINE": "1",
        }
    return {"MCPBIND_SCHEMA_DIR": os.environ.get("MCPBIND_SCHEMA_DIR")}
