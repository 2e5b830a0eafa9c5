"""OpenTelemetry (``mcpbind.runtime.telemetry.instrument``): a client call and the server's
handling form one trace over stdio (server in a subprocess), Streamable HTTP and memory, in both
eras; the spans carry the MCP attributes and an error status for a failing tool; trace context
goes back to the client in a server's request during a tool call; nothing is imported, or
changed, for a program that does not instrument."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcpbind.generated import v2025_11_25, v2026_07_28
from mcpbind.runtime import (
    CallNext,
    Client,
    IncomingCall,
    McpError,
    RequestContext,
    StdioParameters,
)
from mcpbind.runtime.app import App
from mcpbind.runtime.http import serving, streamable_http_client
from mcpbind.runtime.tasks import ExtensionTaskHandle
from mcpbind.runtime.telemetry import instrument
from opentelemetry import baggage, context as otel_context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from runtime_helpers import RawPeer
from telemetry_app import build, record

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

STATELESS = "2026-07-28"
APP_SCRIPT = str(Path(__file__).with_name("telemetry_app.py"))
ROOT = Path(__file__).resolve().parents[2]


def collector() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def sampling_client(client: Client, version: str) -> Client:
    types: Any = (v2026_07_28 if version == STATELESS else v2025_11_25).types

    @client.handler(
        (v2026_07_28 if version == STATELESS else v2025_11_25).methods.SAMPLING_CREATEMESSAGE
    )
    async def sample(params: Any, context: RequestContext) -> Any:
        return types.CreateMessageResult(
            role="assistant", model="m", content=types.TextContent(text="Paris")
        )

    return client


async def calls(client: Client) -> dict[str, Any]:
    if client.revision != STATELESS:
        await client.ping()
    echoed = await client.call_tool("echo", {"text": "hi"})
    failed = await client.call_tool("fail", {})
    asked = await client.call_tool("ask", {})
    await client.get_prompt("greeting")
    with pytest.raises(McpError) as unknown:
        await client.read_resource("nowhere://at-all")
    return {"echoed": echoed, "failed": failed, "asked": asked, "unknown": unknown.value}


def one(spans: list[dict[str, Any]], name: str, kind: str) -> dict[str, Any]:
    found = [s for s in spans if s["name"] == name and s["kind"] == kind]
    assert len(found) == 1, (name, kind, [(s["name"], s["kind"]) for s in spans])
    return found[0]


def check(
    client_spans: list[dict[str, Any]], server_spans: list[dict[str, Any]], version: str
) -> None:
    # One CLIENT span per request the client sent, the lifecycle's own ``initialize`` or
    # ``server/discover`` first, each the parent of the server's SERVER span for it.
    opening = "server/discover" if version == STATELESS else "initialize"
    assert sorted(s["name"] for s in client_spans if s["kind"] == "CLIENT") == sorted(
        [
            opening,
            *(["ping"] if version != STATELESS else []),
            "prompts/get greeting",
            "resources/read nowhere://at-all",
            "tools/call ask",
            "tools/call echo",
            "tools/call fail",
        ]
    )
    opened = one(client_spans, opening, "CLIENT")
    assert opened["parent_id"] is None and opened["status"] == "UNSET"
    assert opened["attributes"] == {"mcp.method.name": opening, "mcp.protocol.version": version}
    served = one(server_spans, opening, "SERVER")
    assert (served["trace_id"], served["parent_id"]) == (opened["trace_id"], opened["span_id"])
    if version != STATELESS:
        ping = one(client_spans, "ping", "CLIENT")
        assert one(server_spans, "ping", "SERVER")["parent_id"] == ping["span_id"]
    for name in ("tools/call echo", "tools/call fail", "tools/call ask"):
        client = one(client_spans, name, "CLIENT")
        server = [s for s in server_spans if s["name"] == name and s["kind"] == "SERVER"]
        # A stateless-era ``ask`` takes two rounds (the input request, then its answer): each
        # is a child of the one client call.
        assert len(server) == (2 if name == "tools/call ask" and version == STATELESS else 1)
        for span in server:
            assert span["trace_id"] == client["trace_id"]
            assert span["parent_id"] == client["span_id"]
            attributes = span["attributes"]
            assert attributes["mcp.method.name"] == "tools/call"
            assert attributes["gen_ai.tool.name"] == name.split()[1]
            assert attributes["gen_ai.operation.name"] == "execute_tool"
            assert attributes["mcp.protocol.version"] == version
            assert attributes["jsonrpc.request.id"]
        assert client["attributes"]["gen_ai.tool.name"] == name.split()[1]
        assert client["attributes"]["mcp.protocol.version"] == version
    for kind, spans in (("CLIENT", client_spans), ("SERVER", server_spans)):
        assert one(spans, "tools/call echo", kind)["status"] == "UNSET"
        failed = one(spans, "tools/call fail", kind)
        assert failed["status"] == "ERROR"
        assert failed["attributes"]["error.type"] == "tool_error"
        prompt = one(spans, "prompts/get greeting", kind)
        assert prompt["attributes"]["gen_ai.prompt.name"] == "greeting"
        unknown = one(spans, "resources/read nowhere://at-all", kind)
        assert unknown["status"] == "ERROR"
        assert unknown["attributes"]["mcp.resource.uri"] == "nowhere://at-all"
        assert (
            unknown["attributes"]["rpc.response.status_code"] == unknown["attributes"]["error.type"]
        )
    if version != STATELESS:
        # The server's sampling request during ``ask`` has a CLIENT span on the server's side,
        # a child of the tool call's SERVER span; the client's handling of it is a child of
        # that CLIENT span: all one trace, the client's call at its root.
        ask = one(server_spans, "tools/call ask", "SERVER")
        asking = one(server_spans, "sampling/createMessage", "CLIENT")
        assert (asking["trace_id"], asking["parent_id"]) == (ask["trace_id"], ask["span_id"])
        assert asking["attributes"]["mcp.method.name"] == "sampling/createMessage"
        assert asking["attributes"]["mcp.protocol.version"] == version
        assert asking["status"] == "UNSET"
        sampled = one(client_spans, "sampling/createMessage", "SERVER")
        assert (sampled["trace_id"], sampled["parent_id"]) == (
            asking["trace_id"],
            asking["span_id"],
        )
        call = one(client_spans, "tools/call ask", "CLIENT")
        assert (ask["trace_id"], ask["parent_id"]) == (call["trace_id"], call["span_id"])


def results_hold(seen: dict[str, Any]) -> None:
    assert seen["echoed"].content[0].text == "hi"
    assert seen["failed"].isError is True
    assert seen["asked"].content[0].text == "the model said: Paris"


@pytest.mark.parametrize("version", ["2025-11-25", STATELESS])
async def test_one_trace_over_stdio(version: str, tmp_path: Path) -> None:
    spans_file = tmp_path / "spans.jsonl"
    provider, exporter = collector()
    client = sampling_client(
        Client(
            StdioParameters(sys.executable, [APP_SCRIPT, str(spans_file)]), protocol_version=version
        ),
        version,
    )
    instrument(client, tracer_provider=provider)
    async with client:
        seen = await calls(client)
    results_hold(seen)
    server_spans = [json.loads(line) for line in spans_file.read_text().splitlines()]
    check([record(s) for s in exporter.get_finished_spans()], server_spans, version)


@pytest.mark.parametrize("version", ["2025-11-25", STATELESS])
async def test_one_trace_over_streamable_http(version: str) -> None:
    server_provider, server_exporter = collector()
    client_provider, client_exporter = collector()
    app = build(server_provider)
    async with serving(app.http_app()) as url:
        client = sampling_client(
            Client(streamable_http_client(f"{url}/mcp"), protocol_version=version), version
        )
        instrument(client, tracer_provider=client_provider)
        async with client:
            seen = await calls(client)
    results_hold(seen)
    server_spans = [record(s) for s in server_exporter.get_finished_spans()]
    check([record(s) for s in client_exporter.get_finished_spans()], server_spans, version)
    if version != STATELESS:
        session_ids = {
            s["attributes"].get("mcp.session.id") for s in server_spans if s["kind"] == "SERVER"
        }
        assert len(session_ids) == 1 and None not in session_ids


async def test_one_trace_in_memory() -> None:
    provider, exporter = collector()
    app = build(provider)
    client = sampling_client(Client(app.memory_transport()), "2025-11-25")
    instrument(client, tracer_provider=provider)
    instrument(client, tracer_provider=provider)  # a second time changes nothing
    async with client:
        seen = await calls(client)
    results_hold(seen)
    spans = [record(s) for s in exporter.get_finished_spans()]
    # One provider for both sides: the client's are its CLIENT spans but the server's sampling
    # request, and its SERVER span for that request.
    check(
        [s for s in spans if (s["kind"] == "CLIENT") != s["name"].startswith("sampling")],
        spans,
        "2025-11-25",
    )


async def test_the_tasks_extension_s_requests_have_a_span_each() -> None:
    """The 2026-07-28 tasks extension's ``tools/call`` (answered with a task) and the
    handle's ``tasks/get``, sent untyped past ``send_request``: one CLIENT span each, with the
    attributes of the others, the parent of the server's span."""
    provider, exporter = collector()
    app = App("tasks-traced")

    @app.tool(task_support="optional")
    async def slow(seconds: float) -> str:
        """Sleep a little, as a task."""
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    instrument(app.server, tracer_provider=provider)
    client = Client(app.memory_transport(), protocol_version=STATELESS)
    instrument(client, tracer_provider=provider)
    async with client:
        handle = await client.call_tool_as_task("slow", {"seconds": 0.2})
        assert isinstance(handle, ExtensionTaskHandle) and handle.task is not None
        assert (await handle.result()).content[0].text == "slept 0.2"
    spans = [record(s) for s in exporter.get_finished_spans()]
    names = [s["name"] for s in spans if s["kind"] == "CLIENT"]
    assert names.count("server/discover") == 1 and names.count("tools/call slow") == 1
    assert names.count("tasks/get") >= 1 and set(names) == {
        "server/discover",
        "tools/call slow",
        "tasks/get",
    }
    call = one(spans, "tools/call slow", "CLIENT")
    assert call["attributes"] == {
        "mcp.method.name": "tools/call",
        "mcp.protocol.version": STATELESS,
        "gen_ai.tool.name": "slow",
        "gen_ai.operation.name": "execute_tool",
    }
    served = one(spans, "tools/call slow", "SERVER")
    assert (served["trace_id"], served["parent_id"]) == (call["trace_id"], call["span_id"])
    polls = {s["span_id"] for s in spans if s["name"] == "tasks/get" and s["kind"] == "CLIENT"}
    served_polls = [s for s in spans if s["name"] == "tasks/get" and s["kind"] == "SERVER"]
    assert served_polls and all(s["parent_id"] in polls for s in served_polls)


async def test_a_bad_traceparent_starts_a_new_trace() -> None:
    provider, exporter = collector()
    app = build(provider)
    async with app.memory_transport() as connection:
        peer = RawPeer(connection)
        await peer.request(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        answers = []
        for request_id, meta in (
            (2, {"traceparent": 5}),
            (3, {"traceparent": "00-zz-bad-01"}),
            (4, None),
        ):
            params: dict[str, Any] = {"name": "echo", "arguments": {"text": "x"}}
            if meta is not None:
                params["_meta"] = meta
            answers.append(
                await peer.request(
                    {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
                )
            )
    assert [a["result"]["content"][0]["text"] for a in answers] == ["x", "x", "x"]
    spans = [record(s) for s in exporter.get_finished_spans() if s.name == "tools/call echo"]
    # Each a root of its own trace: not the child of whatever span the serving task had.
    assert len(spans) == 3 and all(s["parent_id"] is None for s in spans)
    assert len({s["trace_id"] for s in spans}) == 3


async def test_trace_context_and_baggage_travel_in_meta() -> None:
    metas: list[Any] = []
    provider, _ = collector()
    app = build(provider)

    @app.middleware
    async def keep_meta(call: IncomingCall, call_next: CallNext) -> Any:
        if call.method == "tools/call":
            metas.append((call.params or {}).get("_meta"))
        return await call_next()

    client = Client(app.memory_transport())
    instrument(client, tracer_provider=provider)
    token = otel_context.attach(baggage.set_baggage("tenant", "acme"))
    try:
        async with client:
            await client.call_tool("echo", {"text": "a"})
    finally:
        otel_context.detach(token)
    [meta] = metas
    assert sorted(meta) == ["baggage", "traceparent"]
    assert meta["baggage"] == "tenant=acme"
    assert re.fullmatch(r"00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}", meta["traceparent"])


async def test_unconfigured_opentelemetry_sends_no_trace_context() -> None:
    """Instrumented, with no tracer provider configured (the API's default): calls work, and
    no ``traceparent`` is made up."""
    metas: list[Any] = []
    app = build(collector()[0])

    @app.middleware
    async def keep_meta(call: IncomingCall, call_next: CallNext) -> Any:
        if call.method == "tools/call":
            metas.append((call.params or {}).get("_meta"))
        return await call_next()

    client = Client(app.memory_transport())
    instrument(client)
    async with client:
        assert (await client.call_tool("echo", {"text": "a"})).content[0].text == "a"
    assert metas == [None]


def test_nothing_of_opentelemetry_without_instrument() -> None:
    """Serving and calling without ``instrument`` imports neither the telemetry layer nor
    opentelemetry; and without the extra, ``instrument`` says which extra to install."""
    script = """
import sys, anyio
from mcpbind.runtime import Client
from mcpbind.runtime.app import App
app = App("plain")
@app.tool()
async def echo(text: str) -> str:
    return text
async def main():
    async with Client(app.memory_transport()) as client:
        assert (await client.call_tool("echo", {"text": "a"})).content[0].text == "a"
anyio.run(main)
print(sorted(m for m in sys.modules if m.startswith(("opentelemetry", "mcpbind.runtime.telemetry"))))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    missing = """
import sys
sys.modules["opentelemetry"] = None
from mcpbind.runtime.telemetry import instrument
"""
    done = subprocess.run(
        [sys.executable, "-c", missing], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert "ImportError: tracing needs the 'otel' extra: pip install 'mcpbind[otel]'" in last
