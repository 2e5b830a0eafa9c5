"""``mcpbind diff`` of two server-surface snapshots: one case per rule, judged for clients.

Each case mutates a copy of a small snapshot (``BASE``) into OLD and NEW and checks the one change
it must produce: rule, severity, path, direction. The rules are those of ``SURFACE_RULES`` plus the
schema rules a tool's input and output schemas report through the protocol diff's comparer.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from mcpbind.codegen.diff import Rule, Severity
from mcpbind.codegen.diff.rules import SURFACE_RULES
from mcpbind.codegen.diff.surface import diff_surfaces, template_variables

Snapshot = dict[str, Any]
Mutation = Callable[[Snapshot], None]
B, P, C = Severity.BREAKING, Severity.POTENTIALLY_BREAKING, Severity.COMPATIBLE
SENT, READ = "client_to_server", "server_to_client"

BASE: Snapshot = {
    "format": "mcpbind.surface/1",
    "revision": "2025-11-25",
    "serverInfo": {"name": "s", "version": "1"},
    "instructions": None,
    "capabilities": {"tools": {"listChanged": True}, "resources": {}},
    "tools": [
        {
            "name": "find",
            "description": "Find things.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer"},
                    "kind": {"type": "string", "enum": ["a", "b"]},
                },
                "required": ["query"],
            },
            "outputSchema": {
                "type": "object",
                "properties": {"hits": {"type": "integer"}, "note": {"type": "string"}},
                "required": ["hits"],
            },
            "annotations": {"readOnlyHint": True},
        },
        {
            "name": "wipe",
            "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": False, "destructiveHint": False},
        },
    ],
    "resources": [{"uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"}],
    "resourceTemplates": [{"uriTemplate": "file:///{name}", "name": "file"}],
    "prompts": [
        {"name": "greet", "arguments": [{"name": "who"}, {"name": "tone", "required": True}]}
    ],
}


def tool(snapshot: Snapshot, name: str = "find") -> dict[str, Any]:
    return next(t for t in snapshot["tools"] if t["name"] == name)


def inputs(snapshot: Snapshot) -> dict[str, Any]:
    schema: dict[str, Any] = tool(snapshot)["inputSchema"]
    return schema


def outputs(snapshot: Snapshot) -> dict[str, Any]:
    schema: dict[str, Any] = tool(snapshot)["outputSchema"]
    return schema


def prompt_args(snapshot: Snapshot) -> list[dict[str, Any]]:
    arguments: list[dict[str, Any]] = snapshot["prompts"][0]["arguments"]
    return arguments


@dataclass(frozen=True)
class Case:
    id: str
    new: Mutation
    rule: Rule
    severity: Severity
    path: str
    direction: str
    old: Mutation | None = None


def _drop_tool(s: Snapshot) -> None:
    s["tools"] = [t for t in s["tools"] if t["name"] != "wipe"]


def _close(s: Snapshot) -> None:
    inputs(s)["additionalProperties"] = False


CASES = [
    Case("tool removed", _drop_tool, Rule.TOOL_REMOVED, B, "tools/wipe", SENT),
    Case("tool added", lambda s: None, Rule.TOOL_ADDED, C, "tools/wipe", SENT, _drop_tool),
    Case(
        "required argument added",
        lambda s: (
            inputs(s)["properties"].update(page={"type": "integer"}),
            inputs(s)["required"].append("page"),
        ),
        Rule.TOOL_ARGUMENT_ADDED, B, "tools/find.inputSchema.page", SENT,
    ),
    Case(
        "optional argument added",
        lambda s: inputs(s)["properties"].update(page={"type": "integer"}),
        Rule.TOOL_ARGUMENT_ADDED, C, "tools/find.inputSchema.page", SENT,
    ),
    Case(
        "argument removed, schema open: the server ignores it",
        lambda s: inputs(s)["properties"].pop("limit"),
        Rule.TOOL_ARGUMENT_REMOVED, P, "tools/find.inputSchema.limit", SENT,
    ),
    Case(
        "argument removed, schema closed: the call is rejected",
        lambda s: (_close(s), inputs(s)["properties"].pop("limit")),
        Rule.TOOL_ARGUMENT_REMOVED, B, "tools/find.inputSchema.limit", SENT, _close,
    ),
    Case(
        "argument made required",
        lambda s: inputs(s)["required"].append("limit"),
        Rule.TOOL_ARGUMENT_REQUIRED, B, "tools/find.inputSchema.limit", SENT,
    ),
    Case(
        "argument made optional",
        lambda s: inputs(s).update(required=[]),
        Rule.TOOL_ARGUMENT_OPTIONAL, C, "tools/find.inputSchema.query", SENT,
    ),
    Case(
        "argument type narrowed",
        lambda s: inputs(s)["properties"]["limit"].update(minimum=1),
        Rule.MINIMUM_ADDED, B, "tools/find.inputSchema.limit", SENT,
    ),
    Case(
        "argument type widened",
        lambda s: inputs(s)["properties"]["limit"].update(type="number"),
        Rule.TYPE_WIDENED, C, "tools/find.inputSchema.limit", SENT,
    ),
    Case(
        "argument enum value removed",
        lambda s: inputs(s)["properties"]["kind"].update(enum=["a"]),
        Rule.ENUM_VALUE_REMOVED, B, "tools/find.inputSchema.kind", SENT,
    ),
    Case(
        "argument enum value added",
        lambda s: inputs(s)["properties"]["kind"].update(enum=["a", "b", "c"]),
        Rule.ENUM_VALUE_ADDED, C, "tools/find.inputSchema.kind", SENT,
    ),
    Case(
        "output schema removed",
        lambda s: tool(s).pop("outputSchema"),
        Rule.OUTPUT_SCHEMA_REMOVED, B, "tools/find.outputSchema", READ,
    ),
    Case(
        "output schema added",
        lambda s: None,
        Rule.OUTPUT_SCHEMA_ADDED, C, "tools/find.outputSchema", READ,
        lambda s: tool(s).pop("outputSchema"),
    ),
    Case(
        "output field removed",
        lambda s: outputs(s)["properties"].pop("note"),
        Rule.PROPERTY_REMOVED, B, "tools/find.outputSchema.note", READ,
    ),
    Case(
        "output field made optional",
        lambda s: outputs(s).update(required=[]),
        Rule.PROPERTY_REQUIRED_REMOVED, B, "tools/find.outputSchema.hits", READ,
    ),
    Case(
        "output field type changed",
        lambda s: outputs(s)["properties"]["hits"].update(type="string"),
        Rule.TYPE_CHANGED, B, "tools/find.outputSchema.hits", READ,
    ),
    Case(
        "output field type widened: readers validating it break",
        lambda s: outputs(s)["properties"]["hits"].update(type="number"),
        Rule.TYPE_WIDENED, B, "tools/find.outputSchema.hits", READ,
    ),
    Case(
        "output field added: readers unaffected",
        lambda s: outputs(s)["properties"].update(more={"type": "boolean"}),
        Rule.PROPERTY_ADDED, C, "tools/find.outputSchema.more", READ,
    ),
    Case(
        "readOnlyHint true -> false",
        lambda s: tool(s)["annotations"].update(readOnlyHint=False),
        Rule.TOOL_ANNOTATION_CHANGED, B, "tools/find.annotations.readOnlyHint", READ,
    ),
    Case(
        "readOnlyHint true -> absent (default false)",
        lambda s: tool(s).pop("annotations"),
        Rule.TOOL_ANNOTATION_CHANGED, B, "tools/find.annotations.readOnlyHint", READ,
    ),
    Case(
        "destructiveHint false -> true",
        lambda s: tool(s, "wipe")["annotations"].update(destructiveHint=True),
        Rule.TOOL_ANNOTATION_CHANGED, B, "tools/wipe.annotations.destructiveHint", READ,
    ),
    Case(
        "destructiveHint true -> false: safer",
        lambda s: None,
        Rule.TOOL_ANNOTATION_CHANGED, C, "tools/wipe.annotations.destructiveHint", READ,
        lambda s: tool(s, "wipe")["annotations"].update(destructiveHint=True),
    ),
    Case(
        "resource removed",
        lambda s: s.update(resources=[]),
        Rule.RESOURCE_REMOVED, B, "resources/file:///a.txt", SENT,
    ),
    Case(
        "resource added",
        lambda s: None,
        Rule.RESOURCE_ADDED, C, "resources/file:///a.txt", SENT,
        lambda s: s.update(resources=[]),
    ),
    Case(
        "resource mimeType changed",
        lambda s: s["resources"][0].update(mimeType="text/markdown"),
        Rule.RESOURCE_MIME_TYPE_CHANGED, P, "resources/file:///a.txt.mimeType", READ,
    ),
    Case(
        "template removed",
        lambda s: s.update(resourceTemplates=[]),
        Rule.RESOURCE_TEMPLATE_REMOVED, B, "resourceTemplates/file", SENT,
    ),
    Case(
        "template added",
        lambda s: None,
        Rule.RESOURCE_TEMPLATE_ADDED, C, "resourceTemplates/file", SENT,
        lambda s: s.update(resourceTemplates=[]),
    ),
    Case(
        "template variable renamed",
        lambda s: s["resourceTemplates"][0].update(uriTemplate="file:///{path}"),
        Rule.RESOURCE_TEMPLATE_VARIABLES_CHANGED, B, "resourceTemplates/file.uriTemplate", SENT,
    ),
    Case(
        "template pattern changed, same variables",
        lambda s: s["resourceTemplates"][0].update(uriTemplate="files:///{name}"),
        Rule.RESOURCE_TEMPLATE_URI_CHANGED, P, "resourceTemplates/file.uriTemplate", SENT,
    ),
    Case(
        "template mimeType changed",
        lambda s: s["resourceTemplates"][0].update(mimeType="text/plain"),
        Rule.RESOURCE_MIME_TYPE_CHANGED, P, "resourceTemplates/file.mimeType", READ,
    ),
    Case(
        "prompt removed",
        lambda s: s.update(prompts=[]),
        Rule.PROMPT_REMOVED, B, "prompts/greet", SENT,
    ),
    Case(
        "prompt added",
        lambda s: None,
        Rule.PROMPT_ADDED, C, "prompts/greet", SENT,
        lambda s: s.update(prompts=[]),
    ),
    Case(
        "prompt argument made required",
        lambda s: prompt_args(s)[0].update(required=True),
        Rule.PROMPT_ARGUMENT_REQUIRED, B, "prompts/greet.arguments.who", SENT,
    ),
    Case(
        "prompt argument made optional",
        lambda s: prompt_args(s)[1].pop("required"),
        Rule.PROMPT_ARGUMENT_OPTIONAL, C, "prompts/greet.arguments.tone", SENT,
    ),
    Case(
        "required prompt argument added",
        lambda s: prompt_args(s).append({"name": "lang", "required": True}),
        Rule.PROMPT_ARGUMENT_ADDED, B, "prompts/greet.arguments.lang", SENT,
    ),
    Case(
        "optional prompt argument added",
        lambda s: prompt_args(s).append({"name": "lang"}),
        Rule.PROMPT_ARGUMENT_ADDED, C, "prompts/greet.arguments.lang", SENT,
    ),
    Case(
        "prompt argument removed",
        lambda s: prompt_args(s).pop(0),
        Rule.PROMPT_ARGUMENT_REMOVED, P, "prompts/greet.arguments.who", SENT,
    ),
    Case(
        "capability flag removed",
        lambda s: s["capabilities"]["tools"].pop("listChanged"),
        Rule.SERVER_CAPABILITY_REMOVED, B, "capabilities.tools.listChanged", READ,
    ),
    Case(
        "capability flag turned false counts as removed",
        lambda s: s["capabilities"]["tools"].update(listChanged=False),
        Rule.SERVER_CAPABILITY_REMOVED, B, "capabilities.tools.listChanged", READ,
    ),
    Case(
        "capability removed with its flags: one change",
        lambda s: s["capabilities"].pop("tools"),
        Rule.SERVER_CAPABILITY_REMOVED, B, "capabilities.tools", READ,
    ),
    Case(
        "capability added",
        lambda s: s["capabilities"].update(logging={}),
        Rule.SERVER_CAPABILITY_ADDED, C, "capabilities.logging", READ,
    ),
]  # fmt: skip


def diff(old: Mutation | None, new: Mutation | None, descriptions: bool = False) -> list[Any]:
    before, after = copy.deepcopy(BASE), copy.deepcopy(BASE)
    if old is not None:
        old(before)
    if new is not None:
        new(after)
    return diff_surfaces(before, after, descriptions)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_rule(case: Case) -> None:
    [change] = diff(case.old, case.new)
    assert (change.rule, change.severity, change.path) == (case.rule, case.severity, case.path)
    assert change.direction == case.direction
    assert change.affects == (() if case.severity is C else ("client",))
    assert change.bindings is False
    assert change.message.endswith("(breaks clients)") == (case.severity is B), change.message


def test_every_surface_rule_has_a_case() -> None:
    assert {case.rule for case in CASES} >= SURFACE_RULES


def test_identical_snapshots_have_no_changes() -> None:
    assert diff(None, None) == []


def test_a_readonly_tool_turning_destructive_is_moot() -> None:
    """destructiveHint means nothing while readOnlyHint is true: no consent decision changes."""
    [change] = diff(None, lambda s: tool(s)["annotations"].update(destructiveHint=False))
    assert (change.rule, change.severity) == (Rule.TOOL_ANNOTATION_CHANGED, C)


def test_descriptions_only_when_asked() -> None:
    def reword(s: Snapshot) -> None:
        tool(s)["description"] = "Find more things."
        inputs(s)["properties"]["query"]["description"] = "What to look for."
        s["instructions"] = "Be kind."

    assert diff(None, reword) == []
    changes = diff(None, reword, descriptions=True)
    assert {c.rule for c in changes} == {Rule.DESCRIPTION_CHANGED}
    assert {c.path for c in changes} == {
        "tools/find.description",
        "tools/find.inputSchema.query",
        "server.instructions",
    }
    assert all(c.severity is C for c in changes)


def test_input_schema_refs_resolve_in_its_own_defs() -> None:
    """A tool schema's own $defs are the comparer's definitions, as a revision's are."""

    def with_defs(kinds: list[str]) -> Mutation:
        def mutate(s: Snapshot) -> None:
            inputs(s)["$defs"] = {"Kind": {"type": "string", "enum": kinds}}
            inputs(s)["properties"]["kind"] = {"$ref": "#/$defs/Kind"}

        return mutate

    [change] = diff(with_defs(["a", "b"]), with_defs(["a"]))
    assert change.rule is Rule.ENUM_VALUE_REMOVED and change.severity is B
    assert change.path == "tools/find.inputSchema.$defs.Kind"
    assert 'enum value "b" removed' in change.message


@pytest.mark.parametrize(
    ("template", "names"),
    [
        ("file:///{name}", {"name"}),
        ("https://x/{+path}{?q,limit*}{#frag}", {"path", "q", "limit", "frag"}),
        ("x://{a:3}/{.b}{/c,d}", {"a", "b", "c", "d"}),
        ("x://fixed", set()),
    ],
)
def test_template_variables(template: str, names: set[str]) -> None:
    assert template_variables(template) == names
