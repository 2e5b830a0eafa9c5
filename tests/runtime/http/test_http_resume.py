"""SSE answers of the handshake era are resumable in every mode, over a real uvicorn.

Whether a POST is answered by SSE because the handler sent something first (the default),
because the server always answers SSE (``json_response=False``), or because the client
accepts nothing else, the stream starts with a priming event and every event has an id;
a client that loses the stream mid-call gets the rest, the result included, with
``Last-Event-ID``. (A malformed ``Last-Event-ID`` is a 400, before any store sees it.)
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from httpkit import build_server, raw_initialize, raw_request, session_headers, sse_messages
from mcpbind.runtime.http import StreamableHTTPServer, serving

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

CALL = {
    "jsonrpc": "2.0",
    "id": 9,
    "method": "tools/call",
    "params": {
        "name": "progress",
        "arguments": {"steps": 4, "delay": 0.1},
        "_meta": {"progressToken": "t"},
    },
}
#: (server options, Accept) of each way a POST ends up answered by SSE.
MODES = {
    "handler-first": ({}, "application/json, text/event-stream"),
    "sse-always": ({"json_response": False}, "application/json, text/event-stream"),
    "sse-only-client": ({}, "text/event-stream"),
    "sse-only-client-json-server": ({"json_response": True}, "text/event-stream"),
}


@pytest.mark.parametrize("mode", list(MODES))
async def test_stream_closed_mid_call_is_resumed(mode: str) -> None:
    options, accept = MODES[mode]
    app = StreamableHTTPServer(build_server().serve, **options)
    async with serving(app) as base, httpx.AsyncClient(timeout=10) as http:
        url = f"{base}/mcp"
        session_id = await raw_initialize(http, url)
        headers = {**session_headers(session_id), "accept": accept}
        ids: list[str] = []
        primed = False
        async with http.stream("POST", url, json=CALL, headers=headers) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            async for line in response.aiter_lines():
                if line.startswith("id: "):
                    ids.append(line[4:])
                if line == "data: ":
                    primed = True
                if line.startswith("data: {"):
                    break  # the first progress notification: drop the stream here
        assert primed and len(ids) == 2, ids  # the priming event, then the first event
        resumed = await http.get(
            url,
            headers={**headers, "accept": "text/event-stream", "last-event-id": ids[-1]},
        )
        assert "id: " in resumed.text
        messages = sse_messages(resumed.text)
        assert [m["params"]["progress"] for m in messages if m.get("method")] == [2, 3, 4]
        assert messages[-1]["id"] == 9
        assert messages[-1]["result"]["content"][0]["text"] == "4 steps"


@pytest.mark.parametrize(
    "value", ["²", "1" * 5000, "x" * 300, "a b", "a\tb", "stream/" + "9" * 250, "nope"]
)
async def test_malformed_or_unknown_last_event_id_is_a_400(value: str) -> None:
    app = StreamableHTTPServer(build_server().serve)
    async with serving(app) as base, httpx.AsyncClient(timeout=10) as http:
        session_id = await raw_initialize(http, f"{base}/mcp")
        headers: list[tuple[bytes, bytes]] = [
            (b"accept", b"text/event-stream"),
            (b"mcp-session-id", session_id.encode()),
            (b"mcp-protocol-version", b"2025-11-25"),
            (b"last-event-id", value.encode()),
        ]
        status, body = await raw_request(base, "GET", headers)
        assert status == 400, body
        error: Any = httpx.Response(200, content=body).json()
        assert error["jsonrpc"] == "2.0" and error["error"]["code"] == -32000
