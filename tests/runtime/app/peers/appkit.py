"""What the app-layer interop tests share: the example servers, and the check of what a peer saw.

Every peer (the official Python SDK's client, the TypeScript SDK's, MCP Inspector's CLI) runs
the same session against ``examples/app_server.py`` and reports it as one dict of wire-shaped
(camelCase) results; ``check_report`` asserts its content, per the revision negotiated.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[4]
EXAMPLES = REPO_ROOT / "examples"
APP_EXAMPLE = EXAMPLES / "app_server.py"
LOWLEVEL_EXAMPLE = EXAMPLES / "lowlevel_server.py"

WEATHER = {"city": "Oslo", "temperature_c": 21.5, "conditions": "sunny"}
CONFIG = {"theme": "dark", "units": "metric"}
#: Revisions whose ``Tool`` has ``title`` and ``outputSchema`` and whose results carry
#: ``structuredContent`` (from 2025-06-18 on).
STRUCTURED_FROM = "2025-06-18"


def example_command(script: Path = APP_EXAMPLE) -> list[str]:
    return [sys.executable, str(script)]


def load_example(script: Path = APP_EXAMPLE) -> ModuleType:
    """An example server's module, imported from its file as a user serving it would."""
    spec = importlib.util.spec_from_file_location(f"interop_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def example_http_app(script: Path = APP_EXAMPLE) -> Any:
    """The example's Streamable HTTP ASGI app (both eras on one endpoint)."""
    module = load_example(script)
    if hasattr(module, "app"):
        return module.app.http_app()
    from mcpbind.runtime.http import StreamableHTTPServer

    return StreamableHTTPServer(module.server.serve)


def text_of(result: dict[str, Any]) -> str:
    content = result["content"]
    assert content and content[0]["type"] == "text", result
    return str(content[0]["text"])


def check_tools(tools: list[dict[str, Any]], revision: str) -> None:
    """The three tools with their input schemas; ``weather``'s output schema where it exists."""
    by_name = {tool["name"]: tool for tool in tools}
    assert sorted(by_name) == ["count", "echo", "weather"], tools
    assert by_name["echo"]["description"] == "Return the text it is given."
    for name, argument, kind in (("echo", "text", "string"), ("weather", "city", "string"),
                                 ("count", "steps", "integer")):  # fmt: skip
        schema = by_name[name]["inputSchema"]
        assert schema["type"] == "object", schema
        assert schema["properties"][argument]["type"] == kind, schema
        assert schema["required"] == [argument], schema
        assert "ctx" not in schema["properties"], schema
    weather = by_name["weather"]
    if revision >= STRUCTURED_FROM:
        assert weather["title"] == "Weather"
        output = weather["outputSchema"]
        assert output["type"] == "object"
        assert set(output["properties"]) == set(WEATHER), output
        assert output["properties"]["temperature_c"]["type"] == "number"
    else:
        assert "outputSchema" not in weather and "title" not in weather, weather


def check_weather(result: dict[str, Any], revision: str) -> None:
    assert not result.get("isError"), result
    assert json.loads(text_of(result)) == WEATHER
    if revision >= STRUCTURED_FROM:
        assert result["structuredContent"] == WEATHER
    else:
        assert "structuredContent" not in result, result


def check_bad_argument(result: dict[str, Any]) -> None:
    """``echo(text=5)``: a tool error naming the argument and what it should be, not a
    protocol error."""
    assert result["isError"] is True, result
    message = text_of(result)
    assert "text" in message and "string" in message, message


def check_config(read: dict[str, Any]) -> None:
    (contents,) = read["contents"]
    assert contents["uri"] == "config://app"
    assert contents["mimeType"] == "application/json"
    assert json.loads(contents["text"]) == CONFIG


#: What a ``GetPromptResult`` may carry, in any revision.
PROMPT_RESULT_MEMBERS = {"description", "messages", "_meta", "resultType", "ttlMs", "cacheScope"}


def check_greet(prompt: dict[str, Any]) -> None:
    assert set(prompt) <= PROMPT_RESULT_MEMBERS, prompt
    (message,) = prompt["messages"]
    assert message["role"] == "user"
    assert message["content"] == {"type": "text", "text": "Please greet Ada warmly."}


def check_report(report: dict[str, Any], revision: str, progress: bool = True) -> None:
    """Everything a peer's session saw: the handshake's revision, tools, calls, progress,
    the resource and the prompt."""
    assert report["protocolVersion"] == revision, report["protocolVersion"]
    check_tools(report["tools"], revision)
    assert text_of(report["echo"]) == "hi there"
    check_weather(report["weather"], revision)
    assert text_of(report["count"]) == "counted to 3"
    if progress:
        assert [p["progress"] for p in report["progress"]] == [1, 2, 3], report["progress"]
        assert [p.get("total") for p in report["progress"]] == [3, 3, 3]
    assert [r["uri"] for r in report["resources"]] == ["config://app"]
    check_config(report["config"])
    assert [p["name"] for p in report["prompts"]] == ["greet"]
    assert report["prompts"][0]["arguments"][0]["name"] == "name"
    check_greet(report["greet"])
    check_bad_argument(report["bad"])
