"""``mcpbind inspect``: the ``mcpbind.surface/1`` form, valid against its shipped JSON Schema,
in its fixed key order, from a file served in memory, a URL and a stdio command, in both eras."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from clikit import (
    MCPBIND,
    NOTES,
    REPO,
    assert_one_line_error,
    cli,
    serving_http,
)

pytestmark = [pytest.mark.timeout(120)]

# The one published form: the diff's schema, which `mcpbind diff` checks snapshots against.
SCHEMA = json.loads((REPO / "codegen" / "diff" / "surface.schema.json").read_text())
TOP_KEYS = ["format", "revision", "serverInfo", "instructions", "capabilities", "tools",
            "resources", "resourceTemplates", "prompts"]  # fmt: skip


def surface(*args: str, cwd: Path = REPO) -> dict[str, Any]:
    done = cli("inspect", *args, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    jsonschema.validate(found, SCHEMA, format_checker=jsonschema.FormatChecker())
    # The exact text: keys of the top in the given order, nested keys sorted, 2-space indent.
    assert done.stdout == json.dumps(found, indent=2, ensure_ascii=False) + "\n"
    assert list(found) == TOP_KEYS
    return found


def keys_sorted(value: Any) -> bool:
    if isinstance(value, dict):
        return list(value) == sorted(value) and all(keys_sorted(v) for v in value.values())
    if isinstance(value, list):
        return all(keys_sorted(v) for v in value)
    return True


def test_the_schema_is_a_valid_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_a_file_in_memory_at_the_newest_handshake_revision() -> None:
    found = surface(NOTES)
    assert found["format"] == "mcpbind.surface/1" and found["revision"] == "2025-11-25"
    assert found["serverInfo"] == {"name": "notes", "version": "1.0"}
    assert found["instructions"] == "Keep short notes; read them as note://TITLE."
    assert "completions" in found["capabilities"]
    assert [t["name"] for t in found["tools"]] == ["add_note", "delete_note", "repeat"]
    add = found["tools"][0]
    assert add["annotations"] == {"destructiveHint": False, "idempotentHint": True}
    assert add["outputSchema"]["properties"]["count"] == {"title": "Count", "type": "integer"}
    assert add["inputSchema"]["required"] == ["title", "body"]
    assert [r["uri"] for r in found["resources"]] == ["note://index"]
    assert [t["uriTemplate"] for t in found["resourceTemplates"]] == ["note://{title}"]
    assert [p["name"] for p in found["prompts"]] == ["summarize"]
    for key in TOP_KEYS[2:]:
        assert keys_sorted(found[key]), key


def test_the_stateless_era_over_http_matches_the_memory_form() -> None:
    with serving_http(NOTES) as (_, port):
        over_http = surface(f"http://127.0.0.1:{port}/mcp", "--revision", "2026-07-28")
    in_memory = surface(NOTES, "--revision", "2026-07-28")
    assert over_http["revision"] == "2026-07-28"
    assert over_http == in_memory


def test_a_stdio_command() -> None:
    command = " ".join([*MCPBIND, "run", NOTES])
    assert surface("--stdio", command) == surface(NOTES)


def test_every_page_sorted_and_absent_lists_empty(tmp_path: Path) -> None:
    """Tools listed one a page, registered out of order; no resources or prompts declared."""
    (tmp_path / "paged.py").write_text(
        "from mcpbind.runtime.app import App\n"
        "app = App('paged', page_size=1)\n"
        "for name in ('zeta', 'alpha', 'mid'):\n"
        "    app.add_tool(lambda: 'x', name=name, description=name)\n"
    )
    found = surface("paged.py", cwd=tmp_path)
    assert [t["name"] for t in found["tools"]] == ["alpha", "mid", "zeta"]
    assert "resources" not in found["capabilities"] and "prompts" not in found["capabilities"]
    assert found["resources"] == found["resourceTemplates"] == found["prompts"] == []
    assert found["instructions"] is None


def test_the_table() -> None:
    done = cli("inspect", NOTES)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "notes 1.0 (revision 2025-11-25)"
    assert "capabilities: completions, logging, prompts, resources, tools" in lines
    assert "tools (3)" in lines and "resource templates (1)" in lines
    assert any(line.split()[:2] == ["repeat", "(text,"] for line in lines), lines


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["http://127.0.0.1:9/mcp"], "cannot connect to http://127.0.0.1:9/mcp"),
        (["--stdio", "false"], "cannot connect to `false`"),
        ([NOTES, "--stdio", "x"], "give TARGET"),
        ([], "give TARGET"),
    ],
)
def test_unreachable_or_missing_targets_are_one_line(args: list[str], fragment: str) -> None:
    assert_one_line_error(cli("inspect", *args), fragment)


def test_an_unknown_revision_is_refused() -> None:
    assert_one_line_error(
        cli("inspect", NOTES, "--revision", "2099-01-01"), "unknown revision '2099-01-01'"
    )


def test_a_server_error_while_listing_is_one_line(tmp_path: Path) -> None:
    """The server declares tools but cannot list them: its error, in one line."""
    (tmp_path / "liar.py").write_text(
        "from mcpbind.runtime import Server\nserver = Server('liar', capabilities={'tools': {}})\n"
    )
    assert_one_line_error(cli("inspect", "liar.py", cwd=tmp_path), "McpError: ")
