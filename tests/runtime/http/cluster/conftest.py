"""The cluster tests' fixtures: one real ``redis-server`` per module (``rediskit``), and this
folder's helper modules (``clusterkit``, ``haproxykit``, ``cluster_app``) importable by name."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from rediskit import RedisServer, redis_server  # noqa: E402
from suitekit import Suite, cache_dir, install_suite  # noqa: E402


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@pytest.fixture(scope="session")
def conformance_suite() -> Suite:
    """The official conformance suite (as ``tests/conformance`` installs it)."""
    return install_suite(cache_dir())
