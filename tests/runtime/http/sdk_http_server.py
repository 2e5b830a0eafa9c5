"""A server on the official Python SDK 2.3.0 over Streamable HTTP, run as a real process.

``python sdk_http_server.py [--legacy-only]`` prints its MCP endpoint URL on stdout, then serves
until killed (``--stdio``: the same server over stdio). The SDK's ``streamable_http_app`` is dual-era: a POST whose
``MCP-Protocol-Version`` names 2026-07-28 is served statelessly, anything else by the handshake.
``--legacy-only`` refuses the stateless era the way a handshake-only server does (an ASGI
filter answering 400 without a JSON-RPC body to any request that carries that header), for the
fallback tests.

Tools: ``echo``; ``where`` (its ``region`` parameter is mirrored into ``Mcp-Param-Region``,
which the SDK checks against the body); ``ask_name`` (an input-required round: elicits a
name, then greets it, echoing its ``requestState``); ``touch`` (publishes a tools-list change
and an update of the resource it is given, to ``subscriptions/listen`` streams).
"""

from __future__ import annotations

import argparse
from typing import Annotated, Any

import anyio
import mcp_types
from mcp.server.mcpserver import Context, MCPServer
from mcpbind.runtime.http import serving
from pydantic import Field

server = MCPServer("sdk-http-peer")


@server.tool()
def echo(text: str) -> str:
    """Return the text it is given."""
    return text


@server.tool()
def where(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], text: str
) -> str:
    """Say which region was asked for (the SDK has checked Mcp-Param-Region against it)."""
    return f"{text} in {region}"


@server.tool()
async def ask_name(ctx: Context) -> Any:  # type: ignore[type-arg]
    """Ask the client for a name, then greet it."""
    responses = ctx.input_responses
    if not responses:
        request = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(
                message="Your name?",
                requested_schema={
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                },
            )
        )
        return mcp_types.InputRequiredResult(input_requests={"name": request}, request_state="s1")
    answer = responses["name"]
    content = getattr(answer, "content", None) or {}
    return f"hello {content.get('name')} (state {ctx.request_state})"


@server.tool()
async def touch(uri: str, ctx: Context) -> str:  # type: ignore[type-arg]
    """Publish a tools-list change and an update of ``uri`` to listen streams."""
    await ctx.notify_tools_changed()
    await ctx.notify_resource_updated(uri)
    return "touched"


@server.resource("memo://readme")
def readme() -> str:
    """A fixed text."""
    return "hello from the SDK"


def legacy_only(app: Any) -> Any:
    """``app`` refusing stateless-era requests with a bare 400, as a handshake-only server."""

    async def filtered(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if headers.get(b"mcp-protocol-version", b"").startswith(b"2026"):
                await send({"type": "http.response.start", "status": 400, "headers": []})
                await send({"type": "http.response.body", "body": b"Bad Request"})
                return
        await app(scope, receive, send)

    return filtered


async def main(legacy: bool) -> None:
    app = server.streamable_http_app()
    async with serving(legacy_only(app) if legacy else app) as url:
        print(f"{url}/mcp", flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--legacy-only", action="store_true")
    parser.add_argument("--stdio", action="store_true", help="serve over stdio instead")
    args = parser.parse_args()
    if args.stdio:
        server.run()
    else:
        anyio.run(main, args.legacy_only)
