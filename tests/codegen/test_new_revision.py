"""A revision never seen: new methods in a schema yield new stubs and dispatch entries, no code change."""

from __future__ import annotations

import copy
import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcpbind.codegen.cli import main

REF = "#/$defs/"


def extended_schema(schema_dir: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((schema_dir / "2025-11-25" / "schema.json").read_text())
    defs = doc["$defs"]
    envelope = {"id": {"$ref": REF + "RequestId"}, "jsonrpc": {"const": "2.0", "type": "string"}}
    defs["FrobnicateRequest"] = {
        "type": "object",
        "description": "Frobnicate a widget.",
        "properties": {
            **envelope,
            "method": {"const": "widgets/frobnicate", "type": "string"},
            "params": {  # inline on purpose: it must be named FrobnicateRequestParams
                "type": "object",
                "properties": {"widget": {"type": "string"}, "times": {"type": "integer"}},
                "required": ["widget"],
            },
        },
        "required": ["id", "jsonrpc", "method", "params"],
    }
    defs["FrobnicateResult"] = {
        "type": "object",
        "properties": {"frobbed": {"type": "boolean"}, "_meta": {"type": "object"}},
        "required": ["frobbed"],
    }
    defs["ConfirmRequest"] = {
        "type": "object",
        "properties": {
            **envelope,
            "method": {"const": "confirm/ask", "type": "string"},
            "params": {
                "type": "object",
                "properties": {"question": {"type": "string"}},
                "required": ["question"],
            },
        },
        "required": ["id", "jsonrpc", "method", "params"],
    }
    defs["ConfirmResult"] = {
        "type": "object",
        "properties": {"yes": {"type": "boolean"}},
        "required": ["yes"],
    }
    defs["WidgetChangedNotification"] = {
        "type": "object",
        "properties": {
            "jsonrpc": {"const": "2.0", "type": "string"},
            "method": {"const": "notifications/widgets/changed", "type": "string"},
            "params": {"type": "object", "properties": {"widget": {"type": "string"}}},
        },
        "required": ["jsonrpc", "method"],
    }
    defs["ClientRequest"]["anyOf"].append({"$ref": REF + "FrobnicateRequest"})
    defs["ServerRequest"]["anyOf"].append({"$ref": REF + "ConfirmRequest"})
    defs["ServerNotification"]["anyOf"].append({"$ref": REF + "WidgetChangedNotification"})
    defs["ServerResult"]["anyOf"].append({"$ref": REF + "FrobnicateResult"})
    return doc


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory, schema_dir: Path) -> Iterator[ModuleType]:
    root = tmp_path_factory.mktemp("newrev")
    schema = root / "widgets.json"
    schema.write_text(json.dumps(extended_schema(schema_dir)))
    out = root / "outpkg"
    result = CliRunner().invoke(
        main, ["generate", "--schema", str(schema), "--revision", "2099-01-01", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("outpkg.v2099_01_01")
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == "outpkg" or m.startswith("outpkg.")]:
            del sys.modules[name]


def test_method_table_has_the_new_methods(generated: ModuleType) -> None:
    spec = generated.methods.WIDGETS_FROBNICATE
    assert spec.method == "widgets/frobnicate" and spec.handler_name == "frobnicate"
    assert spec.params_type is generated.types.FrobnicateRequestParams
    assert spec.result_type is generated.types.FrobnicateResult
    assert generated.methods.CONFIRM_ASK.result_type is generated.types.ConfirmResult
    assert "notifications/widgets/changed" in generated.NOTIFICATIONS


def test_dispatch_tables_route_each_side(generated: ModuleType) -> None:
    server = generated.server
    assert "widgets/frobnicate" in server.CLIENT_TO_SERVER_REQUESTS
    assert "confirm/ask" in server.SERVER_TO_CLIENT_REQUESTS
    assert "confirm/ask" not in server.CLIENT_TO_SERVER_REQUESTS
    assert "notifications/widgets/changed" in server.SERVER_TO_CLIENT_NOTIFICATIONS
    assert hasattr(server.ServerHandlers, "frobnicate") and hasattr(
        server.ClientHandlers, "confirm"
    )


class RecordingSender:
    """Answers every request with a canned result, validated by the spec's own result type."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer
        self.sent: list[tuple[str, Any]] = []

    async def send_request(self, spec: Any, params: Any, options: Any = None) -> Any:
        from pydantic import TypeAdapter

        self.sent.append((spec.method, params))
        return TypeAdapter(spec.result_type).validate_python(copy.deepcopy(self.answer))

    async def send_notification(self, spec: Any, params: Any) -> None:
        self.sent.append((spec.method, params))


def test_stubs_call_the_new_methods(generated: ModuleType) -> None:
    types = generated.types
    sender = RecordingSender({"frobbed": True})
    stub = generated.client.ClientStub(sender)
    result = anyio.run(stub.frobnicate, types.FrobnicateRequestParams(widget="w", times=2))
    assert isinstance(result, types.FrobnicateResult) and result.frobbed is True
    server_stub = generated.client.ServerStub(sender)
    anyio.run(server_stub.send_widget_changed, types.WidgetChangedNotificationParams(widget="w"))
    assert [m for m, _ in sender.sent] == ["widgets/frobnicate", "notifications/widgets/changed"]
    assert hasattr(server_stub, "confirm") and not hasattr(stub, "confirm")


def test_index_lists_the_new_revision(generated: ModuleType) -> None:
    index = importlib.import_module("outpkg")
    assert index.REVISIONS == ("2099-01-01",)
    assert index.ERAS == {"2099-01-01": "handshake"}
