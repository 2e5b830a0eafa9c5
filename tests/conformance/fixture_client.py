"""The client the official conformance suite tests: our ``Client`` over our Streamable HTTP.

The suite runs ``python fixture_client.py <url>`` with the scenario's name in
``MCP_CONFORMANCE_SCENARIO``, the revision to speak in ``MCP_CONFORMANCE_PROTOCOL_VERSION``
(a stateless-era one, 2026-07-28, means ``server/discover`` and per-request ``_meta``; an
earlier one the ``initialize`` handshake) and, for some scenarios, what to do in
``MCP_CONFORMANCE_CONTEXT`` (JSON). It judges what the client does against its mock server.
Each scenario gets the behaviour it checks; an unknown one just lists tools.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from types import ModuleType
from typing import Any

import anyio
from fixture_auth import make_auth
from fixture_skills import run_skills
from mcpbind import generated
from mcpbind.generated import v2025_11_25, v2026_07_28
from mcpbind.runtime import Client, HandshakeClient, RequestContext, StatelessClient
from mcpbind.runtime.http import streamable_http_client

#: Bounds the whole run, so a misbehaving mock server cannot hang the suite (the suite's own
#: limit is its --timeout, 30 s by default; the tests pass 60 s, as the SDK's CI does).
DEADLINE = 50.0
DEFAULT_VERSION = "2025-11-25"
#: The tools of the MRTR scenario, in the order the suite expects them called.
MRTR_TOOLS = (
    "test_mrtr_echo_state",
    "test_mrtr_no_state",
    "test_mrtr_unrelated",
    "test_mrtr_no_result_type",
)


def schema_defaults(schema: Any) -> dict[str, Any]:
    """What a user accepting a form without touching it submits: every field's default."""
    properties = getattr(schema, "properties", None) or {}
    out: dict[str, Any] = {}
    for name, prop in properties.items():
        raw = prop.model_dump(by_alias=True) if hasattr(prop, "model_dump") else prop
        if isinstance(raw, dict) and raw.get("default") is not None:
            out[name] = raw["default"]
    return out


def sample_arguments(tool: Any) -> dict[str, Any]:
    """Arguments for a tool the scenario only wants called: a plain value per required field."""
    schema = tool.inputSchema.model_dump(mode="json", by_alias=True, exclude_none=True)
    values = {"string": "us-west1", "integer": 1, "boolean": True, "number": 1.5}
    properties = schema.get("properties") or {}
    return {
        name: values.get(properties.get(name, {}).get("type"), "x")
        for name in schema.get("required") or []
    }


def build_client(url: str, version: str, auth: Any = None) -> Client:
    lifecycle = None
    if auth is not None and generated.ERAS[version] == "stateless":
        # The suite's OAuth mocks are handshake-era servers, and the whole authorization runs
        # inside the first request: probe with server/discover, fall back, and give the probe
        # the time the authorization takes on a loaded machine.
        lifecycle = StatelessClient(version, [version], HandshakeClient(), probe_timeout=DEADLINE)
    client = Client(
        streamable_http_client(url, timeout=10.0, sse_read_timeout=20.0, auth=auth),
        name="mcpbind-conformance-client",
        protocol_version=version,
        capabilities={"elicitation": {"form": {}}, "sampling": {}},
        lifecycle=lifecycle,
    )
    for module in (v2025_11_25, v2026_07_28):
        register_handlers(client, module)
    return client


def register_handlers(client: Client, module: ModuleType) -> None:
    types = module.types

    @client.handler(module.methods.ELICITATION_CREATE)
    async def elicit(params: Any, context: RequestContext) -> Any:
        return types.ElicitResult(
            action="accept", content=schema_defaults(getattr(params, "requestedSchema", None))
        )

    @client.handler(module.methods.SAMPLING_CREATEMESSAGE)
    async def sample(params: Any, context: RequestContext) -> Any:
        return types.CreateMessageResult(
            role="assistant", model="mcpbind-test", content=types.TextContent(text="ok")
        )


async def run(scenario: str, url: str, version: str, context: dict[str, Any]) -> None:
    async with build_client(url, version, make_auth(scenario, url, context)) as client:
        if scenario.startswith("sep-2640-"):
            await run_skills(client, scenario)
            return
        module = client.session.bindings.module
        types, methods = module.types, module.methods
        stub = client.stub
        capabilities = client.server_capabilities
        if "tools" not in capabilities:
            return

        async def call(name: str, arguments: dict[str, Any] | None = None) -> Any:
            given = {"arguments": arguments} if arguments is not None else {}
            return await stub.call_tool(types.CallToolRequestParams(name=name, **given))

        tools = await client.list_all(methods.TOOLS_LIST)
        names = {tool.name for tool in tools}
        if scenario == "tools_call":
            await call("add_numbers", {"a": 5, "b": 3})
        elif scenario == "elicitation-sep1034-client-defaults":
            await call("test_client_elicitation_defaults")
        elif scenario == "json-schema-2020-12-preservation":
            focal = next(t for t in tools if t.name == "json_schema_2020_12_tool")
            schema = focal.inputSchema.model_dump(mode="json", by_alias=True, exclude_none=True)
            await call("json_schema_echo", {"schema": schema})
        elif scenario == "sse-retry" and "test_reconnection" in names:
            await call("test_reconnection")
        elif scenario == "sep-2322-client-request-state":
            for name in MRTR_TOOLS:
                await call(name)
        elif scenario == "http-standard-headers":
            for tool in tools:
                await call(tool.name)
            if "resources" in capabilities:
                for resource in await client.list_all(methods.RESOURCES_LIST):
                    await stub.read_resource(types.ReadResourceRequestParams(uri=resource.uri))
            if "prompts" in capabilities:
                for prompt in await client.list_all(methods.PROMPTS_LIST):
                    await stub.get_prompt(types.GetPromptRequestParams(name=prompt.name))
        elif scenario == "http-custom-headers":
            for planned in context.get("toolCalls", []):
                await call(planned["name"], planned.get("arguments"))
        elif scenario.startswith("auth/") and tools:
            await call(tools[0].name, {})
        elif scenario == "http-invalid-tool-headers":
            for tool in tools:
                await call(tool.name, sample_arguments(tool))


def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", DEFAULT_VERSION)
    if version not in generated.ERAS:
        version = DEFAULT_VERSION
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    url = sys.argv[-1]

    async def bounded() -> None:
        with anyio.fail_after(DEADLINE):
            await run(scenario, url, version, context)

    anyio.run(bounded)
    return 0


if __name__ == "__main__":
    sys.exit(main())
