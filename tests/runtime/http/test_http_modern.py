"""The 2026-07-28 era on the default Streamable HTTP endpoint, over a real uvicorn.

The official Python SDK's client in both eras against one default server; then the HTTP
binding by hand: every header missing or mismatched, unknown and bogus versions, wrong HTTP
methods, batches, statuses per error, cancellation by closing the stream, the listen stream.
"""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import anyio
import httpx
import mcp_types
import pytest
from httpkit import (
    ACCEPT_BOTH,
    INITIALIZE,
    MODERN,
    MODERN_META,
    answers,
    build_dual_server,
    modern_call,
    modern_headers,
    raw_request,
)
from mcp.client.client import Client as SdkClient
from mcpbind.runtime.http import StreamableHTTPServer, serving

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def b64(value: str) -> str:
    return f"=?base64?{base64.b64encode(value.encode()).decode()}?="


@pytest.mark.interop
@pytest.mark.parametrize("mode", [MODERN, "auto"])
async def test_official_client_in_the_2026_era(mode: str) -> None:
    """SDK 2.3.0 pinned to 2026-07-28 (or probing with server/discover) lists and calls
    tools, mirrors x-mcp-header arguments into Mcp-Param headers that we check, and answers
    an InputRequiredResult with its elicitation callback."""

    async def elicit(context: Any, params: Any) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    app = StreamableHTTPServer(build_dual_server().serve)
    async with serving(app) as base:
        async with SdkClient(f"{base}/mcp", mode=mode, elicitation_callback=elicit) as client:
            assert client.protocol_version == MODERN
            tools = await client.list_tools()
            assert [t.name for t in tools.tools] == ["echo", "ask_name", "where"]
            where = await client.call_tool("where", {"region": "eu-west 1", "count": 3})
            assert where.content[0].text == "eu-west 1/3/None"
            unicode = await client.call_tool("where", {"region": "Zürich", "loud": True})
            assert unicode.content[0].text == "Zürich/None/True"
            hello = await client.call_tool("ask_name", {})
            assert hello.content[0].text == "hello Ada"
        assert app.sessions == {}  # no session was made for any of it


@pytest.mark.interop
async def test_official_client_in_the_handshake_era_keeps_sampling() -> None:
    """The same default server still serves a handshake-era session, sampling included."""

    async def sample(context: Any, params: Any) -> mcp_types.CreateMessageResult:
        return mcp_types.CreateMessageResult(
            role="assistant", content=mcp_types.TextContent(text="sampled"), model="m"
        )

    app = StreamableHTTPServer(build_dual_server().serve)
    async with (
        serving(app) as base,
        SdkClient(f"{base}/mcp", mode="legacy", sampling_callback=sample) as client,
    ):
        assert client.protocol_version == "2025-11-25"
        result = await client.call_tool("ask_llm", {})
        assert result.content[0].text == "llm: sampled"
        assert len(app.sessions) == 1


async def test_headers_are_checked_against_the_body() -> None:
    app = StreamableHTTPServer(build_dual_server().serve)
    async with serving(app) as base, httpx.AsyncClient() as http:
        url = f"{base}/mcp"

        async def post(body: Any, headers: Any) -> httpx.Response:
            return await http.post(url, json=body, headers=headers)

        async def refused(body: Any, headers: Any, code: int = -32020) -> None:
            response = await post(body, headers)
            assert response.status_code == 400, response.text
            error = response.json()
            assert error["id"] == body["id"] and error["error"]["code"] == code, error

        echo = modern_call(1, "echo", text="hi")
        ok = await post(echo, modern_headers(name="echo"))
        assert ok.status_code == 200 and answers(ok)[0]["result"]["content"][0]["text"] == "hi"
        assert "mcp-session-id" not in ok.headers
        spaced = [(k.encode(), f"  {v}\t".encode()) for k, v in modern_headers(name="echo").items()]
        status, _ = await raw_request(base, "POST", spaced, json.dumps(echo).encode())
        assert status == 200
        assert (await post(echo, modern_headers(name=b64("echo")))).status_code == 200
        no_version = modern_headers(name="echo")
        del no_version["mcp-protocol-version"]
        await refused(echo, no_version)
        await refused(echo, {**modern_headers(name="echo"), "mcp-protocol-version": "2025-11-25"})
        no_method = modern_headers(name="echo")
        del no_method["mcp-method"]
        await refused(echo, no_method)
        await refused(echo, modern_headers("Tools/call", name="echo"))
        await refused(echo, modern_headers("tools/list", name="echo"))
        await refused(echo, modern_headers())
        await refused(echo, modern_headers(name="ECHO"))
        await refused(echo, modern_headers(name="=?base64?!!!?="))
        twice = [*modern_headers(name="echo").items(), ("mcp-method", "tools/call")]
        await refused(echo, twice)
        read = {"jsonrpc": "2.0", "id": 2, "method": "resources/read",
                "params": {"uri": "test://x", "_meta": MODERN_META}}  # fmt: skip
        await refused(read, modern_headers("resources/read"))
        await refused(read, modern_headers("resources/read", name="test://y"))


async def test_mcp_param_headers_follow_the_tools_annotations() -> None:
    app = StreamableHTTPServer(build_dual_server().serve)
    async with serving(app) as base:
        call = modern_call(7, "where", region="Zürich", count=42, loud=False)

        def headers(**params: str) -> dict[str, str]:
            return modern_headers(name="where", **{f"mcp-param-{k}": v for k, v in params.items()})

        async def status(request_headers: dict[str, str], body: Any = call) -> tuple[int, Any]:
            raw = [(k.encode(), v.encode("latin-1")) for k, v in request_headers.items()]
            code, payload = await raw_request(base, "POST", raw, json.dumps(body).encode())
            return code, json.loads(payload)

        good = headers(region=b64("Zürich"), count="42", loud="false")
        assert (await status(good))[0] == 200
        assert (await status({**good, "mcp-param-count": "42.0"}))[0] == 200
        upper = {k.upper(): v for k, v in good.items()}
        assert (await status(upper))[0] == 200
        for bad in (
            headers(count="42", loud="false"),  # region missing
            headers(region="Zürich", count="42", loud="false"),  # raw non-ASCII
            headers(region=b64("Zurich"), count="42", loud="false"),
            headers(region="=?base64?WnVyaWNo?=", count="42", loud="false"),  # bad padding
            headers(region=b64("Zürich"), count="43", loud="false"),
            headers(region=b64("Zürich"), count="forty-two", loud="false"),
            headers(region=b64("Zürich"), count="42", loud="False"),
        ):
            code, body = await status(bad)
            assert code == 400 and body["error"]["code"] == -32020 and body["id"] == 7, body
        literal = modern_call(8, "where", region="=?base64?abc")
        assert (await status(modern_headers(name="where", **{"mcp-param-region": "=?base64?abc"}),
                             literal))[0] == 200  # fmt: skip
        absent = modern_call(9, "where", region="x")
        assert (await status(modern_headers(name="where", **{"mcp-param-region": "x"}), absent))[
            0
        ] == 200


async def test_versions_methods_and_statuses() -> None:
    app = StreamableHTTPServer(build_dual_server().serve)
    async with serving(app) as base, httpx.AsyncClient() as http:
        url = f"{base}/mcp"
        for version in ("2099-01-01", "v999.0.0"):
            meta = {**MODERN_META, "io.modelcontextprotocol/protocolVersion": version}
            body = {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "server/discover",
                "params": {"_meta": meta},
            }
            response = await http.post(
                url, json=body,
                headers=modern_headers("server/discover", **{"mcp-protocol-version": version}),
            )  # fmt: skip
            error = response.json()
            assert response.status_code == 400 and error["id"] == 3, error
            assert error["error"]["code"] == -32022
            assert MODERN in error["error"]["data"]["supported"]
            assert error["error"]["data"]["requested"] == version
        handshake_era = await http.post(
            url, json={"jsonrpc": "2.0", "id": 4, "method": "ping"},
            headers={**ACCEPT_BOTH, "mcp-protocol-version": "1999-01-01"},
        )  # fmt: skip
        assert handshake_era.status_code == 400
        assert handshake_era.json()["error"]["code"] == -32022
        no_meta = await http.post(
            url, json={"jsonrpc": "2.0", "id": 5, "method": "tools/list"},
            headers=modern_headers("tools/list"),
        )  # fmt: skip
        assert no_meta.status_code == 400
        assert (
            no_meta.json() == {**no_meta.json(), "id": 5}
            and no_meta.json()["error"]["code"] == -32602
        )
        for method in ("nope/nothing", "initialize", "ping", "logging/setLevel"):
            body = {"jsonrpc": "2.0", "id": 6, "method": method, "params": {"_meta": MODERN_META}}
            response = await http.post(url, json=body, headers=modern_headers(method))
            assert response.status_code == 404, (method, response.text)
            assert response.json()["error"]["code"] == -32601 and response.json()["id"] == 6
        batch = [modern_call(1, "echo"), modern_call(2, "echo")]
        refused = await http.post(url, json=batch, headers=modern_headers(name="echo"))
        assert refused.status_code == 400 and refused.json()["error"]["code"] == -32600
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        assert (await http.post(url, json=note, headers=modern_headers())).status_code == 202
        for verb in ("GET", "DELETE"):
            for headers in (modern_headers(), {"accept": "text/event-stream"}):
                response = await http.request(verb, url, headers=headers)
                assert response.status_code == 405 and response.headers["allow"] == "POST"
        assert (await http.put(url, headers=modern_headers())).status_code == 405
        assert app.sessions == {}


async def test_accept_leniency_and_listen_needs_sse() -> None:
    """Clients must accept both types; one that accepts just one gets that one (a correct
    answer it can read beats a 406), except that a listen stream can only be SSE."""
    app = StreamableHTTPServer(build_dual_server().serve)
    async with serving(app) as base, httpx.AsyncClient() as http:
        url = f"{base}/mcp"
        call = modern_call(1, "echo", text="x")
        json_only = modern_headers(name="echo", accept="application/json")
        response = await http.post(url, json=call, headers=json_only)
        assert response.headers["content-type"] == "application/json"
        sse_only = modern_headers(name="echo", accept="text/event-stream")
        streamed = await http.post(url, json=call, headers=sse_only)
        assert streamed.headers["content-type"].startswith("text/event-stream")
        assert answers(streamed)[0]["result"]["content"][0]["text"] == "x"
        assert "id:" not in streamed.text  # not resumable in this era: no event ids
        listen = {"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen",
                  "params": {"notifications": {}, "_meta": MODERN_META}}  # fmt: skip
        refused = await http.post(
            url,
            json=listen,
            headers=modern_headers("subscriptions/listen", accept="application/json"),
        )
        assert refused.status_code == 406


async def test_closing_the_stream_cancels_a_2026_request_only() -> None:
    cancelled: list[str] = []
    app = StreamableHTTPServer(build_dual_server(cancelled).serve, sse_keepalive=0.1)
    async with serving(app) as base, httpx.AsyncClient() as http:
        url = f"{base}/mcp"
        call = modern_call(1, "sleep", seconds=30)
        async with http.stream("POST", url, json=call, headers=modern_headers(name="sleep")) as r:
            assert r.headers["content-type"].startswith("text/event-stream")
            async for line in r.aiter_lines():
                if line.startswith(":"):
                    break  # a keep-alive came: the request is running
        with anyio.fail_after(10):
            while cancelled != ["sleep"]:
                await anyio.sleep(0.02)


async def test_listen_stream_stays_open_with_keepalives_until_closed() -> None:
    cancelled: list[str] = []
    app = StreamableHTTPServer(build_dual_server(cancelled).serve, sse_keepalive=0.1)
    async with serving(app) as base, httpx.AsyncClient() as http:
        listen = {"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
                  "params": {"notifications": {"toolsListChanged": True}, "_meta": MODERN_META}}  # fmt: skip
        lines: list[str] = []
        headers = modern_headers("subscriptions/listen", accept="application/json")
        headers["accept"] = "application/json, text/event-stream"
        async with http.stream("POST", f"{base}/mcp", json=listen, headers=headers) as response:
            async for line in response.aiter_lines():
                lines.append(line)
                if sum(1 for seen in lines if seen.startswith(":")) >= 2:
                    break
        data = [line for line in lines if line.startswith("data: ")]
        assert "notifications/subscriptions/acknowledged" in data[0]
        assert not any('"result"' in line for line in data)
        with anyio.fail_after(10):
            while cancelled != ["listen"]:
                await anyio.sleep(0.02)


async def test_batches_go_with_the_revision() -> None:
    """Batching left MCP in 2025-06-18: refused from then on, served before."""
    app = StreamableHTTPServer(build_dual_server().serve)
    ping = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    ]
    async with serving(app) as base, httpx.AsyncClient() as http:
        url = f"{base}/mcp"
        for version, allowed in (
            ("2025-11-25", False),
            ("2025-06-18", False),
            ("2025-03-26", True),
        ):
            init = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": version}}
            opened = await http.post(url, json=init, headers=ACCEPT_BOTH)
            headers = {**ACCEPT_BOTH, "mcp-session-id": opened.headers["mcp-session-id"]}
            if version != "2025-03-26":
                headers["mcp-protocol-version"] = version
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(url, json=note, headers=headers)
            response = await http.post(url, json=ping, headers=headers)
            if allowed:
                assert response.status_code == 200 and len(answers(response)) == 2
            else:
                assert response.status_code == 400 and response.json()["error"]["code"] == -32600


async def test_peer_supplied_names_are_escaped_in_log_lines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = StreamableHTTPServer(build_dual_server().serve)
    caplog.set_level(logging.INFO, logger="mcpbind.runtime.http")
    async with serving(app) as base, httpx.AsyncClient() as http:
        body = modern_call(1, "echo")
        body["method"] = "tools/call\nINFO forged line"
        response = await http.post(f"{base}/mcp", json=body, headers=modern_headers(name="echo"))
        assert response.status_code == 400
    refusals = [
        r
        for r in caplog.records
        if r.name == "mcpbind.runtime.http" and "refused" in r.getMessage()
    ]
    assert refusals, caplog.text
    for record in refusals:
        line = record.getMessage()
        assert "\n" not in line and "\r" not in line
        assert "tools/call\\nINFO forged line" in line


async def test_odd_bodies_are_refused_with_a_400() -> None:
    app = StreamableHTTPServer(build_dual_server().serve)
    async with serving(app) as base, httpx.AsyncClient() as http:
        url = f"{base}/mcp"
        for params in ([1, 2], None, "x", {"name": 5, "_meta": MODERN_META}):
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            if params is None:
                del body["params"]
            response = await http.post(url, json=body, headers=modern_headers(name="echo"))
            assert response.status_code == 400, (params, response.text)
            assert response.json()["error"]["code"] in (-32602, -32600, -32020), response.text


async def test_a_tool_added_later_has_its_headers_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The annotations are learnt from the server's own tools/list, and learnt again when a
    call names a tool the cached list lacks (at most once a second: here, at once)."""
    from mcpbind.generated.v2026_07_28 import methods as modern
    from mcpbind.runtime import RequestContext, Server
    from mcpbind.runtime.transports.http import _tool_headers

    monkeypatch.setattr(_tool_headers, "REFRESH_GAP", 0.0)

    server = Server("growing")
    tools: list[dict[str, Any]] = [{"name": "a", "inputSchema": {"type": "object"}}]

    @server.handler(modern.TOOLS_LIST)
    async def list_tools(params: Any, context: RequestContext) -> Any:
        return {"tools": tools, "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}

    @server.handler(modern.TOOLS_CALL)
    async def call_tool(params: Any, context: RequestContext) -> Any:
        return {"content": [{"type": "text", "text": params.name}], "resultType": "complete"}

    app = StreamableHTTPServer(server.serve)
    async with serving(app) as base, httpx.AsyncClient() as http:
        url = f"{base}/mcp"
        first = await http.post(url, json=modern_call(1, "a"), headers=modern_headers(name="a"))
        assert first.status_code == 200
        annotated = {"type": "string", "x-mcp-header": "Zone"}
        tools.append(
            {"name": "b", "inputSchema": {"type": "object", "properties": {"zone": annotated}}}
        )
        call = modern_call(2, "b", zone="z1")
        missing = await http.post(url, json=call, headers=modern_headers(name="b"))
        assert missing.status_code == 400 and missing.json()["error"]["code"] == -32020
        sent = modern_headers(name="b", **{"mcp-param-zone": "z1"})
        assert (await http.post(url, json=call, headers=sent)).status_code == 200
