"""``mcpbind call``, ``read`` and ``prompt``: one tool call, resource read or prompt, printed.

Content prints as text (other kinds summarized in one line each), then a tool's structured
result as JSON; ``--json`` prints the whole result as sent. A tool's own failure (``isError``)
exits 1; a tool, resource or prompt that is not there, or arguments that do not parse, exit 2.
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

import click
from mcpbind.generated.names import TOOLS_LIST
from mcpbind.runtime.core.bindings import dump
from mcpbind.runtime.core.errors import McpError
from mcpbind.runtime.endpoints.client import Client

from ._common import (
    REVISION_OPTION,
    CliError,
    OneLineCommand,
    is_paginated,
    parse_pairs,
    run_async,
)
from ._connect import STDIO_OPTION, connected

__all__ = ["call_command", "describe_content", "prompt_command", "read_command"]

PAIRS = click.argument("pairs", nargs=-1, metavar="[KEY=VALUE]...")
JSON_OUT = click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON.")


def _size(data: str | None) -> str:
    try:
        return f"{len(base64.b64decode(data or '', validate=False))} bytes"
    except ValueError:
        return "undecodable base64"


def describe_content(item: dict[str, Any]) -> str:
    """One content block for a terminal: its text, else a one-line summary."""
    kind = item.get("type")
    if kind == "text" or (kind is None and "text" in item):
        return str(item.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind} {item.get('mimeType', '?')}, {_size(item.get('data'))}]"
    if kind == "resource_link":
        return f"[resource link {item.get('uri')}]"
    if kind == "resource" or "uri" in item:
        inner = item.get("resource", item)
        if "text" in inner:
            return str(inner["text"])
        return f"[resource {inner.get('uri')} {inner.get('mimeType', '?')}, {_size(inner.get('blob'))}]"
    return f"[{kind} content]"


def _show(result: dict[str, Any], as_json: bool, blocks: list[dict[str, Any]]) -> None:
    if as_json:
        click.echo(json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False))
        return
    for block in blocks:
        click.echo(describe_content(block))


async def _tool_schema(client: Client[Any, Any, Any], name: str) -> dict[str, Any]:
    spec = client.session.bindings.methods.get(TOOLS_LIST)
    tools = [dump(t) for t in await client.list_all(spec)] if is_paginated(spec) else []
    for tool in tools:
        if tool.get("name") == name:
            schema: dict[str, Any] = tool.get("inputSchema") or {}
            return schema
    known = ", ".join(sorted(str(t.get("name")) for t in tools)) or "none"
    raise CliError(f"unknown tool {name!r} (the server's tools: {known})")


def _refused(what: str, exc: McpError) -> CliError:
    return CliError(f"{what}: {exc}")


CALL_EXAMPLE = """
\b
Examples:
  mcpbind call examples/app_server.py echo text='hello world'
  mcpbind call http://127.0.0.1:8000/mcp add a=1 b=2
  mcpbind call examples/server.py add --json-args '{"a": 1, "b": 2}'
"""


def _split(
    words: tuple[str, ...], stdio: str | None, what: str
) -> tuple[str | None, str, list[str]]:
    """``TARGET NAME REST...``, or ``NAME REST...`` with ``--stdio``: (target, name, rest)."""
    need = 1 if stdio is not None else 2
    if len(words) < need:
        missing = "TARGET|URL and " if stdio is None and not words else ""
        raise CliError(f"give {missing}{what}")
    if stdio is not None:
        return None, words[0], list(words[1:])
    return words[0], words[1], list(words[2:])


@click.command("call", cls=OneLineCommand, epilog=CALL_EXAMPLE)
@click.argument("words", nargs=-1, metavar="TARGET|URL TOOL [KEY=VALUE]...")
@click.option("--json-args", default=None, metavar="JSON", help="Arguments as one JSON object.")
@STDIO_OPTION
@REVISION_OPTION
@JSON_OUT
def call_command(
    words: tuple[str, ...],
    json_args: str | None,
    stdio: str | None,
    revision: str | None,
    as_json: bool,
) -> None:
    """Call TOOL of the server TARGET|URL with KEY=VALUE arguments (a value is JSON when it
    parses as JSON, else a string; a string property of the tool's input schema keeps the text).
    With --stdio COMMAND there is no TARGET: mcpbind call --stdio "python s.py" TOOL ...
    Exit status 1 when the tool reports an error."""

    async def main() -> dict[str, Any]:
        target, tool, pairs = _split(words, stdio, "TOOL")
        async with connected(target, stdio, revision) as client:
            schema = await _tool_schema(client, tool)
            arguments = parse_pairs(pairs, json_args, schema)
            try:
                result = await client.call_tool(tool, arguments)
            except McpError as exc:
                raise _refused(f"tools/call {tool}", exc) from None
            found: dict[str, Any] = dump(result)
            return found

    result = run_async(main)
    _show(result, as_json, result.get("content") or [])
    structured = result.get("structuredContent")
    if structured is not None and not as_json:
        text = json.dumps(structured, indent=2, sort_keys=True, ensure_ascii=False)
        click.echo(f"structured: {text}")
    if result.get("isError"):
        sys.exit(1)


READ_EXAMPLE = """
\b
Examples:
  mcpbind read examples/app_server.py config://app
  mcpbind read http://127.0.0.1:8000/mcp memo://readme --json
"""


@click.command("read", cls=OneLineCommand, epilog=READ_EXAMPLE)
@click.argument("words", nargs=-1, metavar="TARGET|URL URI")
@STDIO_OPTION
@REVISION_OPTION
@JSON_OUT
def read_command(
    words: tuple[str, ...], stdio: str | None, revision: str | None, as_json: bool
) -> None:
    """Read the resource at URI of the server TARGET|URL: text contents as they are, binary
    ones summarized (--json: the whole result)."""

    async def main() -> dict[str, Any]:
        target, uri, rest = _split(words, stdio, "URI")
        if rest:
            raise CliError(f"read takes one URI, not {len(rest) + 1}")
        async with connected(target, stdio, revision) as client:
            try:
                found: dict[str, Any] = dump(await client.read_resource(uri))
            except McpError as exc:
                raise _refused(f"resources/read {uri}", exc) from None
            return found

    result = run_async(main)
    _show(result, as_json, result.get("contents") or [])


PROMPT_EXAMPLE = """
\b
Examples:
  mcpbind prompt examples/app_server.py greet name=Ada
"""


@click.command("prompt", cls=OneLineCommand, epilog=PROMPT_EXAMPLE)
@click.argument("words", nargs=-1, metavar="TARGET|URL NAME [KEY=VALUE]...")
@STDIO_OPTION
@REVISION_OPTION
@JSON_OUT
def prompt_command(
    words: tuple[str, ...], stdio: str | None, revision: str | None, as_json: bool
) -> None:
    """Get the prompt NAME of the server TARGET|URL filled with KEY=VALUE arguments (strings,
    as prompts take them): each message as `role: text`."""

    async def main() -> dict[str, Any]:
        target, name, pairs = _split(words, stdio, "NAME")
        # A prompt's arguments are strings: every value as typed.
        strings = {"properties": {p.partition("=")[0]: {"type": "string"} for p in pairs}}
        arguments = parse_pairs(pairs, None, strings)
        async with connected(target, stdio, revision) as client:
            try:
                found: dict[str, Any] = dump(await client.get_prompt(name, arguments))
            except McpError as exc:
                raise _refused(f"prompts/get {name}", exc) from None
            return found

    result = run_async(main)
    if as_json:
        _show(result, True, [])
        return
    messages: list[dict[str, Any]] = result.get("messages") or []
    for message in messages:
        click.echo(f"{message.get('role')}: {describe_content(message.get('content') or {})}")


if __name__ == "__main__":
    call_command(prog_name="mcpbind call")
