"""The app example server served to the official TypeScript SDK's client, over stdio and HTTP.

``peers/ts_client.cjs`` runs one session and prints what it saw; ``check_report`` asserts it.
The handshake era with ``@modelcontextprotocol/sdk`` 1.32.2 (it proposes 2025-11-25; told to
propose 2025-03-26, which it supports, for the older revision), the stateless 2026-07-28 era
with the SDK's next generation, ``@modelcontextprotocol/client`` 2.3.1 (1.x does not speak
2026-07-28), which MCP Inspector 2.12.0 brings along in its npm folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import npmkit
import pytest
import suitekit
from mcpbind.runtime.http import serving
from test_http_inspector import inspector_cli

sys.path.insert(0, str(Path(__file__).with_name("peers")))
from appkit import REPO_ROOT, check_report, example_command, example_http_app

pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.timeout(900)]

TS_SDK = "@modelcontextprotocol/sdk"
TS_SDK_VERSION = "1.32.2"
TS_CLIENT = Path(__file__).with_name("peers") / "ts_client.cjs"
__all__ = ["inspector_cli"]  # the Inspector's install, a fixture: it holds the 2.x client


@pytest.fixture(scope="session")
def ts_sdk() -> tuple[Path, Path]:
    """(node, the npm folder holding the 1.x SDK), installed there unless already present."""
    root = suitekit.cache_dir()
    return npmkit.install(root, TS_SDK, TS_SDK_VERSION, "the TypeScript SDK"), root


async def run_client(
    node: Path, sdk: str, root: Path, target: list[str], propose: str | None
) -> dict:
    env = {**os.environ}
    if propose is not None:
        env["MCP_PROPOSE"] = propose
    command = [str(node), str(TS_CLIENT), sdk, str(root), *target]
    with anyio.fail_after(120):
        done = await anyio.run_process(
            command, env=env, check=False, cwd=REPO_ROOT, stdin=subprocess.DEVNULL
        )
    assert done.returncode == 0, done.stderr.decode()
    report: dict = json.loads(done.stdout)
    return report


@pytest.mark.parametrize("revision", ["2025-11-25", "2025-03-26", "2026-07-28"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_typescript_sdk_client_uses_the_app_example(
    ts_sdk: tuple[Path, Path], inspector_cli: list[str], transport: str, revision: str
) -> None:
    node, root = ts_sdk
    sdk = "v1"
    propose = revision if revision == "2025-03-26" else None
    if revision == "2026-07-28":
        # The Inspector's folder: node_modules/@modelcontextprotocol/client (its dependency).
        sdk, root = "v2", Path(inspector_cli[1]).parents[6]
        assert (root / "node_modules" / "@modelcontextprotocol" / "client").is_dir()
    if transport == "stdio":
        report = await run_client(node, sdk, root, ["stdio", *example_command()], propose)
    else:
        async with serving(example_http_app()) as base:
            report = await run_client(node, sdk, root, ["http", f"{base}/mcp"], propose)
    check_report(report, revision)
