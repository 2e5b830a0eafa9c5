"""``mcpbind dev``: the server restarts when its file changes (its tool list changes with the
edit), the Inspector's command line, one line naming what to install when ``npx`` is missing,
and the real MCP Inspector started on the server (an ``npx`` stand-in runs the cached install)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest
from clikit import NOTES, assert_one_line_error, cli, dev_serving
from mcpbind.runtime import Client
from mcpbind.runtime.http import streamable_http_client
from portkit import PortTaken, free_port, says_port_taken
from test_http_inspector import inspector_cli

pytestmark = [pytest.mark.timeout(180)]
__all__ = ["inspector_cli"]  # a fixture: the Inspector's install

APP = """
from mcpbind.runtime.app import App
app = App("live")

@app.tool()
def one() -> str:
    return "1"
"""
TWO = """

@app.tool()
def two() -> str:
    return "2"
"""


def tools_at(port: int) -> list[str]:
    async def main() -> list[str]:
        async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp")) as client:
            return sorted(tool.name for tool in await client.list_tools())

    return anyio.run(main)


def test_the_inspector_command_lines() -> None:
    done = cli("dev", NOTES, "--port", "8123", "--print-command")
    assert done.returncode == 0, done.stderr
    words = shlex.split(done.stdout)
    assert words[1:] == ["-y", "@modelcontextprotocol/inspector", "--transport", "http",
                         "--server-url", "http://127.0.0.1:8123/mcp"]  # fmt: skip
    done = cli("dev", NOTES, "--stdio", "--print-command")
    words = shlex.split(done.stdout)
    assert words[1:5] == ["-y", "@modelcontextprotocol/inspector", "--transport", "stdio"]
    assert words[5:] == [sys.executable, "-m", "mcpbind.runtime.cli.run", NOTES]


def test_a_file_edit_restarts_the_server(tmp_path: Path) -> None:
    source = tmp_path / "live.py"
    source.write_text(APP)
    with dev_serving(tmp_path, "live.py", "--no-inspector", cwd=tmp_path) as (dev, port, log):
        assert tools_at(port) == ["one"]
        source.write_text(APP + TWO)
        deadline = time.monotonic() + 60
        while True:
            try:
                if tools_at(port) == ["one", "two"]:
                    break
            except Exception:  # between the old server's end and the new one's start
                pass
            assert time.monotonic() < deadline, "the server was not restarted"
            time.sleep(0.3)
        dev.send_signal(signal.SIGINT)
        dev.communicate(timeout=30)
        err = log.read_text()
        assert dev.returncode == 0 and "Traceback" not in err, err


def test_without_npx_one_line_says_what_to_install(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # nothing on it: no npx
    with dev_serving(tmp_path, NOTES, env=env) as (dev, port, log):
        assert tools_at(port) == ["add_note", "delete_note", "repeat"]  # it serves anyway
        dev.send_signal(signal.SIGTERM)
        dev.communicate(timeout=30)
    err = log.read_text()
    assert dev.returncode == 0, err
    assert err.strip().splitlines() == [
        "mcpbind: the MCP Inspector needs npx, which is not on PATH: install Node.js 22 or "
        "newer (https://nodejs.org), or pass --no-inspector"
    ]


def test_a_bad_target_is_one_line(tmp_path: Path) -> None:
    assert_one_line_error(cli("dev", "nothing.py", cwd=tmp_path), "nothing.py: no such file")


@pytest.mark.interop
def test_the_inspector_starts_on_the_server(inspector_cli: list[str], tmp_path: Path) -> None:
    node, cli_script = inspector_cli
    launcher = Path(cli_script).parents[2] / "launcher" / "build" / "index.js"
    shim = tmp_path / "bin" / "npx"
    shim.parent.mkdir()
    # npx -y @modelcontextprotocol/inspector ARGS -> the cached Inspector's launcher with ARGS.
    shim.write_text(f'#!/bin/sh\nshift 2\nexec "{node}" "{launcher}" "$@"\n')
    shim.chmod(0o755)
    # The Inspector takes only ports (its UI's and its sandbox's): drawn with the server's, all
    # tried again if one was taken before its process bound it.
    ui_ports: dict[int, tuple[int, int]] = {}  # the last start's (UI, sandbox) ports

    def inspector_up(dev: subprocess.Popen[str], port: int) -> None:
        assert dev.stdout is not None
        deadline = time.monotonic() + 90
        for line in dev.stdout:
            if says_port_taken(line):
                raise PortTaken(line.strip())
            if "MCP Inspector Web is up and running" in line:
                return
            assert time.monotonic() < deadline
        raise AssertionError("the Inspector did not start")

    def env_for() -> dict[str, str]:
        ui_port, sandbox_port = free_port(), free_port()
        ui_ports[0] = (ui_port, sandbox_port)
        return {**os.environ, "PATH": f"{shim.parent}:{os.environ['PATH']}",
                "HOME": str(tmp_path), "MCP_AUTO_OPEN_ENABLED": "false",
                "CLIENT_PORT": str(ui_port), "MCP_SANDBOX_PORT": str(sandbox_port)}  # fmt: skip

    with dev_serving(tmp_path, NOTES, env=env_for, ready=inspector_up) as (dev, _, _):
        ui_port = ui_ports[0][0]
        assert httpx.get(f"http://127.0.0.1:{ui_port}/", timeout=10).status_code < 500
        dev.send_signal(signal.SIGTERM)
        dev.wait(timeout=30)
    assert dev.returncode == 0
    with pytest.raises(httpx.ConnectError):  # the Inspector went with it
        httpx.get(f"http://127.0.0.1:{ui_port}/", timeout=5)


@pytest.mark.parametrize("port", ["0", "70000"])
def test_a_port_the_inspector_cannot_be_given_is_one_line(port: str) -> None:
    done = cli("dev", NOTES, "--port", port, "--no-inspector")
    assert_one_line_error(done, f"Invalid value for '--port': {port} is not in the range")
