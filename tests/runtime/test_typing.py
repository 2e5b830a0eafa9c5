"""mypy checks handler registrations and stub calls against the generated ``MethodSpec[P, R]``.

A snippet with lines marked ``# error`` is type-checked; mypy must flag exactly those lines.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from runtime_helpers import REPO_ROOT

SNIPPET = """
from mcpbind.generated.v2025_11_25 import client as stubs
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, RequestContext, Server

server = Server("typed")


@server.handler(methods.TOOLS_CALL)
async def good(params: types.CallToolRequestParams, context: RequestContext) -> types.CallToolResult:
    return types.CallToolResult(content=[])


@server.handler(methods.TOOLS_CALL)  # error
async def wrong_params(params: types.ReadResourceRequestParams, context: RequestContext) -> types.CallToolResult:
    return types.CallToolResult(content=[])


@server.handler(methods.PROMPTS_GET)  # error
async def wrong_result(params: types.GetPromptRequestParams, context: RequestContext) -> types.CallToolResult:
    return types.CallToolResult(content=[])


@server.handler(methods.RESOURCES_READ)
async def reads(params: types.ReadResourceRequestParams, context: RequestContext) -> types.ReadResourceResult:
    roots: types.ListRootsResult = await context.peer_as(stubs.ServerStub).list_roots()
    wrong: types.ElicitResult = await context.peer_as(stubs.ServerStub).list_roots()  # error
    print(roots, wrong)
    return types.ReadResourceResult(contents=[])


async def use(client: Client) -> None:
    stub = client.stub_as(stubs.ClientStub)
    result: types.CallToolResult = await stub.call_tool(types.CallToolRequestParams(name="x"))
    wrong: types.ReadResourceResult = await stub.call_tool(types.CallToolRequestParams(name="x"))  # error
    async for page in client.pages(methods.TOOLS_LIST):
        tools: list[types.Tool] = page.tools
    print(result, wrong, tools)
"""


@pytest.fixture(scope="module")
def mypy_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("typing")
    (root / "mcpbind").mkdir()
    for name in ("codegen", "generated", "runtime", "schema"):
        (root / "mcpbind" / name).symlink_to(REPO_ROOT / name, target_is_directory=True)
    (root / "examples").symlink_to(REPO_ROOT / "examples", target_is_directory=True)
    return root


def run_mypy(tree: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            str(REPO_ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tree / ".mypy_cache"),
            *targets,
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_mypy_checks_handlers_and_stubs_against_specs(mypy_tree: Path) -> None:
    snippet = mypy_tree / "snippet.py"
    snippet.write_text(SNIPPET)
    expected = {
        number for number, line in enumerate(SNIPPET.splitlines(), 1) if line.endswith("# error")
    }
    done = run_mypy(mypy_tree, "snippet.py")
    flagged = {
        int(m.group(1))
        for m in re.finditer(r"^snippet\.py:(\d+): error", done.stdout, re.MULTILINE)
    }
    assert flagged == expected, done.stdout + done.stderr


def test_the_examples_are_strictly_typed(mypy_tree: Path) -> None:
    done = run_mypy(mypy_tree, "examples/server.py", "examples/client.py")
    assert done.returncode == 0, done.stdout + done.stderr
