"""MCP Inspector's headless CLI in modern mode (2026-07-28) against our default server.

``--protocol-era modern`` makes the CLI probe ``server/discover``, open a
``subscriptions/listen`` stream, then send the method with the 2026 headers (``Mcp-Param-*``
included). The Inspector needs Node >= 22.19: both come from npm into a cache directory
(``$MCPBIND_INSPECTOR_CACHE``, default ``~/.cache/mcpbind-test/inspector``), installed on
first use; a missing npm or a failed install fails the test loudly.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import npmkit
import pytest
from httpkit import build_dual_server
from mcpbind.runtime.http import StreamableHTTPServer, serving

pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.timeout(900)]

INSPECTOR = "@modelcontextprotocol/inspector"
INSPECTOR_VERSION = "2.12.0"


@pytest.fixture(scope="session")
def inspector_cli() -> list[str]:
    """node + the Inspector's CLI script, installed into the cache unless already there."""
    default = Path.home() / ".cache" / "mcpbind-test" / "inspector"
    root = Path(os.environ.get("MCPBIND_INSPECTOR_CACHE", default))
    node = npmkit.install(root, INSPECTOR, INSPECTOR_VERSION, "MCP Inspector")
    cli = root / "node_modules" / INSPECTOR / "clients" / "cli" / "build" / "index.js"
    if not cli.exists():
        pytest.fail(f"the MCP Inspector install in {root} is incomplete ({cli})")
    return [str(node), str(cli)]


async def run_cli(cli: list[str], home: Path, url: str, *args: str) -> Any:
    """One CLI call in modern mode; its JSON output."""
    command = [*cli, "--server-url", url, "--transport", "http", "--protocol-era", "modern", *args]
    env = {**os.environ, "HOME": str(home)}
    with anyio.fail_after(120):
        done = await anyio.run_process(command, env=env, check=False, stdin=subprocess.DEVNULL)
    output = done.stdout.decode()
    assert done.returncode == 0, f"{args}: {output}\n{done.stderr.decode()}"
    return json.loads(output)


async def test_inspector_cli_lists_and_calls_tools_in_modern_mode(
    inspector_cli: list[str], tmp_path: Path
) -> None:
    app = StreamableHTTPServer(build_dual_server().serve)
    async with serving(app) as base:
        url = f"{base}/mcp"
        listed = await run_cli(inspector_cli, tmp_path, url, "--method", "tools/list")
        assert [t["name"] for t in listed["tools"]] == ["echo", "ask_name", "where"]
        echoed = await run_cli(
            inspector_cli, tmp_path, url,
            "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=modern",
        )  # fmt: skip
        assert echoed["content"][0]["text"] == "modern"
        # Mirrored into Mcp-Param-Region (Base64: not ASCII) and Mcp-Param-Count, checked here.
        where = await run_cli(
            inspector_cli, tmp_path, url,
            "--method", "tools/call", "--tool-name", "where",
            "--tool-arg", "region=Zürich", "count=3",
        )  # fmt: skip
        assert where["content"][0]["text"] == "Zürich/3/None"
        assert app.sessions == {}  # modern mode: no session was made
