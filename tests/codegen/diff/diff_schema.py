"""A tiny MCP-shaped schema that ``build_ir`` accepts, and helpers to build variants of it.

The base has one method each way (``things/get`` client -> server, gated by the server capability
``things``; ``ping`` server -> client), one notification each way, a result with an enum and a
union of content, and capabilities on both sides. A test copies it, changes one thing, and checks
that exactly the expected rule fires.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcpbind.codegen.ir import RevisionIR, build_ir
from mcpbind.codegen.load import load_file

Defs = dict[str, Any]


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def message(method: str, params: str | None = None, params_required: bool = True) -> Defs:
    schema: Defs = {
        "type": "object",
        "properties": {"method": {"const": method, "type": "string"}},
        "required": ["method"],
    }
    if params is not None:
        schema["properties"]["params"] = ref(params)
        if params_required:
            schema["required"].append("params")
    return schema


BASE: Defs = {
    "ClientRequest": {"anyOf": [ref("InitializeRequest"), ref("ThingRequest")]},
    "ServerRequest": {"anyOf": [ref("PingRequest")]},
    "ClientNotification": {"anyOf": [ref("InitializedNotification")]},
    "ServerNotification": {"anyOf": [ref("ProgressNotification")]},
    "InitializeRequest": message("initialize", "InitializeRequestParams"),
    "InitializeRequestParams": {
        "type": "object",
        "properties": {"capabilities": ref("ClientCapabilities")},
        "required": ["capabilities"],
    },
    "InitializeResult": {
        "type": "object",
        "properties": {"capabilities": ref("ServerCapabilities")},
        "required": ["capabilities"],
    },
    "ClientCapabilities": {
        "type": "object",
        "properties": {
            "roots": {"type": "object", "properties": {"listChanged": {"type": "boolean"}}}
        },
    },
    "ServerCapabilities": {
        "type": "object",
        "properties": {"things": {"type": "object", "additionalProperties": True}},
    },
    "ThingRequest": message("things/get", "ThingRequestParams"),
    "ThingRequestParams": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Which thing."},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
        },
        "required": ["name"],
    },
    "ThingResult": {
        "type": "object",
        "properties": {
            "value": {"type": "string"},
            "note": {"type": "string"},
            "kind": {"type": "string", "enum": ["x", "y"]},
            "content": {"type": "array", "items": ref("Content")},
        },
        "required": ["value", "content"],
    },
    "Content": {"anyOf": [ref("TextContent"), ref("ImageContent")]},
    "TextContent": {
        "type": "object",
        "properties": {"type": {"const": "text", "type": "string"}, "text": {"type": "string"}},
        "required": ["type", "text"],
    },
    "ImageContent": {
        "type": "object",
        "properties": {
            "type": {"const": "image", "type": "string"},
            "data": {"type": "string"},
            "mimeType": {"type": "string"},
        },
        "required": ["type", "data", "mimeType"],
    },
    "PingRequest": message("ping"),
    "Result": {"type": "object", "properties": {"_meta": {"type": "object"}}},
    "EmptyResult": ref("Result"),
    "InitializedNotification": message("notifications/initialized"),
    "ProgressNotification": message("notifications/progress", "ProgressNotificationParams"),
    "ProgressNotificationParams": {
        "type": "object",
        "properties": {"progress": {"type": "number"}},
        "required": ["progress"],
    },
}


def base() -> Defs:
    """A fresh, mutable copy of the base definitions."""
    return copy.deepcopy(BASE)


def build(tmp_path: Path, name: str, defs: Defs) -> RevisionIR:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"$defs": defs}), encoding="utf-8")
    return build_ir(load_file(path, name))


Mutation = Callable[[Defs], None]
