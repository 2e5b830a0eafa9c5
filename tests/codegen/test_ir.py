"""Stage 2: the IR — hoisted names, fix-ups, the inferred method table, capabilities, era."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from mcpbind.codegen.errors import CodegenError
from mcpbind.codegen.ir import Direction, Era, ResultLink, RevisionIR, build_ir
from mcpbind.codegen.ir.hoist import hoist_definitions, pascal
from mcpbind.codegen.load import load_file

C2S, S2C = Direction.CLIENT_TO_SERVER, Direction.SERVER_TO_CLIENT


def test_inline_objects_get_place_names_in_every_revision(irs: dict[str, RevisionIR]) -> None:
    for ir in irs.values():
        assert ir.method("tools/call").params == "CallToolRequestParams"
        assert "CallToolRequestParams" in ir.definitions
        for name in ir.definitions:
            assert not re.search(r"(Params|Data|Model)\d+$", name), name
    hoisted = irs["2024-11-05"].definitions["CallToolRequestParams"]
    assert hoisted.origin == "#/definitions/CallToolRequest/properties/params".replace(
        "definitions", "$defs"
    )
    assert irs["2025-11-25"].definitions["CallToolRequestParams"].origin is None


def test_every_ref_points_at_a_definition(irs: dict[str, RevisionIR]) -> None:
    for ir in irs.values():
        text = json.dumps(ir.bundled_schema())
        for target in re.findall(r'"\$ref": "#/\$defs/([^"]+)"', text):
            assert target in ir.definitions, (ir.revision, target)
        assert "#/definitions/" not in text


def test_hoisting_names_nested_places_and_refuses_collisions() -> None:
    defs = {
        "A": {
            "type": "object",
            "properties": {"_meta": {"type": "object", "properties": {"x": {}}}},
        },
        "B": {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"type": "object", "properties": {"y": {}}}}
            },
        },
    }
    out = hoist_definitions(defs)
    assert set(out) == {"A", "AMeta", "B", "BItemsItem"}
    assert out["A"][0]["properties"]["_meta"] == {"$ref": "#/$defs/AMeta"}
    assert out["BItemsItem"][1] == "#/$defs/B/properties/items/items"
    clash = {**defs, "AMeta": {"type": "string"}, "AMetaInline": {"type": "string"}}
    with pytest.raises(CodegenError, match="cannot name the inline object"):
        hoist_definitions(clash)
    assert pascal("io.modelcontextprotocol/clientInfo") == "IoModelcontextprotocolClientInfo"


def test_method_table_2025_11_25_matches_the_spec(irs: dict[str, RevisionIR]) -> None:
    ir = irs["2025-11-25"]
    assert len(ir.methods) == 20
    assert len(ir.notifications) == 11
    call = ir.method("tools/call")
    assert call.results == ("CallToolResult",) and call.result_link is ResultLink.NAMING
    assert call.directions == (C2S,) and call.capability_for(C2S) == "tools"
    ping = ir.method("ping")
    assert ping.results == ("EmptyResult",) and ping.result_link is ResultLink.EMPTY_RESULT
    assert set(ping.directions) == {C2S, S2C} and ping.capabilities == ()
    assert ir.method("sampling/createMessage").capability_for(S2C) == "sampling"
    assert ir.method("resources/subscribe").capability_for(C2S) == "resources.subscribe"
    assert ir.method("tasks/list").capability_for(C2S) == "tasks.list"
    assert set(ir.notification("notifications/progress").directions) == {C2S, S2C}
    assert ir.notification("notifications/initialized").directions == (C2S,)
    assert ir.era is Era.HANDSHAKE


@pytest.mark.parametrize(
    ("revision", "requests", "notifications"),
    [("2024-11-05", 15, 9), ("2025-03-26", 15, 9), ("2025-06-18", 16, 9), ("2026-07-28", 13, 8)],
)
def test_method_counts(
    irs: dict[str, RevisionIR], revision: str, requests: int, notifications: int
) -> None:
    assert (len(irs[revision].methods), len(irs[revision].notifications)) == (
        requests,
        notifications,
    )


def test_empty_results_are_those_the_schema_does_not_name(irs: dict[str, RevisionIR]) -> None:
    for ir in irs.values():
        empty = {m.method for m in ir.methods if m.result_link is ResultLink.EMPTY_RESULT}
        expected = {"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
        assert empty == (expected if ir.era is Era.HANDSHAKE else set()), ir.revision


def test_2026_07_28_is_stateless_with_envelope_links(irs: dict[str, RevisionIR]) -> None:
    ir = irs["2026-07-28"]
    assert ir.era is Era.STATELESS
    names = {m.method for m in ir.methods}
    assert "server/discover" in names and "initialize" not in names and "ping" not in names
    call = ir.method("tools/call")
    assert call.result_link is ResultLink.RESPONSE_ENVELOPE
    assert call.results == ("CallToolResult", "InputRequiredResult")
    assert ir.method("server/discover").results == ("DiscoverResult",)
    # InputRequest members travel server -> client inside input-required results.
    assert ir.method("elicitation/create").directions == (S2C,)


def test_capabilities_of_both_sides(irs: dict[str, RevisionIR]) -> None:
    flags = {(f.side, f.dotted) for f in irs["2025-11-25"].capabilities}
    assert {
        ("client", "sampling"),
        ("client", "roots.listChanged"),
        ("client", "elicitation.form"),
    } <= flags
    assert {
        ("server", "tools"),
        ("server", "tools.listChanged"),
        ("server", "resources.subscribe"),
    } <= flags
    assert ("client", "elicitation") not in {
        (f.side, f.dotted) for f in irs["2025-03-26"].capabilities
    }


def test_fixups_apply_where_the_defect_is(irs: dict[str, RevisionIR], release_day: Path) -> None:
    applied = {rev: {f.name for f in ir.fixups} for rev, ir in irs.items()}
    assert applied["2026-07-28"] == {
        "json-value-number-and-null",
        "elicit-result-content-number",
        "result-type-constants",
    }
    assert applied["2025-11-25"] == {"elicit-result-content-number"}
    # 2025-06-18 types the content values as a bare type list, not an anyOf: widened too.
    assert applied["2025-06-18"] == {"elicit-result-content-number"}
    content = irs["2025-06-18"].definitions["ElicitResult"].schema["properties"]["content"]
    assert content["additionalProperties"]["type"] == ["string", "integer", "boolean", "number"]
    assert applied["2024-11-05"] == set()
    stateless = irs["2026-07-28"].definitions
    assert stateless["InputRequiredResult"].schema["properties"]["resultType"]["const"] == (
        "input_required"
    )
    assert stateless["CallToolResult"].schema["properties"]["resultType"]["const"] == "complete"
    assert "const" not in stateless["Result"].schema["properties"]["resultType"]
    json_value = irs["2026-07-28"].definitions["JSONValue"].schema
    assert {"number", "null"} <= set(json_value["anyOf"][2]["type"])

    ir = build_ir(load_file(release_day / "2025-11-25" / "schema.json", "2025-11-25"))
    assert "number-schema-bounds-number" in {f.name for f in ir.fixups}
    assert ir.definitions["NumberSchema"].schema["properties"]["minimum"]["type"] == "number"


def test_input_requests_are_told_from_requests(irs: dict[str, RevisionIR]) -> None:
    """2026-07-28: sampling, elicitation and roots are only in the InputRequest union."""
    embedded = {m.method for m in irs["2026-07-28"].methods if m.input_request}
    assert embedded == {"sampling/createMessage", "elicitation/create", "roots/list"}
    for method in embedded:
        assert irs["2026-07-28"].method(method).directions == (S2C,)
    for revision in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"):
        assert not any(m.input_request for m in irs[revision].methods)


def test_unknown_era_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"$defs": {"ClientRequest": {"anyOf": []}}}))
    with pytest.raises(CodegenError, match="unknown era"):
        build_ir(load_file(path, "x"))


def test_one_member_union_copied_inline_still_gives_directions(irs: dict[str, RevisionIR]) -> None:
    # 2026-07-28's ClientNotification is CancelledNotification's schema copied, not an anyOf.
    cancelled = irs["2026-07-28"].notification("notifications/cancelled")
    assert set(cancelled.directions) == {C2S, S2C}
    assert cancelled.notification == "CancelledNotification"


def test_lifecycle_and_pagination_are_marked(irs: dict[str, RevisionIR]) -> None:
    ir = irs["2025-11-25"]
    assert (
        ir.method("initialize").lifecycle and ir.notification("notifications/initialized").lifecycle
    )
    assert not ir.method("tools/call").lifecycle
    pages = {m.method: m.page_items for m in ir.methods if m.page_items}
    assert pages == {
        "prompts/list": "prompts",
        "resources/list": "resources",
        "resources/templates/list": "resourceTemplates",
        "tasks/list": "tasks",
        "tools/list": "tools",
    }
    assert irs["2024-11-05"].method("tools/list").page_items == "tools"  # inline params there
