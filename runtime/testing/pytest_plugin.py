"""pytest fixtures for an MCP server under test; enable them in a ``conftest.py``::

    pytest_plugins = ["mcpbind.runtime.testing.pytest_plugin"]

Then define ``mcp_server`` (the ``App`` or ``Server`` to test) and ask for ``mcp_client``: a
client connected to it in memory by ``connect`` (a tool's exception fails the test with its own
traceback). ``mcp_protocol_version`` (default: the newest handshake revision) chooses the
revision; override it, or parametrize it, to test the 2026-07-28 era. The fixtures are async and
run under anyio's pytest plugin (installed with anyio) on the backend ``anyio_backend`` names:
asyncio by default, trio too.

Not registered as an entry point: a project opts in, so no other test suite sees these names.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcpbind.runtime.endpoints.client import Client

from ._connect import connect

__all__ = ["mcp_client", "mcp_protocol_version", "mcp_server"]


@pytest.fixture
def mcp_server() -> Any:
    """The server under test: define a fixture of this name that returns your App or Server."""
    raise pytest.UsageError(
        "define a fixture named 'mcp_server' that returns the App or Server under test "
        "(mcpbind.runtime.testing.pytest_plugin's mcp_client connects to it)"
    )


@pytest.fixture
def mcp_protocol_version() -> str | None:
    """The revision ``mcp_client`` asks for; None: the newest handshake revision."""
    return None


@pytest.fixture
async def mcp_client(
    anyio_backend: Any, mcp_server: Any, mcp_protocol_version: str | None
) -> AsyncIterator[Client[Any, Any, Any]]:
    """A client connected to ``mcp_server`` in memory (``connect``), for one test."""
    async with connect(mcp_server, protocol_version=mcp_protocol_version) as client:
        yield client
