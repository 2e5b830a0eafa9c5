"""The Debian packages the cluster tests run (``redis-server``, ``haproxy``): found, or installed once.

Both live in ``/usr/sbin`` or ``/usr/bin``, not always on a user's ``PATH``. When one is missing and
we are root, ``apt-get install -y redis-server haproxy`` installs both at once (saying so on
stderr); otherwise the tests fail with the command to run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

APT_PACKAGES = ("redis-server", "haproxy")


class PackageUnavailable(RuntimeError):
    """A binary the cluster tests need is not installed and cannot be installed here."""


def _find(binary: str) -> str | None:
    return shutil.which(binary) or next(
        (p for p in (f"/usr/sbin/{binary}", f"/usr/bin/{binary}") if os.path.exists(p)), None
    )


def ensure_binary(binary: str) -> str:
    """The path of ``binary``, installing the Debian packages once when root and missing."""
    found = _find(binary)
    if found:
        return found
    packages = " ".join(APT_PACKAGES)
    if os.name != "posix" or os.geteuid() != 0 or not shutil.which("apt-get"):
        raise PackageUnavailable(
            f"{binary} is not installed: install the Debian packages "
            f"(sudo apt-get install -y {packages}) or run the tests as root"
        )
    print(f"debkit: {binary} is missing; installing {packages} with apt-get", file=sys.stderr)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-q"], check=False, env=env, capture_output=True)
    done = subprocess.run(
        ["apt-get", "install", "-y", "-q", *APT_PACKAGES],
        check=False,
        env=env,
        capture_output=True,
        text=True,
    )
    found = _find(binary)
    if found:
        return found
    raise PackageUnavailable(f"apt-get install {packages} failed:\n{done.stderr}")
