"""Every header the Streamable HTTP server parses, fuzzed against a real uvicorn: no 5xx.

Requests are written byte for byte on a socket (HTTP clients refuse to send most of these
values), each a valid request of either era with one header replaced by a generated value:
any bytes but CR/LF (which would end the header), non-ASCII digits like ``²``, thousands of
digits, huge values. Whatever the server makes of it, it must not answer 5xx, and a 400 of
ours carries a JSON-RPC error.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from anyio.from_thread import start_blocking_portal
from httpkit import MODERN_META, build_dual_server, raw_initialize
from hypothesis import HealthCheck, given, settings, strategies as st
from mcpbind.runtime.http import StreamableHTTPServer, serving

pytestmark = [pytest.mark.timeout(300)]

FUZZED = [
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "accept",
    "content-type",
    "content-length",
    "mcp-method",
    "mcp-name",
    "mcp-param-region",
    "mcp-param-count",
]
NASTY = [
    "²".encode(),
    "١٢٣".encode(),
    b"1" * 5000,
    b"9" * 20000,
    b"x" * 70000,
    b"=?base64?" + b"A" * 5000 + b"?=",
    b"=?base64?////?=",
    b"\x00",
    b"\x7f",
    b"\xff\xfe",
    b"-1",
    b"+5",
    b" ",
    b"",
]
values = st.one_of(
    st.binary(max_size=80).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b"")),
    st.text(max_size=40).map(lambda t: t.encode().replace(b"\r", b"").replace(b"\n", b"")),
    st.sampled_from(NASTY),
    st.integers().map(lambda n: str(n).encode()),
)


@pytest.fixture(scope="module")
def live() -> Iterator[dict[str, Any]]:
    """A default server on uvicorn in a portal thread, with one handshake-era session."""
    app = StreamableHTTPServer(build_dual_server().serve)
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(serving(app)) as base:

        async def open_session() -> str:
            async with httpx.AsyncClient() as http:
                return await raw_initialize(http, f"{base}/mcp")

        yield {"base": base, "session": portal.call(open_session)}


def request(
    base: str, method: str, headers: dict[str, bytes], body: bytes
) -> tuple[int | None, bytes]:
    host, port = base.removeprefix("http://").split(":")
    lines = [
        f"{method} /mcp HTTP/1.1".encode(),
        f"host: {host}:{port}".encode(),
        b"connection: close",
    ]
    lines += [name.encode() + b": " + value for name, value in headers.items()]
    with socket.create_connection((host, int(port)), timeout=20) as sock:
        sock.sendall(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        received = b""
        while b"\r\n\r\n" not in received and (chunk := sock.recv(65536)):
            received += chunk
        if not received:
            return None, b""
        head, _, payload = received.partition(b"\r\n\r\n")
        length = next(
            (
                int(line[15:])
                for line in head.lower().split(b"\r\n")
                if line.startswith(b"content-length: ")
            ),
            0,  # an SSE stream: its head is enough
        )
        while len(payload) < length and (chunk := sock.recv(65536)):
            payload += chunk
    return int(head.split(b" ", 2)[1]), payload


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    header=st.sampled_from(FUZZED),
    value=values,
    era=st.sampled_from(["2026", "handshake"]),
    verb=st.sampled_from(["POST", "GET", "DELETE"]),
)
def test_no_header_value_gets_a_5xx(
    live: dict[str, Any], header: str, value: bytes, era: str, verb: str
) -> None:
    if era == "2026":
        params = {"name": "where", "arguments": {"region": "eu", "count": 3}, "_meta": MODERN_META}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        headers = {"mcp-protocol-version": b"2026-07-28", "mcp-method": b"tools/call",
                   "mcp-name": b"where", "mcp-param-region": b"eu", "mcp-param-count": b"3"}  # fmt: skip
    else:
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        # A DELETE would end the shared session: it names another one.
        session = b"not-a-session" if verb == "DELETE" else live["session"].encode()
        headers = {"mcp-session-id": session, "mcp-protocol-version": b"2025-11-25"}
    encoded = json.dumps(body).encode() if verb == "POST" else b""
    headers = {
        "accept": b"application/json, text/event-stream"
        if verb == "POST"
        else b"text/event-stream",
        "content-type": b"application/json",
        "content-length": str(len(encoded)).encode(),
        **headers,
    }
    if header == "content-length" and value.strip().isdigit():
        value = b"x" + value  # a length that is a number would just wait for more body
    headers[header] = value
    status, payload = request(live["base"], verb, headers, encoded)
    assert status is None or status < 500, (status, payload[:300])
    if status == 400 and payload.startswith(b"{"):
        assert json.loads(payload)["jsonrpc"] == "2.0"
