"""``mcpbind call``, ``read`` and ``prompt`` on the notes example: arguments parsed as JSON where
they are JSON and the input schema allows it, text and structured output, exit status 1 on a
tool's ``isError``, and one line with exit status 2 for what is not there or does not parse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clikit import (
    MCPBIND,
    NOTES,
    assert_one_line_error,
    cli,
    serving_http,
)
from mcpbind.runtime.cli.call import describe_content

pytestmark = [pytest.mark.timeout(120)]

ECHO_ARGS = """
from mcpbind.runtime.app import App
from typing import Any
app = App("echo")

@app.tool()
def show(value: Any = None, label: str = "", n: int = 0) -> str:
    return repr((value, label, n))
"""


def test_text_then_structured() -> None:
    done = cli("call", NOTES, "add_note", "title=milk", "body=2 liters")
    assert done.returncode == 0, done.stderr
    text, structured = done.stdout.split("structured: ")
    assert json.loads(text) == {"title": "milk", "count": 2}
    assert json.loads(structured) == {"count": 2, "title": "milk"}


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["value=3", "n=4"], "(3, '', 4)"),
        (["value=true"], "(True, '', 0)"),
        (['value={"a": [1, null]}'], "({'a': [1, None]}, '', 0)"),
        (["value=hello world"], "('hello world', '', 0)"),
        (["label=02134"], "(None, '02134', 0)"),  # a string property keeps the digits as typed
        (["label=true", "value=null"], "(None, 'true', 0)"),
        (["--json-args", '{"value": [1, 2], "n": 1}', "n=5"], "([1, 2], '', 5)"),
    ],
)
def test_arguments_are_json_where_they_parse(tmp_path: Path, args: list[str], shown: str) -> None:
    (tmp_path / "echo_app.py").write_text(ECHO_ARGS)
    done = cli("call", "echo_app.py", "show", *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == shown


def test_a_tool_error_exits_1_with_its_text() -> None:
    done = cli("call", NOTES, "delete_note", "title=nothing")
    assert done.returncode == 1
    assert done.stdout.strip() == "no note titled 'nothing'"
    assert "Traceback" not in done.stderr


def test_json_output_is_the_whole_result() -> None:
    done = cli("call", NOTES, "repeat", "text=ab", "times=2", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["content"] == [{"type": "text", "text": "ab ab"}]
    assert result["structuredContent"] == {"result": "ab ab"}


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["call", NOTES, "nope"], "unknown tool 'nope' (the server's tools: add_note, delete_note, repeat)"),
        (["call", NOTES, "repeat", "text"], "argument 'text' is not key=value"),
        (["call", NOTES, "repeat", "text=a", "times=many"], "argument times='many' is not integer JSON"),
        (["call", NOTES, "repeat", "--json-args", "{nope"], "--json-args is not JSON"),
        (["call", NOTES, "repeat", "--json-args", "[1]"], "--json-args must be a JSON object"),
        (["call", NOTES], "give TOOL"),
        (["call"], "give TARGET|URL and TOOL"),
        (["call", "http://127.0.0.1:9/mcp", "x"], "cannot connect to http://127.0.0.1:9/mcp"),
        (["read", NOTES, "memo://nothing"], "resources/read memo://nothing: Resource not found"),
        (["read", NOTES, "a://b", "c://d"], "read takes one URI"),
        (["prompt", NOTES, "nope"], "prompts/get nope:"),
    ],
)  # fmt: skip
def test_what_is_not_there_is_one_line(args: list[str], fragment: str) -> None:
    assert_one_line_error(cli(*args), fragment)


def test_a_crash_in_the_served_file_is_told_in_a_line_each() -> None:
    done = cli("read", NOTES, "note://nothing")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert lines == [
        "mcpbind: server error: resource 'note://nothing' failed (KeyError: 'nothing')",
        "mcpbind: error: resources/read note://nothing: Error reading resource "
        "note://nothing: KeyError: 'nothing' (code -32603)",
    ]


def test_read_prints_text_contents() -> None:
    done = cli("read", NOTES, "note://welcome")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Notes live in memory until the server stops.\n"
    listed = json.loads(cli("read", NOTES, "note://index", "--json").stdout)
    assert listed["contents"] == [
        {"mimeType": "text/plain", "text": "welcome", "uri": "note://index"}
    ]


def test_prompt_arguments_stay_strings() -> None:
    done = cli("prompt", NOTES, "summarize", "title=42")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "user: Summarize the note '42': (missing)\n"


def test_over_http_in_the_stateless_era_and_over_stdio() -> None:
    with serving_http(NOTES) as (_, port):
        url = f"http://127.0.0.1:{port}/mcp"
        done = cli("call", url, "repeat", "text=x", "times=3", "--revision", "2026-07-28")
        assert (done.returncode, done.stdout.splitlines()[0]) == (0, "x x x"), done.stderr
    command = " ".join([*MCPBIND, "run", NOTES])
    done = cli("call", "--stdio", command, "repeat", "text=y")
    assert (done.returncode, done.stdout.splitlines()[0]) == (0, "y y"), done.stderr
    done = cli("read", "--stdio", command, "note://welcome")
    assert done.stdout.startswith("Notes live"), done.stderr


@pytest.mark.parametrize(
    ("block", "shown"),
    [
        ({"type": "text", "text": "hi"}, "hi"),
        ({"type": "image", "mimeType": "image/png", "data": "AAEC"}, "[image image/png, 3 bytes]"),
        ({"type": "audio", "mimeType": "audio/wav", "data": ""}, "[audio audio/wav, 0 bytes]"),
        ({"type": "resource_link", "uri": "file:///a", "name": "a"}, "[resource link file:///a]"),
        ({"type": "resource", "resource": {"uri": "x://t", "text": "inner"}}, "inner"),
        ({"type": "resource", "resource": {"uri": "x://b", "mimeType": "a/b", "blob": "AA=="}},
         "[resource x://b a/b, 1 bytes]"),
    ],
)  # fmt: skip
def test_content_other_than_text_is_one_line_each(block: dict[str, object], shown: str) -> None:
    assert describe_content(block) == shown
