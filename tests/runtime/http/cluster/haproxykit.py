"""The ``haproxy`` binary for the cluster tests and the benchmark: found, or installed by ``debkit``."""

from __future__ import annotations

from debkit import ensure_binary


def ensure_haproxy() -> str:
    """The path of ``haproxy`` (``debkit`` installs it when root and missing)."""
    return ensure_binary("haproxy")
