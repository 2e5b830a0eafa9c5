"""``mcpbind inspect TARGET|URL``: the server's surface as a client sees it at one revision.

``--json`` prints the stable form ``mcpbind.surface/1`` (its one JSON Schema is the diff's,
``mcpbind/codegen/diff/surface.schema.json``: ``mcpbind diff`` of two such files reads exactly this): the top-level
keys in a fixed order, the spec's objects with their keys sorted, every list sorted by its key,
and ``[]`` for a list whose capability the server does not declare. Without ``--json``, a table.
"""

from __future__ import annotations

import json
from typing import Any, cast

import click
from mcpbind.generated.names import (
    PROMPTS_LIST,
    RESOURCES_LIST,
    RESOURCES_TEMPLATES_LIST,
    TOOLS_LIST,
)
from mcpbind.runtime.core.bindings import dump
from mcpbind.runtime.endpoints.client import Client

from ._common import REVISION_OPTION, OneLineCommand, is_paginated, run_async
from ._connect import STDIO_OPTION, TARGET_ARGUMENT, connected

__all__ = ["FORMAT", "inspect_command", "render_json", "render_table", "surface_of"]

FORMAT = "mcpbind.surface/1"
#: (surface key, capability, list method, sort key) for each list of the surface.
_LISTS = (
    ("tools", "tools", TOOLS_LIST, "name"),
    ("resources", "resources", RESOURCES_LIST, "uri"),
    ("resourceTemplates", "resources", RESOURCES_TEMPLATES_LIST, "uriTemplate"),
    ("prompts", "prompts", PROMPTS_LIST, "name"),
)


def _sorted_keys(value: object) -> Any:
    if isinstance(value, dict):
        members = cast("dict[str, object]", value)
        return {key: _sorted_keys(members[key]) for key in sorted(members)}
    if isinstance(value, list):
        return [_sorted_keys(item) for item in cast("list[object]", value)]
    return value


async def surface_of(client: Client[Any, Any, Any]) -> dict[str, Any]:
    """The ``mcpbind.surface/1`` form of the server ``client`` is connected to."""
    capabilities = client.server_capabilities
    surface: dict[str, Any] = {
        "format": FORMAT,
        "revision": client.revision,
        "serverInfo": _sorted_keys(dump(client.server_info)),
        "instructions": client.instructions,
        "capabilities": _sorted_keys(capabilities),
    }
    methods = client.session.bindings.methods
    for key, capability, method, sort_key in _LISTS:
        spec = methods.get(method)
        items: list[Any] = []
        if capability in capabilities and is_paginated(spec):
            items = [dump(item) for item in await client.list_all(spec)]
        surface[key] = sorted(
            (_sorted_keys(item) for item in items), key=lambda item: str(item.get(sort_key))
        )
    return surface


def render_json(surface: dict[str, Any]) -> str:
    return json.dumps(surface, indent=2, ensure_ascii=False) + "\n"


def _first_line(text: Any) -> str:
    lines = str(text or "").strip().splitlines()
    return lines[0] if lines else ""


def _rows(title: str, rows: list[tuple[str, str]]) -> list[str]:
    out = [f"{title} ({len(rows)})"]
    width = max((len(name) for name, _ in rows), default=0)
    out += [f"  {name.ljust(width)}  {what}".rstrip() for name, what in rows]
    return out


def render_table(surface: dict[str, Any]) -> str:
    """The surface for a reader: who, what it declares, then one line per item."""
    info = surface["serverInfo"]
    lines = [
        f"{info.get('name')} {info.get('version')} (revision {surface['revision']})",
        f"capabilities: {', '.join(sorted(surface['capabilities'])) or '(none)'}",
    ]
    if surface["instructions"]:
        lines.append(f"instructions: {_first_line(surface['instructions'])}")

    def args(tool: dict[str, Any]) -> str:
        schema: dict[str, Any] = tool.get("inputSchema") or {}
        required: set[str] = set(schema.get("required") or ())
        names = [n if n in required else f"{n}?" for n in schema.get("properties") or ()]
        return f"({', '.join(names)})"

    lines += _rows(
        "tools",
        [(t["name"], f"{args(t)} {_first_line(t.get('description'))}") for t in surface["tools"]],
    )
    lines += _rows(
        "resources",
        [
            (r["uri"], _first_line(r.get("description") or r.get("name")))
            for r in surface["resources"]
        ],
    )
    lines += _rows(
        "resource templates",
        [(r["uriTemplate"], _first_line(r.get("description") or r.get("name")))
         for r in surface["resourceTemplates"]],
    )  # fmt: skip
    lines += _rows(
        "prompts",
        [(p["name"], _first_line(p.get("description"))) for p in surface["prompts"]],
    )
    return "\n".join(lines) + "\n"


EXAMPLE = """
\b
Examples:
  mcpbind inspect examples/app_server.py
  mcpbind inspect http://127.0.0.1:8000/mcp --revision 2026-07-28 --json
  mcpbind inspect --stdio "python examples/app_server.py"
"""


@click.command("inspect", cls=OneLineCommand, epilog=EXAMPLE)
@TARGET_ARGUMENT
@STDIO_OPTION
@REVISION_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the mcpbind.surface/1 JSON form.")
def inspect_command(
    target: str | None, stdio: str | None, revision: str | None, as_json: bool
) -> None:
    """Show the surface of the server TARGET (a file or module:obj, served in memory) or URL
    (Streamable HTTP) offers: its info, capabilities, instructions, tools, resources, resource
    templates and prompts."""

    async def main() -> dict[str, Any]:
        async with connected(target, stdio, revision) as client:
            return await surface_of(client)

    surface = run_async(main)
    click.echo(render_json(surface) if as_json else render_table(surface), nl=False)


if __name__ == "__main__":
    inspect_command(prog_name="mcpbind inspect")
