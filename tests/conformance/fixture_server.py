"""The server the official conformance suite tests: our runtime over our Streamable HTTP.

It offers exactly the tools, resources and prompts ``conformance-scenarios.txt`` asks of a
server under test. Run it standalone with ``python tests/conformance/fixture_server.py
--port 3001`` (the suite's default URL is then ``http://127.0.0.1:3001/mcp``).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import weakref
from typing import Any

import anyio
from fixture_modern import add_modern_handlers
from fixture_skills import catalog as skills_catalog
from fixture_tasks import task_support
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import INVALID_PARAMS, McpError, RequestContext, Server, Session
from mcpbind.runtime.http import HttpRequestContext, StreamableHTTPServer, serving
from mcpbind.runtime.skills import serve_skills

#: A 1x1 red PNG and an 8-sample silent WAV: the smallest valid media the checks accept.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
WAV = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def _tool(
    name: str,
    description: str,
    properties: dict[str, Any] | None = None,
    required: list[str] | None = None,
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = required
    return {"name": name, "description": description, "inputSchema": schema}


TOOLS: list[dict[str, Any]] = [
    _tool("test_simple_text", "Returns simple text"),
    _tool("test_image_content", "Returns an image"),
    _tool("test_audio_content", "Returns audio"),
    _tool("test_embedded_resource", "Returns an embedded resource"),
    _tool("test_multiple_content_types", "Returns text, an image and a resource"),
    _tool("test_tool_with_logging", "Logs three messages while it runs"),
    _tool("test_tool_with_progress", "Reports progress 0, 50, 100 of 100"),
    _tool("test_error_handling", "Always fails"),
    _tool("test_sampling", "Asks the client's LLM", {"prompt": {"type": "string"}}, ["prompt"]),
    _tool("test_elicitation", "Asks the user", {"message": {"type": "string"}}, ["message"]),
    _tool("test_elicitation_sep1034_defaults", "Elicits with defaults for every primitive type"),
    _tool("test_elicitation_sep1330_enums", "Elicits with every enum schema variant"),
    _tool("test_reconnection", "Closes its SSE stream mid-call, then answers (SEP-1699 polling)"),
    {
        "name": "json_schema_2020_12_tool",
        "description": "Tool with JSON Schema 2020-12 features",
        "inputSchema": JSON_SCHEMA_2020_12,
    },
]

RESOURCES = [
    {
        "uri": "test://static-text",
        "name": "static-text",
        "description": "A static text resource",
        "mimeType": "text/plain",
    },
    {
        "uri": "test://static-binary",
        "name": "static-binary",
        "description": "A static PNG",
        "mimeType": "image/png",
    },
    {
        "uri": "test://watched-resource",
        "name": "watched-resource",
        "description": "A resource to subscribe to",
        "mimeType": "text/plain",
    },
]

PROMPTS = [
    {"name": "test_simple_prompt", "description": "A prompt without arguments"},
    {
        "name": "test_prompt_with_arguments",
        "description": "A prompt with two arguments",
        "arguments": [
            {"name": "arg1", "description": "First test argument", "required": True},
            {"name": "arg2", "description": "Second test argument", "required": True},
        ],
    },
    {
        "name": "test_prompt_with_embedded_resource",
        "description": "A prompt embedding a resource",
        "arguments": [
            {"name": "resourceUri", "description": "URI of the resource to embed", "required": True}
        ],
    },
    {"name": "test_prompt_with_image", "description": "A prompt with an image"},
]


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def build_server() -> Server:
    """A fresh fixture server (per-session state lives in ``levels`` and ``subscriptions``)."""
    server = Server(
        "mcpbind-conformance-fixture",
        "0.1.0",
        capabilities={
            "resources": {"subscribe": True, "listChanged": True},
            "tools": {"listChanged": True},
            "prompts": {"listChanged": True},
        },
    )
    skills = skills_catalog()  # the skills extension: its files are listed and read below
    serve_skills(server, skills, resources=False)
    levels: weakref.WeakKeyDictionary[Session, str] = weakref.WeakKeyDictionary()
    subscriptions: weakref.WeakKeyDictionary[Session, set[str]] = weakref.WeakKeyDictionary()

    async def log(context: RequestContext, level: str, data: str) -> None:
        threshold = levels.get(context.session, "debug")
        if LEVELS.index(level) >= LEVELS.index(threshold):
            await context.send_notification(
                methods.NOTIFICATIONS_MESSAGE,
                types.LoggingMessageNotificationParams(level=level, data=data),
            )

    async def ask(context: RequestContext, spec: Any, params: dict[str, Any]) -> Any:
        return await context.session.send_request(spec, params, related_id=context.request_id)

    async def elicit(
        context: RequestContext,
        message: str,
        properties: dict[str, Any],
        required: list[str] | None = None,
    ) -> str:
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        reply = await ask(
            context, methods.ELICITATION_CREATE, {"message": message, "requestedSchema": schema}
        )
        return f"action={reply.action}, content={json.dumps(reply.content)}"

    @server.handler(methods.TOOLS_LIST)
    async def list_tools(params: types.PaginatedRequestParams, context: RequestContext) -> Any:
        return {"tools": TOOLS}

    @server.handler(methods.TOOLS_CALL)
    async def call_tool(params: types.CallToolRequestParams, context: RequestContext) -> Any:
        args = params.arguments or {}
        name = params.name
        if name == "test_simple_text":
            return {"content": [text("This is a simple text response for testing.")]}
        if name == "test_image_content":
            return {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}
        if name == "test_audio_content":
            return {"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]}
        if name == "test_embedded_resource":
            resource = {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            }
            return {"content": [{"type": "resource", "resource": resource}]}
        if name == "test_multiple_content_types":
            resource = {
                "uri": "test://mixed-content-resource",
                "mimeType": "application/json",
                "text": '{"test":"data","value":123}',
            }
            return {
                "content": [
                    text("Multiple content types test:"),
                    {"type": "image", "data": PNG, "mimeType": "image/png"},
                    {"type": "resource", "resource": resource},
                ]
            }
        if name == "test_tool_with_logging":
            await log(context, "info", "Tool execution started")
            await anyio.sleep(0.05)
            await log(context, "info", "Tool processing data")
            await anyio.sleep(0.05)
            await log(context, "info", "Tool execution completed")
            return {"content": [text("Tool with logging executed successfully")]}
        if name == "test_tool_with_progress":
            for step, progress in enumerate((0, 50, 100)):
                if step:
                    await anyio.sleep(0.05)
                await context.report_progress(progress, 100)
            return {"content": [text("Tool with progress executed successfully")]}
        if name == "test_error_handling":
            return {
                "isError": True,
                "content": [text("This tool intentionally returns an error for testing")],
            }
        if name == "test_sampling":
            message = {"role": "user", "content": text(str(args.get("prompt", "")))}
            reply = await ask(
                context, methods.SAMPLING_CREATEMESSAGE, {"messages": [message], "maxTokens": 100}
            )
            answer = getattr(reply.content, "text", None) or "(no text)"
            return {"content": [text(f"LLM response: {answer}")]}
        if name == "test_elicitation":
            properties = {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            }
            outcome = await elicit(
                context, str(args.get("message", "")), properties, ["username", "email"]
            )
            return {"content": [text(f"User response: {outcome}")]}
        if name == "test_elicitation_sep1034_defaults":
            properties = {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {
                    "type": "string",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "default": True},
            }
            outcome = await elicit(
                context, "Please review and update the form fields with defaults", properties
            )
            return {"content": [text(f"Elicitation completed: {outcome}")]}
        if name == "test_elicitation_sep1330_enums":
            properties = {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {
                    "type": "string",
                    "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"},
                    ],
                },
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "items": {
                        "anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"},
                        ]
                    },
                },
            }
            outcome = await elicit(
                context, "Please select options from the enum fields", properties
            )
            return {"content": [text(f"Elicitation completed: {outcome}")]}
        if name == "test_reconnection":
            transport = context.transport_context
            if isinstance(transport, HttpRequestContext):
                await anyio.sleep(0.1)
                await transport.close_sse_stream()
                await anyio.sleep(0.2)
            return {"content": [text("Reconnection test completed")]}
        if name == "json_schema_2020_12_tool":
            return {"content": [text("ok")]}
        raise McpError(INVALID_PARAMS, f"Unknown tool: {name}")

    @server.handler(methods.RESOURCES_LIST)
    async def list_resources(params: types.PaginatedRequestParams, context: RequestContext) -> Any:
        return {"resources": RESOURCES + skills.resources()}

    @server.handler(methods.RESOURCES_TEMPLATES_LIST)
    async def list_templates(params: types.PaginatedRequestParams, context: RequestContext) -> Any:
        template = {
            "uriTemplate": "test://template/{id}/data",
            "name": "template",
            "description": "A resource template",
            "mimeType": "application/json",
        }
        return {"resourceTemplates": [template]}

    @server.handler(methods.RESOURCES_READ)
    async def read_resource(
        params: types.ReadResourceRequestParams, context: RequestContext
    ) -> Any:
        uri = params.uri
        skill_file = skills.read(uri)
        if skill_file is not None:
            return skill_file
        if uri == "test://static-text":
            return {
                "contents": [
                    {
                        "uri": uri,
                        "mimeType": "text/plain",
                        "text": "This is the content of the static text resource.",
                    }
                ]
            }
        if uri == "test://static-binary":
            return {"contents": [{"uri": uri, "mimeType": "image/png", "blob": PNG}]}
        if uri == "test://watched-resource":
            return {
                "contents": [
                    {"uri": uri, "mimeType": "text/plain", "text": "Watched resource content."}
                ]
            }
        prefix, suffix = "test://template/", "/data"
        if uri.startswith(prefix) and uri.endswith(suffix) and len(uri) > len(prefix) + len(suffix):
            item = uri[len(prefix) : -len(suffix)]
            body = json.dumps(
                {"id": item, "templateTest": True, "data": f"Data for ID: {item}"},
                separators=(",", ":"),
            )
            return {"contents": [{"uri": uri, "mimeType": "application/json", "text": body}]}
        raise McpError(INVALID_PARAMS, "Resource not found", {"uri": uri})

    @server.handler(methods.RESOURCES_SUBSCRIBE)
    async def subscribe(params: types.SubscribeRequestParams, context: RequestContext) -> Any:
        subscriptions.setdefault(context.session, set()).add(params.uri)
        return {}

    @server.handler(methods.RESOURCES_UNSUBSCRIBE)
    async def unsubscribe(params: types.UnsubscribeRequestParams, context: RequestContext) -> Any:
        subscriptions.get(context.session, set()).discard(params.uri)
        return {}

    @server.handler(methods.PROMPTS_LIST)
    async def list_prompts(params: types.PaginatedRequestParams, context: RequestContext) -> Any:
        return {"prompts": PROMPTS}

    @server.handler(methods.PROMPTS_GET)
    async def get_prompt(params: types.GetPromptRequestParams, context: RequestContext) -> Any:
        args = params.arguments or {}
        if params.name == "test_simple_prompt":
            return {
                "messages": [
                    {"role": "user", "content": text("This is a simple prompt for testing.")}
                ]
            }
        if params.name == "test_prompt_with_arguments":
            line = f"Prompt with arguments: arg1='{args.get('arg1', '')}', arg2='{args.get('arg2', '')}'"
            return {"messages": [{"role": "user", "content": text(line)}]}
        if params.name == "test_prompt_with_embedded_resource":
            resource = {
                "uri": args.get("resourceUri", "test://example-resource"),
                "mimeType": "text/plain",
                "text": "Embedded resource content for testing.",
            }
            return {
                "messages": [
                    {"role": "user", "content": {"type": "resource", "resource": resource}},
                    {
                        "role": "user",
                        "content": text("Please process the embedded resource above."),
                    },
                ]
            }
        if params.name == "test_prompt_with_image":
            return {
                "messages": [
                    {
                        "role": "user",
                        "content": {"type": "image", "data": PNG, "mimeType": "image/png"},
                    },
                    {"role": "user", "content": text("Please analyze the image above.")},
                ]
            }
        raise McpError(INVALID_PARAMS, f"Unknown prompt: {params.name}")

    @server.handler(methods.COMPLETION_COMPLETE)
    async def complete(params: types.CompleteRequestParams, context: RequestContext) -> Any:
        return {"completion": {"values": [], "total": 0, "hasMore": False}}

    async def call_common(name: str, arguments: dict[str, Any], context: RequestContext) -> Any:
        return await call_tool(types.CallToolRequestParams(name=name, arguments=arguments), context)

    async def get_common(name: str, arguments: dict[str, Any], context: RequestContext) -> Any:
        return await get_prompt(
            types.GetPromptRequestParams(name=name, arguments=arguments), context
        )

    add_modern_handlers(server, TOOLS, PROMPTS, call_common, get_common)
    server.enable_tasks(task_support())  # the 2026-07-28 tasks extension's tools

    @server.handler(methods.LOGGING_SETLEVEL)
    async def set_level(params: types.SetLevelRequestParams, context: RequestContext) -> Any:
        levels[context.session] = params.level
        return {}

    return server


def build_app(**options: Any) -> StreamableHTTPServer:
    """The fixture behind our Streamable HTTP server, with a short ``retry`` for polling."""
    return StreamableHTTPServer(build_server().serve, retry_ms=500, **options)


async def _main(port: int) -> None:
    async with serving(build_app(), port=port) as url:
        print(f"{url}/mcp", flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=3001)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    anyio.run(_main, parser.parse_args().port)
