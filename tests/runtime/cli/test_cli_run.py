"""``mcpbind run``: a real subprocess serving the notes example over stdio and Streamable HTTP
(both eras), stopped by SIGINT or SIGTERM with exit status 0; bad targets are one line."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from clikit import (
    MCPBIND,
    NOTES,
    REPO,
    assert_one_line_error,
    cli,
    serving_http,
    started,
)
from mcpbind.runtime import Client, StdioParameters
from mcpbind.runtime.http import streamable_http_client
from portkit import listening_socket

pytestmark = [pytest.mark.timeout(120)]


async def tool_names(client: Client) -> list[str]:
    return sorted(tool.name for tool in await client.list_tools())


def test_stdio_serves_the_file_to_a_client() -> None:
    async def main() -> tuple[list[str], str, str]:
        params = StdioParameters(MCPBIND[0], [*MCPBIND[1:], "run", NOTES], cwd=REPO)
        async with Client(params) as client:
            result = await client.call_tool("repeat", {"text": "hi", "times": 3})
            return await tool_names(client), result.content[0].text, client.server_info.name

    names, text, server = anyio.run(main)
    assert names == ["add_note", "delete_note", "repeat"]
    assert (text, server) == ("hi hi hi", "notes")


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_http_serves_both_eras(revision: str) -> None:
    with serving_http(NOTES) as (_, port):

        async def main() -> tuple[str, list[str]]:
            url = f"http://127.0.0.1:{port}/mcp"
            async with Client(streamable_http_client(url), protocol_version=revision) as client:
                return client.revision, await tool_names(client)

        assert anyio.run(main) == (revision, ["add_note", "delete_note", "repeat"])


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_stdio_stops_cleanly_on_a_signal(signum: int) -> None:
    process = subprocess.Popen(
        [*MCPBIND, "run", NOTES], cwd=REPO, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE) + "\n")
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["result"]["serverInfo"]["name"] == "notes"
    process.send_signal(signum)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "Traceback" not in err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_http_stops_cleanly_on_a_signal(signum: int) -> None:
    with serving_http(NOTES) as (process, _):
        process.send_signal(signum)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        assert "Traceback" not in err


def test_a_module_target_and_a_factory(tmp_path: Path) -> None:
    (tmp_path / "factory_mod.py").write_text(
        "from mcpbind.runtime import Server\ndef build():\n    return Server('built', '2.0')\n"
    )

    async def main() -> str:
        params = StdioParameters(
            MCPBIND[0], [*MCPBIND[1:], "run", "factory_mod:build"], cwd=tmp_path
        )
        async with Client(params) as client:
            return str(client.server_info.name)

    assert anyio.run(main) == "built"


@pytest.mark.parametrize(
    ("source", "target", "fragment"),
    [
        (None, "missing.py", "missing.py: no such file"),
        ("def broken(:\n", "bad.py", "cannot import bad.py: SyntaxError"),
        ("raise RuntimeError('boom')\n", "bad.py", "cannot import bad.py: RuntimeError: boom"),
        ("x = 1\n", "bad.py", "bad.py has no App or Server"),
        ("from mcpbind.runtime.app import App\na = App('a')\nb = App('b')\n", "bad.py",
         "bad.py has several servers (a, b): name one, as bad.py:a"),
        ("x = 1\n", "bad.py:nope", "bad.py has no attribute 'nope'"),
        ("x = 1\n", "bad.py:x", "bad.py:x is a int, not an App or Server"),
        ("def f(a):\n    return a\n", "bad.py:f", "a factory must take no arguments"),
        (None, "no_such_module:app", "cannot import no_such_module: ModuleNotFoundError"),
    ],
)  # fmt: skip
def test_a_bad_target_is_one_line(
    tmp_path: Path, source: str | None, target: str, fragment: str
) -> None:
    if source is not None:
        (tmp_path / "bad.py").write_text(source)
    assert_one_line_error(cli("run", target, cwd=tmp_path), fragment)


def test_a_port_in_use_is_one_line() -> None:
    with serving_http(NOTES) as (_, port):
        assert_one_line_error(cli("run", NOTES, "--http", "--port", str(port)), "cannot listen")


def test_a_bad_fd_is_one_line() -> None:
    assert_one_line_error(cli("run", NOTES, "--http", "--fd", "97"), "cannot listen on fd 97")
    assert_one_line_error(cli("run", NOTES, "--fd", "3"), "--fd serves HTTP: pass --http too")


@pytest.mark.parametrize("port", ["70000", "-1"])
def test_a_port_out_of_range_is_one_line(port: str) -> None:
    done = cli("run", NOTES, "--http", "--port", port)
    assert_one_line_error(done, f"Invalid value for '--port': {port} is not in the range")


def test_a_taken_port_says_so_in_one_line() -> None:
    with listening_socket() as sock:  # held by this process, not by a server
        port = sock.getsockname()[1]
        done = cli("run", NOTES, "--http", "--port", str(port))
    assert_one_line_error(done, f"cannot listen on 127.0.0.1:{port}: Address already in use")


def test_print_url_gives_the_port_the_kernel_picked() -> None:
    with started("run", NOTES, "--http", "--port", "0", "--print-url") as process:
        assert process.stdout is not None
        url = process.stdout.readline().strip()  # printed once it listens
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        assert not url.endswith(":0/mcp")

        async def main() -> str:
            async with Client(streamable_http_client(url)) as client:
                return str(client.server_info.name)

        assert anyio.run(main)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        assert out == "" and "Traceback" not in err
    assert_one_line_error(cli("run", NOTES, "--print-url"), "--print-url prints the HTTP")


def test_the_module_runs_alone_too() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpbind.runtime.cli.run", "missing.py"],
        capture_output=True, text=True, cwd=REPO, check=False,
    )  # fmt: skip
    assert_one_line_error(done, "missing.py: no such file")


def test_a_server_target_over_http(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text(
        "from mcpbind.runtime import Server\nserver = Server('plain')\n"
    )
    with serving_http("plain.py", cwd=tmp_path) as (_, port):

        async def main() -> str:
            url = f"http://127.0.0.1:{port}/mcp"
            async with Client(streamable_http_client(url)) as client:
                return str(client.server_info.name)

        assert anyio.run(main) == "plain"


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("mcp = App('by-mcp')\n", "by-mcp"),
        ("only = App('the-only-one')\n", "the-only-one"),
        ("app = App('preferred')\nother = App('other')\n", "preferred"),
        ("def make_app():\n    return App('made')\nserver = make_app\n", None),
    ],
)
def test_without_obj_the_well_known_names_then_the_only_one(
    tmp_path: Path, source: str, name: str | None
) -> None:
    (tmp_path / "found.py").write_text("from mcpbind.runtime.app import App\n" + source)
    done = cli("inspect", "found.py", "--json", cwd=tmp_path)
    if name is None:  # a factory is called only when named: found.py:server
        assert_one_line_error(done, "found.py has no App or Server")
        done = cli("inspect", "found.py:server", "--json", cwd=tmp_path)
        name = "made"
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["serverInfo"]["name"] == name


def test_progress_shows_on_a_terminal_only() -> None:
    """The serving line goes to stderr when it is a terminal (a pty here), not otherwise."""
    controller, terminal = pty.openpty()
    with listening_socket() as sock:
        port = sock.getsockname()[1]
        process = subprocess.Popen(
            [*MCPBIND, "run", NOTES, "--http", "--fd", str(sock.fileno())], cwd=REPO,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=terminal,
            pass_fds=(sock.fileno(),),
        )  # fmt: skip
    os.close(terminal)
    try:
        seen = b""
        deadline = time.monotonic() + 30
        while b"(Ctrl-C stops)" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 0.5)
            if ready:
                seen += os.read(controller, 1024)
        assert f"mcpbind: serving http://127.0.0.1:{port}/mcp (Ctrl-C stops)".encode() in seen
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
        os.close(controller)
    with serving_http(NOTES) as (quiet, _):
        quiet.send_signal(signal.SIGTERM)
        _, err = quiet.communicate(timeout=30)
    assert err == ""
