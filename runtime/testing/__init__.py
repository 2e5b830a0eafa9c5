"""Testing an MCP server: a connected in-memory client in one line, and a pytest plugin.

::

    from mcpbind.runtime.testing import connect

    async with connect(app) as client:          # an App or a Server, in this process
        result = await client.call_tool("add", {"a": 1, "b": 2})

``connect`` raises a tool's unexpected exception in the test, with its own traceback, instead
of letting the app answer an ``isError`` result (``raise_exceptions=False`` keeps the app's
answer). ``pytest_plugins = ["mcpbind.runtime.testing.pytest_plugin"]`` in a ``conftest.py``
adds the ``mcp_client`` fixture (asyncio and trio, through anyio's pytest plugin).

The issue asked for ``mcpbind.testing``: each root folder of the repository is a package of
``mcpbind`` (``runtime/`` is ``mcpbind.runtime``), so the runtime's testing module is here.

The testing layer, the top one. May import: every layer below it (the app included), and
``pytest`` in ``pytest_plugin`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpbind.runtime._exports import install

if TYPE_CHECKING:
    from ._connect import connect as connect

install(globals())
