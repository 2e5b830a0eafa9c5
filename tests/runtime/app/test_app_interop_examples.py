"""``examples/app_server.py`` and ``examples/lowlevel_server.py`` are the same server.

Both run as real processes, over stdio and over Streamable HTTP (each started with
``--http PORT`` as its docstring says), and mcpbind's own ``Client`` runs the
same session against each at three revisions: what they list (tools with their schemas,
resources, prompts) and answer (every tool, progress, the resource, the prompt, a bad
argument) must be equal, once the parts each style may word differently are set aside
(schema ``title`` keys, the text of a validation error, the JSON spacing of a text block).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import httpx
import pytest
from mcpbind.runtime import Client, Connection, StdioParameters
from mcpbind.runtime.http import streamable_http_client
from portkit import on_fresh_port_async, taken_in

sys.path.insert(0, str(Path(__file__).with_name("peers")))
from appkit import APP_EXAMPLE, LOWLEVEL_EXAMPLE, REPO_ROOT, check_report

pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.timeout(120)]


@asynccontextmanager
async def over_http(script: Path) -> AsyncIterator[AbstractAsyncContextManager[Connection]]:
    """The example started with ``--http PORT``; a transport to it once it accepts. The
    example takes only a port: one taken before it bound it is tried again on a fresh one."""
    started: list[tuple[subprocess.Popen[bytes], IO[bytes]]] = []

    async def start(port: int) -> int:
        log = tempfile.TemporaryFile()  # noqa: SIM115 - not a pipe: a chatty server never blocks
        process = subprocess.Popen(
            [sys.executable, str(script), "--http", str(port)],
            cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=log,
        )  # fmt: skip
        started.append((process, log))
        with anyio.fail_after(30):
            while True:
                if process.poll() is not None:
                    log.seek(0)
                    stderr = log.read().decode(errors="replace")
                    if (taken := taken_in(stderr)) is not None:
                        raise taken
                    raise AssertionError(f"{script.name} --http {port} exited: {stderr}")
                # An HTTP answer, not just a connection: whoever took the port may listen.
                try:
                    async with httpx.AsyncClient(timeout=1) as http:
                        await http.get(f"http://127.0.0.1:{port}/mcp")
                    return port
                except httpx.TransportError:
                    await anyio.sleep(0.05)

    try:
        port = await on_fresh_port_async(start, script.name)
        yield streamable_http_client(f"http://127.0.0.1:{port}/mcp")
    finally:
        for process, log in started:
            process.terminate()
            process.wait(10)
            log.close()


@asynccontextmanager
async def transport_to(script: Path, kind: str) -> AsyncIterator[Any]:
    if kind == "stdio":
        yield StdioParameters(sys.executable, [str(script)], cwd=REPO_ROOT, stderr="devnull")
        return
    async with over_http(script) as transport:
        yield transport


async def session_report(client: Client) -> dict[str, Any]:
    """The peers' session (see ``appkit.check_report``) through our client, as wire dicts."""
    methods = client.session.bindings.methods
    progress: list[dict[str, Any]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append({"progress": value, "total": total, "message": message})

    async def ask(method: str, params: dict[str, Any] | None = None, **options: Any) -> Any:
        result = await client.send_request(methods[method], params, options or None)  # type: ignore[arg-type]
        return result.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def call(name: str, arguments: dict[str, Any], **options: Any) -> Any:
        return ask("tools/call", {"name": name, "arguments": arguments}, **options)

    return {
        "protocolVersion": client.revision,
        "tools": (await ask("tools/list"))["tools"],
        "echo": await call("echo", {"text": "hi there"}),
        "weather": await call("weather", {"city": "Oslo"}),
        "count": await call("count", {"steps": 3}, progress=on_progress),
        "progress": progress,
        "resources": (await ask("resources/list"))["resources"],
        "config": await ask("resources/read", {"uri": "config://app"}),
        "prompts": (await ask("prompts/list"))["prompts"],
        "greet": await ask("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}),
        "bad": await call("echo", {"text": 5}),
    }


def without_titles(schema: Any) -> Any:
    """A JSON Schema without its ``title`` keywords (generated names differ between styles)."""
    if isinstance(schema, dict):
        return {k: without_titles(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [without_titles(v) for v in schema]
    return schema


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(report)
    for tool in out["tools"]:
        for key in ("inputSchema", "outputSchema"):
            if key in tool:
                tool[key] = without_titles(tool[key])
    out["weather"]["content"][0]["text"] = json.loads(out["weather"]["content"][0]["text"])
    out["bad"]["content"] = "a readable message (checked by check_report)"
    return out


@pytest.mark.parametrize("revision", ["2025-11-25", "2025-03-26", "2026-07-28"])
@pytest.mark.parametrize("kind", ["stdio", "http"])
async def test_both_example_servers_are_the_same_server(kind: str, revision: str) -> None:
    reports = []
    for script in (APP_EXAMPLE, LOWLEVEL_EXAMPLE):
        async with (
            transport_to(script, kind) as transport,
            Client(transport, protocol_version=revision) as client,
        ):
            reports.append(await session_report(client))
    app, lowlevel = reports
    check_report(app, revision)
    check_report(lowlevel, revision)
    assert comparable(app) == comparable(lowlevel)
