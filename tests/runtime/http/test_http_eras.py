"""Both eras at once on one default Streamable HTTP endpoint, with our own client, over a real
uvicorn on 127.0.0.1.

Every revision negotiates what it asked for; the example server's tools that ask the client
(sampling, elicitation, roots) answer a 2026-07-28 client (by input-required rounds) and a
2025-11-25 client (by requests on the POST's stream) from the same handlers; a 2026-07-28
client's ``listen()`` gets the list changes the server raises while a handshake-era session of
the same server gets them too.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from mcpbind import generated
from mcpbind.generated import v2025_11_25
from mcpbind.runtime import Client, RequestContext, Server
from mcpbind.runtime.http import StreamableHTTPServer, serving, streamable_http_client
from runtime_helpers import answering_client, ask_example_tools

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "server.py"


def example_server() -> Server:
    """``examples/server.py``'s server object, as a user would import it to serve it over HTTP."""
    spec = importlib.util.spec_from_file_location("example_server_for_http", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    server = module.server
    assert isinstance(server, Server)
    return server


@pytest.mark.parametrize("version", generated.REVISIONS)
async def test_our_client_gets_every_revision_from_one_default_endpoint(version: str) -> None:
    app = StreamableHTTPServer(example_server().serve)
    async with (
        serving(app) as base,
        Client(streamable_http_client(f"{base}/mcp"), protocol_version=version) as client,
    ):
        assert client.revision == version
        assert client.session.peer.era == (
            "stateless" if generated.ERAS[version] == "stateless" else None
        )
        result = await client.send_request(
            client.session.bindings.methods["tools/call"],
            {"name": "echo", "arguments": {"text": version}},
        )
        assert result.content[0].text == version


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_the_example_tools_ask_our_client_over_http_in_both_eras(version: str) -> None:
    app = StreamableHTTPServer(example_server().serve)
    async with serving(app) as base:
        client, asked = answering_client(streamable_http_client(f"{base}/mcp"), version)
        async with client:
            assert client.revision == version
            texts = await ask_example_tools(client, version)
    assert texts == ["the LLM said: Paris", "hello, Ada", "file:///project"]
    assert asked == ["sampling", "elicitation", "roots"]


def changing_server() -> Server:
    server = Server("changes", "1.0", capabilities={"tools": {"listChanged": True}})

    @server.handler(v2025_11_25.methods.TOOLS_CALL)
    async def call_tool(params: Any, context: RequestContext) -> Any:
        await server.notify_tools_changed()
        return v2025_11_25.types.CallToolResult(content=[v2025_11_25.types.TextContent(text="ok")])

    return server


async def test_listen_over_http_gets_changes_raised_for_both_eras() -> None:
    server = changing_server()
    async with serving(StreamableHTTPServer(server.serve)) as base:
        url = f"{base}/mcp"
        old = Client(streamable_http_client(url), protocol_version="2025-11-25")
        seen_by_old: list[str] = []

        @old.notification_handler(v2025_11_25.methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)
        async def changed(params: Any, session: Any) -> None:
            seen_by_old.append("tools/list_changed")

        new = Client(streamable_http_client(url), protocol_version="2026-07-28")
        async with new, old:
            assert (new.revision, old.revision) == ("2026-07-28", "2025-11-25")
            async with new.listen(tools_list_changed=True) as notifications:
                assert notifications.acknowledged["toolsListChanged"] is True
                await old.stub.call_tool(v2025_11_25.types.CallToolRequestParams(name="x"))
                with anyio.fail_after(10):
                    first = await notifications.__aiter__().__anext__()
                assert first.method == "notifications/tools/list_changed"
            with anyio.fail_after(10):
                while not seen_by_old:
                    await anyio.sleep(0.02)
    assert seen_by_old == ["tools/list_changed"]


async def test_listen_streams_end_gracefully_when_serving_ends() -> None:
    """Graceful Closure (subscriptions.md): when ``serving()`` shuts the server down, an open
    listen stream gets its ``complete`` answer first, so the client's iteration just ends."""
    server = changing_server()
    stop = anyio.Event()

    async def serve(*, task_status: anyio.abc.TaskStatus[str]) -> None:
        async with serving(StreamableHTTPServer(server.serve)) as base:
            task_status.started(base)
            await stop.wait()

    async with anyio.create_task_group() as tg:
        base = await tg.start(serve)
        client = Client(streamable_http_client(f"{base}/mcp"), protocol_version="2026-07-28")
        async with client, client.listen(tools_list_changed=True) as notifications:
            stop.set()  # the server shuts down while the stream is open
            with anyio.fail_after(10):
                left = [n async for n in notifications]
            assert left == []
            assert notifications.error is None
