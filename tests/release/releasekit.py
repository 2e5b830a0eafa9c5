"""Helpers of the release checks: the built distributions, fresh virtual environments with the
wheel installed, and the environment their commands run with.

The environments share the user's pip cache, so only the first run downloads anything. Every
command runs from an empty folder, so nothing in the checkout can be imported by accident.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

# Extras for developing mcpbind itself, not for using it: left out of the "all extras" install.
DEVELOPER_EXTRAS = frozenset({"test", "docs"})

# Variables that would make a fresh environment see something other than itself.
LEAKY_VARIABLES = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")

INSTALL_TIMEOUT_S = 900
RUN_TIMEOUT_S = 300


@dataclass(frozen=True)
class Dist:
    """The built distributions and what the wheel holds."""

    sdist: Path
    wheel: Path
    wheel_names: frozenset[str]
    sdist_names: frozenset[str]
    metadata: Mapping[str, list[str]]


@dataclass(frozen=True)
class Env:
    """A virtual environment with the wheel installed."""

    root: Path
    workdir: Path

    @property
    def bindir(self) -> Path:
        return self.root / ("Scripts" if os.name == "nt" else "bin")

    def exe(self, name: str) -> Path:
        return self.bindir / (f"{name}.exe" if os.name == "nt" else name)

    @property
    def python(self) -> Path:
        return self.exe("python")

    def run(
        self, *argv: str | Path, env: Mapping[str, str | None] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` here (a bare name is looked up in this environment's scripts)."""
        first = argv[0]
        program = self.exe(first) if isinstance(first, str) and os.sep not in first else first
        return subprocess.run(
            [str(program), *(str(a) for a in argv[1:])],
            cwd=self.workdir,
            env=clean_env(env),
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=RUN_TIMEOUT_S,
            check=False,
        )


def clean_env(changes: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """This process's environment without what would leak into a fresh one, plus ``changes``
    (``None`` removes a variable)."""
    env = {k: v for k, v in os.environ.items() if k not in LEAKY_VARIABLES}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    for key, value in (changes or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def checked(argv: list[str], cwd: Path, what: str) -> None:
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
        pytest.fail(f"{what} failed (exit {done.returncode}):\n{tail}", pytrace=False)


def make_env(tmp_path_factory: pytest.TempPathFactory, name: str, requirement: str) -> Env:
    root = tmp_path_factory.mktemp(name)
    workdir = tmp_path_factory.mktemp(f"{name}-cwd")
    checked([sys.executable, "-m", "venv", str(root / "venv")], workdir, f"venv {name}")
    env = Env(root / "venv", workdir)
    checked(
        [str(env.python), "-m", "pip", "install", "--quiet", requirement],
        workdir,
        f"pip install {requirement}",
    )
    return env


def vendored_schemas(repo_root: Path) -> list[Path]:
    """The pinned ``schema.json`` files kept in the checkout (``schema/<rev>/schema.json``)."""
    return sorted(repo_root.glob("schema/*/schema.json"))
