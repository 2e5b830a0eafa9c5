"""The app example server driven by MCP Inspector's headless CLI (``--cli``), as a user would.

Over stdio (the Inspector starts the example itself) and Streamable HTTP (a real uvicorn on
127.0.0.1), in the handshake era (``--protocol-era legacy``: it proposes 2025-11-25) and the
stateless era (``modern``: 2026-07-28). One CLI run per method, each with a scratch ``HOME``;
the JSON each prints is gathered into a report and checked like every other peer's. The CLI
cannot choose an older revision and does not print progress notifications, so neither is
checked here (the SDK clients' tests check both).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcpbind.runtime.http import serving
from test_http_inspector import inspector_cli

sys.path.insert(0, str(Path(__file__).with_name("peers")))
from appkit import REPO_ROOT, check_report, example_command, example_http_app

pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.timeout(900)]
__all__ = ["inspector_cli"]  # a fixture: the Inspector's install

ERAS = {"legacy": "2025-11-25", "modern": "2026-07-28"}
GREET = ("--method", "prompts/get", "--prompt-name", "greet", "--prompt-args", "name=Ada")


async def cli_json(cli: list[str], home: Path, target: list[str], era: str, *args: str) -> Any:
    """One CLI call; the JSON result it prints (exit 5 when the result is a tool error)."""
    command = [*cli, *args, "--protocol-era", era, *target]
    env = {**os.environ, "HOME": str(home)}
    with anyio.fail_after(120):
        done = await anyio.run_process(
            command, env=env, check=False, cwd=REPO_ROOT, stdin=subprocess.DEVNULL
        )
    assert done.returncode in (0, 5), f"{args}: {done.stdout.decode()}\n{done.stderr.decode()}"
    return json.loads(done.stdout)


async def inspector_report(cli: list[str], home: Path, target: list[str], era: str) -> Any:
    async def run(*args: str) -> Any:
        return await cli_json(cli, home, target, era, *args)

    def call(tool: str, arguments: dict[str, Any]) -> Any:
        return run("--method", "tools/call", "--tool-name", tool,
                   "--tool-args-json", json.dumps(arguments))  # fmt: skip

    return {
        "protocolVersion": ERAS[era],
        "tools": (await run("--method", "tools/list"))["tools"],
        "echo": await call("echo", {"text": "hi there"}),
        "weather": await call("weather", {"city": "Oslo"}),
        "count": await call("count", {"steps": 3}),
        "resources": (await run("--method", "resources/list"))["resources"],
        "config": await run("--method", "resources/read", "--uri", "config://app"),
        "prompts": (await run("--method", "prompts/list"))["prompts"],
        "greet": await run(*GREET),
        "bad": await call("echo", {"text": 5}),
    }


@pytest.mark.parametrize("era", list(ERAS))
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_inspector_cli_uses_the_app_example(
    inspector_cli: list[str], tmp_path: Path, transport: str, era: str
) -> None:
    if transport == "stdio":
        report = await inspector_report(
            inspector_cli, tmp_path, ["--transport", "stdio", "--", *example_command()], era
        )
    else:
        async with serving(example_http_app()) as base:
            target = ["--transport", "http", "--server-url", f"{base}/mcp"]
            report = await inspector_report(inspector_cli, tmp_path, target, era)
    check_report(report, ERAS[era], progress=False)
