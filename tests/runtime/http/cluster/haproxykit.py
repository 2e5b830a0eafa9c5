"""The ``haproxy`` binary for the cluster tests and the benchmark: found, or installed once.

The Debian package puts it in ``/usr/sbin``, which is often not on a user's ``PATH``. When it is
missing and we are root, ``apt-get install -y redis-server haproxy`` installs both packages once
(saying so on stderr, as ``rediskit`` does); otherwise the tests fail with the command to run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from rediskit import APT_PACKAGES


class HaproxyUnavailable(RuntimeError):
    """``haproxy`` is not installed and cannot be installed here."""


def _find() -> str | None:
    return shutil.which("haproxy") or next(
        (p for p in ("/usr/sbin/haproxy", "/usr/bin/haproxy") if os.path.exists(p)), None
    )


def ensure_haproxy() -> str:
    """The path of ``haproxy``, installing the Debian packages once when root and missing."""
    found = _find()
    if found:
        return found
    if os.name == "posix" and os.geteuid() == 0 and shutil.which("apt-get"):
        print(f"haproxykit: haproxy is missing; installing {' '.join(APT_PACKAGES)} with apt-get",
              file=sys.stderr)  # fmt: skip
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-q"], check=False, env=env, capture_output=True)
        done = subprocess.run(
            ["apt-get", "install", "-y", "-q", *APT_PACKAGES],
            check=False, env=env, capture_output=True, text=True,
        )  # fmt: skip
        found = _find()
        if found:
            return found
        raise HaproxyUnavailable(f"apt-get install {' '.join(APT_PACKAGES)} failed:\n{done.stderr}")
    raise HaproxyUnavailable(
        "haproxy is not installed: install the Debian packages "
        f"(sudo apt-get install -y {' '.join(APT_PACKAGES)}) or run the tests as root"
    )
