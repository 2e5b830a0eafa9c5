"""Runtime tests run on asyncio (anyio's pytest plugin); helpers live in runtime_helpers.py."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
