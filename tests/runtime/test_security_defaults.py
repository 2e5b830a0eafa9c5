"""The defaults docs/security.md states are the defaults the code has, and its stdio claims hold.

The limits are read from the signatures and dataclasses themselves, so a changed default fails
here until the page says the new value; the stdio claims run a real server process.
"""

from __future__ import annotations

import inspect
import logging
import sys
from pathlib import Path

import httpx
import pytest
from httpkit import ACCEPT_BOTH, INITIALIZE, build_server
from mcpbind.runtime import (
    Client,
    RequestStateKeeper,
    SessionOptions,
    StdioParameters,
    stdio_client,
)
from mcpbind.runtime.auth import ClientCredentialsAuth, OAuthClientAuth
from mcpbind.runtime.core.logsafe import LogLimiter
from mcpbind.runtime.http import LegacySSEServer, StreamableHTTPServer, serving

pytestmark = pytest.mark.anyio

STDIO_SERVERS = str(Path(__file__).with_name("stdio_servers.py"))
DOCS = Path(__file__).resolve().parents[2] / "docs" / "security.md"


def default(function: object, name: str) -> object:
    return inspect.signature(function).parameters[name].default  # type: ignore[arg-type]


def test_the_documented_limits_are_the_defaults() -> None:
    options = SessionOptions()
    assert (options.max_concurrent_handlers, options.spare_handlers) == (64, 16)
    assert (options.max_pending_requests, options.max_pending_bytes) == (4096, 32 * 1024 * 1024)
    assert (options.request_timeout, options.max_request_timeout) == (60.0, 600.0)
    assert default(StreamableHTTPServer, "max_body_bytes") == 4 * 1024 * 1024
    assert default(serving, "max_connections") == 512
    assert default(serving, "header_timeout") == 15.0
    assert default(serving, "max_head_bytes") == 64 * 1024
    limiter = LogLimiter(logging.getLogger("x"))
    assert (limiter.burst, limiter.interval) == (10, 60.0)
    assert default(RequestStateKeeper, "ttl") == 900.0
    loopback = ("127.0.0.1", "localhost", "[::1]")
    for server in (StreamableHTTPServer, LegacySSEServer):
        assert tuple(default(server, "allowed_hosts")) == loopback  # type: ignore[arg-type]
    for flow in (OAuthClientAuth, ClientCredentialsAuth):
        assert tuple(default(flow, "allowed_metadata_origins")) == ()  # type: ignore[arg-type]
    assert default(StdioParameters, "inherit_env") is True
    page = DOCS.read_text()
    for stated in ("| 64 request handlers", "4,096 requests running or queued, 32 MiB",
                   "60 s, 600 s at most", "up to 4 MiB", "512 connections, 15 s",
                   "64 KiB per head", "10 at once, then one a minute", "expires after 900 s",
                   "`127.0.0.1`, `localhost`, `[::1]`"):  # fmt: skip
        assert stated in page, stated


async def test_session_ids_are_random_and_long() -> None:
    async with (
        serving(StreamableHTTPServer(build_server().serve)) as base,
        httpx.AsyncClient() as http,
    ):
        ids = [
            (await http.post(f"{base}/mcp", json=INITIALIZE, headers=ACCEPT_BOTH)).headers[
                "mcp-session-id"
            ]
            for _ in range(2)
        ]
    assert ids[0] != ids[1]
    assert all(len(session_id) == 32 for session_id in ids)  # 24 random bytes, base64url


async def test_stdio_arguments_are_not_read_by_a_shell(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    # Through a shell, this argument would run `touch`; given as it is, the server ignores it.
    params = StdioParameters(
        sys.executable, [STDIO_SERVERS, "env", f"$(touch {marker}); touch {marker}"], cwd=tmp_path
    )
    async with Client(stdio_client(params)) as client:
        await client.ping()
    assert not marker.exists()


async def test_a_stdio_server_gets_only_the_environment_it_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCPBIND_TEST_VALUE", "a-secret-of-the-parent")
    inherited = StdioParameters(sys.executable, [STDIO_SERVERS, "env"])
    async with Client(stdio_client(inherited)) as client:
        assert client.server_info.name == "a-secret-of-the-parent"
    alone = StdioParameters(sys.executable, [STDIO_SERVERS, "env"], inherit_env=False)
    async with Client(stdio_client(alone)) as client:
        assert client.server_info.name == "unset"
