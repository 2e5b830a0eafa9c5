"""The app example server (``examples/app_server.py``) served to the official Python SDK's client.

Over stdio (the example as a real subprocess) and Streamable HTTP (a real uvicorn on
127.0.0.1), in both eras: the handshake era at 2025-11-25 and at 2025-03-26 (which has no
``structuredContent``, ``outputSchema`` or tool ``title``: the app must leave them out), and the
stateless 2026-07-28 era (the SDK pinned to it: ``server/discover``, ``_meta`` on every request).
SDK 2.3.0's handshake always proposes its newest revision; the 2025-03-26 client is the same
SDK with that proposal changed (``LATEST_HANDSHAKE_VERSION``), as an older SDK would send it.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp
import mcp.client.session
import pytest
from mcp import StdioServerParameters, stdio_client as sdk_stdio_client
from mcpbind.runtime.http import serving

sys.path.insert(0, str(Path(__file__).with_name("peers")))
from appkit import REPO_ROOT, check_report, example_command, example_http_app

pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.timeout(120)]

REVISIONS = ["2025-11-25", "2025-03-26", "2026-07-28"]


def wire(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


@asynccontextmanager
async def sdk_client(
    transport: str, revision: str, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[mcp.Client]:
    """The SDK's client at ``revision`` against the app example over ``transport``."""
    mode = revision if revision == "2026-07-28" else "legacy"
    if mode == "legacy":
        monkeypatch.setattr(mcp.client.session, "LATEST_HANDSHAKE_VERSION", revision)
    if transport == "stdio":
        command = example_command()
        params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(REPO_ROOT))
        async with mcp.Client(sdk_stdio_client(params), mode=mode) as client:
            yield client
        return
    async with serving(example_http_app()) as base, mcp.Client(f"{base}/mcp", mode=mode) as client:
        yield client


async def session_report(client: mcp.Client) -> dict[str, Any]:
    """The session every peer runs, as wire-shaped dicts."""
    progress: list[dict[str, Any]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append({"progress": value, "total": total, "message": message})

    return {
        "protocolVersion": client.protocol_version,
        "tools": [wire(tool) for tool in (await client.list_tools()).tools],
        "echo": wire(await client.call_tool("echo", {"text": "hi there"})),
        "weather": wire(await client.call_tool("weather", {"city": "Oslo"})),
        "count": wire(await client.call_tool("count", {"steps": 3}, progress_callback=on_progress)),
        "progress": progress,
        "resources": [wire(r) for r in (await client.list_resources()).resources],
        "config": wire(await client.read_resource("config://app")),
        "prompts": [wire(p) for p in (await client.list_prompts()).prompts],
        "greet": wire(await client.get_prompt("greet", {"name": "Ada"})),
        "bad": wire(await client.call_tool("echo", {"text": 5})),
    }


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_sdk_client_uses_the_app_example(
    transport: str, revision: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with sdk_client(transport, revision, monkeypatch) as client:
        report = await session_report(client)
    check_report(report, revision)
    if revision == "2026-07-28":
        assert report["weather"]["resultType"] == "complete"
