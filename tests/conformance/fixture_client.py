"""The client the official conformance suite tests: our ``Client`` over our Streamable HTTP.

The suite runs ``python fixture_client.py <url>`` with the scenario's name in
``MCP_CONFORMANCE_SCENARIO`` and judges what the client does against its mock server. Each
scenario gets the behaviour it checks; an unknown one just initialises and lists tools.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import anyio
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, RequestContext
from mcpbind.runtime.http import streamable_http_client

#: Bounds the whole run, so a misbehaving mock server cannot hang the suite.
DEADLINE = 25.0


def schema_defaults(schema: Any) -> dict[str, Any]:
    """What a user accepting a form without touching it submits: every field's default."""
    properties = getattr(schema, "properties", None) or {}
    out: dict[str, Any] = {}
    for name, prop in properties.items():
        raw = prop.model_dump(by_alias=True) if hasattr(prop, "model_dump") else prop
        if isinstance(raw, dict) and raw.get("default") is not None:
            out[name] = raw["default"]
    return out


def build_client(url: str) -> Client:
    client = Client(
        streamable_http_client(url, timeout=10.0, sse_read_timeout=20.0),
        name="mcpbind-conformance-client",
        capabilities={"elicitation": {"form": {}}, "sampling": {}},
    )

    @client.handler(methods.ELICITATION_CREATE)
    async def elicit(params: Any, context: RequestContext) -> types.ElicitResult:
        return types.ElicitResult(
            action="accept", content=schema_defaults(getattr(params, "requestedSchema", None))
        )

    @client.handler(methods.SAMPLING_CREATEMESSAGE)
    async def sample(
        params: types.CreateMessageRequestParams, context: RequestContext
    ) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", model="mcpbind-test", content=types.TextContent(text="ok")
        )

    return client


async def run(scenario: str, url: str) -> None:
    async with build_client(url) as client:
        stub = client.stub
        if "tools" not in client.server_capabilities:
            return
        tools = await stub.list_tools()
        names = {tool.name for tool in tools.tools}
        if scenario == "tools_call":
            await stub.call_tool(
                types.CallToolRequestParams(name="add_numbers", arguments={"a": 5, "b": 3})
            )
        elif scenario == "elicitation-sep1034-client-defaults":
            await stub.call_tool(
                types.CallToolRequestParams(name="test_client_elicitation_defaults")
            )
        elif scenario == "json-schema-2020-12-preservation":
            focal = next(t for t in tools.tools if t.name == "json_schema_2020_12_tool")
            schema = focal.inputSchema.model_dump(mode="json", by_alias=True, exclude_none=True)
            await stub.call_tool(
                types.CallToolRequestParams(name="json_schema_echo", arguments={"schema": schema})
            )
        elif scenario == "sse-retry" and "test_reconnection" in names:
            await stub.call_tool(types.CallToolRequestParams(name="test_reconnection"))


def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    url = sys.argv[-1]

    async def bounded() -> None:
        with anyio.fail_after(DEADLINE):
            await run(scenario, url)

    anyio.run(bounded)
    return 0


if __name__ == "__main__":
    sys.exit(main())
