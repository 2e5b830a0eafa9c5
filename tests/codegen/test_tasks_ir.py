"""Task-augmentable requests are inferred from the schema: the ``task`` params field, the result
that carries only a task, and the receiver's ``tasks.requests`` capability tree.

The expected set is the table of 2025-11-25's ``basic/utilities/tasks.md`` ("Capabilities"):
``tasks.requests.tools.call`` on a server, ``tasks.requests.sampling.createMessage`` and
``tasks.requests.elicitation.create`` on a client, an exhaustive list.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import anyio
import pytest
from mcpbind.codegen.errors import CodegenError
from mcpbind.codegen.ir import Direction, RevisionIR, build_ir
from mcpbind.codegen.load import load_file
from mcpbind.generated import v2025_11_25, v2026_07_28

C2S, S2C = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT

EXPECTED_2025_11_25 = {
    "tools/call": ((C2S,), ("tasks", "requests", "tools", "call")),
    "sampling/createMessage": ((S2C,), ("tasks", "requests", "sampling", "createMessage")),
    "elicitation/create": ((S2C,), ("tasks", "requests", "elicitation", "create")),
}


def test_2025_11_25_task_augmentable_requests(irs: dict[str, RevisionIR]) -> None:
    ir = irs["2025-11-25"]
    found = {
        m.method: (m.directions, m.task_capability)
        for m in ir.methods
        if m.task_result is not None or m.task_capability is not None
    }
    assert found == EXPECTED_2025_11_25
    for method in found:
        assert ir.method(method).task_result == "CreateTaskResult"
    # The capability paths are real flags of the receiver's side.
    flags = {(flag.side, flag.path) for flag in ir.capabilities}
    assert ("server", EXPECTED_2025_11_25["tools/call"][1]) in flags
    assert ("client", EXPECTED_2025_11_25["elicitation/create"][1]) in flags
    assert ("client", EXPECTED_2025_11_25["sampling/createMessage"][1]) in flags


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26", "2025-06-18", "2026-07-28"])
def test_no_task_form_in_other_revisions(irs: dict[str, RevisionIR], revision: str) -> None:
    ir = irs[revision]
    assert not [m.method for m in ir.methods if m.task_result or m.task_capability]


def test_generated_table_and_stubs_carry_the_task_form() -> None:
    methods, types = v2025_11_25.methods, v2025_11_25.types
    augmentable = {
        name: spec.task_capability
        for name, spec in methods.METHODS.items()
        if spec.task_result_type is not None
    }
    assert augmentable == {name: path for name, (_, path) in EXPECTED_2025_11_25.items()}
    assert methods.TOOLS_CALL.task_result_type is types.CreateTaskResult
    assert (
        methods.TOOLS_LIST.task_result_type is None and methods.TOOLS_LIST.task_capability is None
    )
    assert all(
        spec.task_result_type is None and spec.task_capability is None
        for spec in v2026_07_28.methods.METHODS.values()
    )
    client, server = v2025_11_25.client.ClientStub, v2025_11_25.client.ServerStub
    assert hasattr(client, "call_tool_as_task")
    assert hasattr(server, "create_message_as_task") and hasattr(server, "elicit_as_task")
    assert not hasattr(client, "list_tools_as_task") and not hasattr(server, "ping_as_task")


def test_as_task_stub_refuses_params_without_task() -> None:
    """Nothing is sent: the sender would fail the test if it were asked."""

    class Refuse:
        async def send_request(self, *args: object) -> object:
            raise AssertionError("sent a task-form request without a task")

        async def send_notification(self, *args: object) -> None:
            raise AssertionError("unexpected notification")

    types = v2025_11_25.types
    stub = v2025_11_25.client.ClientStub(Refuse())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"call_tool_as_task needs params\.task"):
        anyio.run(stub.call_tool_as_task, types.CallToolRequestParams(name="slow"))
    server = v2025_11_25.client.ServerStub(Refuse())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"elicit_as_task needs params\.task"):
        anyio.run(
            server.elicit_as_task,
            types.ElicitRequestURLParams(message="?", url="https://x", elicitationId="e"),
        )


def _patched(tmp_path: Path, schema_dir: Path, change: str) -> Path:
    document = json.loads((schema_dir / "2025-11-25" / "schema.json").read_text())
    defs = document["$defs"]
    if change == "no-capability":
        del defs["ServerCapabilities"]["properties"]["tasks"]["properties"]["requests"]
    elif change == "two-task-results":
        defs["OtherTaskResult"] = copy.deepcopy(defs["CreateTaskResult"])
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(document))
    return path


def test_task_form_follows_the_schema_not_a_list(tmp_path: Path, schema_dir: Path) -> None:
    """Without the server's ``tasks.requests`` tree, tools/call is still task-augmentable (its
    params take a task) but no capability admits it; with two task-only results, the generator
    refuses to guess."""
    ir = build_ir(load_file(_patched(tmp_path, schema_dir, "no-capability"), "2025-11-25"))
    call = ir.method("tools/call")
    assert call.task_result == "CreateTaskResult" and call.task_capability is None
    assert ir.method("sampling/createMessage").task_capability == (
        "tasks",
        "requests",
        "sampling",
        "createMessage",
    )
    with pytest.raises(CodegenError, match="2 results carry only a task"):
        build_ir(load_file(_patched(tmp_path, schema_dir, "two-task-results"), "2025-11-25"))
