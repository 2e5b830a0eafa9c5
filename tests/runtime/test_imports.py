"""What importing the runtime costs: a program imports only what it uses.

Each check runs in a fresh interpreter, since this process has imported everything already.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import mcpbind.runtime
import mcpbind.runtime.tasks._wire
from mcpbind import generated
from mcpbind.generated import v2025_11_25
from pydantic import BaseModel
from runtime_helpers import REPO_ROOT

HEAVY = ("anyio", "asyncio", "pydantic", "mcpbind.generated.support")
HTTP = (
    "mcpbind.runtime.http",
    "mcpbind.runtime.transports.http",
    "starlette",
    "httpx",
    "uvicorn",
    "httptools",
)


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO_ROOT
    )
    return set(result.stdout.split())


def _under(modules: set[str], prefixes: tuple[str, ...]) -> set[str]:
    return {m for m in modules if m in prefixes or m.startswith(tuple(p + "." for p in prefixes))}


def test_importing_the_package_imports_no_submodule() -> None:
    modules = _modules_after("import mcpbind.runtime")
    # The face and the helper that reads its list of names; no layer is imported yet.
    assert _under(modules, ("mcpbind.runtime",)) == {"mcpbind.runtime", "mcpbind.runtime._exports"}
    assert not _under(modules, HEAVY)


def test_every_public_name_resolves_to_its_submodule() -> None:
    sources = mcpbind.runtime._SOURCES
    assert set(sources) == set(mcpbind.runtime.__all__)
    for name, source in sources.items():
        module = importlib.import_module(source, "mcpbind.runtime")
        assert getattr(mcpbind.runtime, name) is getattr(module, name)
    assert set(mcpbind.runtime.__all__) <= set(dir(mcpbind.runtime))


def test_a_server_program_imports_no_client_and_no_http() -> None:
    modules = _modules_after("from mcpbind.runtime import McpError, RequestContext, Server")
    assert "mcpbind.runtime.endpoints.server" in modules
    assert "mcpbind.runtime.endpoints.client" not in modules
    assert not _under(modules, HTTP)
    assert not _under(modules, ("mcpbind.generated.v2025_11_25", "mcpbind.generated.v2026_07_28"))


def test_a_client_imports_http_only_when_given_a_url() -> None:
    """``Client(server)``, ``Client(StdioParameters(...))`` and a memory session import no HTTP
    library; ``Client("https://...")`` imports the HTTP client transport (endpoints/_connect)."""
    local = """
import anyio
from mcpbind.runtime import Client, Server, StdioParameters

server = Server("probe")
Client(StdioParameters("python", []))


async def main() -> None:
    async with Client(server) as client:
        assert client.revision


anyio.run(main)
"""
    assert not _under(_modules_after(local), HTTP)
    remote = _modules_after("from mcpbind.runtime import Client\nClient('https://example.com/mcp')")
    assert {"httpx", "mcpbind.runtime.transports.http.client"} <= remote


HANDSHAKE_SESSION = """
import anyio
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import Client, Server

server = Server("probe")


@server.handler(methods.PING)
async def ping(params: object, context: object) -> types.Result:
    return types.Result()


async def main() -> None:
    async with Client(server.memory_transport(), protocol_version="2025-11-25") as client:
        await client.stub.ping()


anyio.run(main)
"""


def test_a_handshake_session_never_imports_the_stateless_revision() -> None:
    """A server's session starts on the latest revision; ``initialize`` moves it to the one it
    negotiates before any table of the latest is read, so that revision is never imported."""
    modules = _modules_after(HANDSHAKE_SESSION)
    assert "mcpbind.generated.v2025_11_25.types" in modules
    assert "mcpbind.generated.v2026_07_28" not in modules


def _built_models(code: str) -> tuple[list[str], set[str]]:
    """The models a fresh interpreter has built a validator for after ``code``, and its modules."""
    probe = (
        f"{code}\nimport sys\nfrom pydantic import BaseModel\n"
        "def walk(cls):\n"
        "    for sub in cls.__subclasses__():\n"
        "        yield sub\n"
        "        yield from walk(sub)\n"
        "print(' '.join(sorted({c.__qualname__ for c in walk(BaseModel)\n"
        "    if c.__dict__.get('__pydantic_complete__')})))\n"
        "print(' '.join(sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO_ROOT
    )
    built, modules = result.stdout.split("\n")[:2]
    return built.split(), set(modules.split())


def test_importing_a_revision_builds_no_validator() -> None:
    """Every generated model defers its validator to first use: importing a revision (168 models
    in 2025-11-25) builds none, so pydantic's plugin loader (and the ``importlib.metadata`` it
    imports) is not even loaded yet."""
    code = "\n".join(f"import {generated.module_name(r)}" for r in generated.REVISIONS)
    built, modules = _built_models(code)
    assert built == []
    assert "pydantic.plugin._loader" not in modules


def test_a_revision_imports_its_stubs_and_protocols_on_first_read() -> None:
    """A revision package imports ``client`` (the stubs) and ``server`` (the dispatch tables and
    handler protocols) when they are first read; ``BINDINGS`` names the stubs all the same."""
    probe = """
import sys
from mcpbind.generated import v2025_11_25 as revision
print(sorted(m for m in sys.modules if m.startswith(revision.__name__ + ".")))
assert revision.BINDINGS.client_stub is revision.client.ClientStub
assert revision.BINDINGS.server_stub is revision.client.ServerStub
assert revision.server.ServerHandlers.__module__ == revision.__name__ + ".server"
"""
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO_ROOT
    )
    prefix = "mcpbind.generated.v2025_11_25."
    assert result.stdout.split("\n")[0] == str([prefix + "methods", prefix + "types"])


def test_importing_the_tasks_extension_builds_no_validator() -> None:
    """The tasks extension's wire models (2026-07-28 only) are built when a session first uses
    them, not when the extension is imported."""
    built, modules = _built_models(
        "import mcpbind.runtime.app\nfrom mcpbind.runtime.tasks import TASKS_EXTENSION, TasksExtension"
    )
    assert "mcpbind.runtime.tasks._wire" in modules
    wire = mcpbind.runtime.tasks._wire
    models = {n for n, v in vars(wire).items() if isinstance(v, type) and issubclass(v, BaseModel)}
    assert len(models) >= 6
    assert not models & set(built), sorted(models & set(built))


APP_WITHOUT_TASKS = """
from mcpbind.runtime.app import App

app = App("probe")


@app.tool()
async def echo(text: str) -> str:
    return text
"""


def test_an_app_without_task_tools_never_imports_the_tasks_extension() -> None:
    """The app layer imports the tasks extension when a tool declares task support, not before
    (its modules and wire models are most of what the app layer would add to a stdio server)."""
    modules = _modules_after(APP_WITHOUT_TASKS)
    assert "mcpbind.runtime.app._app" in modules
    assert not _under(modules, ("mcpbind.runtime.tasks",))
    with_tasks = APP_WITHOUT_TASKS.replace("@app.tool()", '@app.tool(task_support="optional")')
    assert "mcpbind.runtime.tasks" in _modules_after(with_tasks)


#: Runs an example server (``python -m <sys.argv[2]>``) and, once stdin closes and it exits,
#: writes the models whose validators it built, the modules it holds and the classes of the
#: revision's ``types`` it defined to ``sys.argv[1]``, a line each.
IDLE_SERVER = """
import atexit, runpy, sys
out, module = sys.argv[1:3]
sys.argv = [module]
sys.path.insert(0, ".")

def report():
    from pydantic import BaseModel
    def walk(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from walk(sub)
    made = list(walk(BaseModel))
    built = {c.__qualname__ for c in made if c.__dict__.get("__pydantic_complete__")}
    types = sys.modules.get("mcpbind.generated.v2025_11_25.types")
    defined = [n for n, v in vars(types).items() if isinstance(v, type) and issubclass(v, BaseModel)]
    with open(out, "w") as file:
        file.write(" ".join(sorted(built)) + "\\n" + " ".join(sorted(sys.modules)) + "\\n")
        file.write(" ".join(sorted(defined)) + "\\n")
        file.write(" ".join(sorted(c.__qualname__ for c in made)))

atexit.register(report)
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""

#: What no stdio server that spoke 2025-11-25 and answered ``tools/call`` needs: the HTTP stack,
#: the CLI, the optional layers and their libraries (OAuth, OpenTelemetry, the cluster's
#: Redis), the ``cryptography`` that only seals stateless-era ``requestState``, a client (and
#: the stdio client's spawning end), the tasks extension, middleware it was not given, the
#: memory transport, the revision's stubs and handler protocols (``client``, ``server``: a
#: server that never calls its peer reads neither), and every other revision's bindings.
NOT_FOR_STDIO = (
    *HTTP,
    "click",
    "cryptography",
    "opentelemetry",
    "authlib",
    "joserfc",
    "redis",
    "jsonschema",
    "mcpbind.codegen",
    "mcpbind.runtime.cli",
    "mcpbind.runtime.testing",
    "mcpbind.runtime.cluster",
    "mcpbind.runtime.auth",
    "mcpbind.runtime.telemetry",
    "mcpbind.runtime.skills",
    "mcpbind.runtime.tasks",
    "mcpbind.runtime.endpoints.client",
    "mcpbind.runtime.endpoints._client_calls",
    "mcpbind.runtime.eras.subscriptions_client",
    "mcpbind.runtime.eras.stateless_client",
    "mcpbind.runtime.eras._sealing",
    # The cross-era result proofs: stateless-era requests only (``eras/stateless._plan``).
    "mcpbind.runtime.eras.crossera",
    "mcpbind.runtime.eras._proofs",
    "mcpbind.runtime.eras._proof_code",
    "mcpbind.runtime.eras._schemas",
    # The stateless era's lifecycle and input rounds: a server of both eras loads them with the
    # first stateless-era message (``eras/both.py``).
    "mcpbind.runtime.eras.stateless",
    "mcpbind.runtime.eras.input_required",
    # Who hears of which change, and the sending to many: the first subscription or
    # notification sent loads them.
    "mcpbind.runtime.eras.subscriptions",
    "mcpbind.runtime.endpoints.broadcast",
    # The stdio client's end: spawning and stopping a server process and its process tree.
    "mcpbind.runtime.transports.stdio_client",
    "mcpbind.runtime.transports._process_tree",
    # Loaded where an endpoint is given middleware, or a memory transport is opened.
    "mcpbind.runtime.endpoints.middleware",
    "mcpbind.runtime.transports.memory",
    "mcpbind.generated.v2025_11_25.client",
    "mcpbind.generated.v2025_11_25.server",
    *(generated.module_name(r) for r in generated.REVISIONS if r != "2025-11-25"),
)

#: What the example app does not use: URI templates (its one resource is static), the
#: uvicorn runner of ``run_http``, dependencies, questions to the client, views, and until it lists
#: something or returns more than plain text, pagination and the shaping of results by their
#: classes (``_handlers._shaped``).
NOT_FOR_THIS_APP = (
    "mcpbind.runtime.app._uri_template",
    "mcpbind.runtime.app._serving",
    "mcpbind.runtime.app._pages",
    "mcpbind.runtime.app._shaping",
    # Planning and resolving ``Depends`` parameters, and ``Context``'s questions to the client:
    # loaded by the first function with a dependency, and the first question.
    "mcpbind.runtime.app._resolve",
    "mcpbind.runtime.app._asking",
    # MCP Apps metadata, checked when a view or a tool with one is registered.
    "mcpbind.runtime.app._ui_meta",
    # Visibility rules: loaded by the first ``disable`` (or ``enabled=False``).
    "mcpbind.runtime.app._rules",
    # pydantic's ``TypeAdapter``: an output type's adapter is made by the first listing, and
    # an echo's ``-> str`` is served as it is (``_schema.output_type``, ``OutputType.plain``).
    "pydantic.type_adapter",
)

#: Classes of the revision no untasked ``tools/call`` needs: its task form's result.
TASK_RESULT = {"CreateTaskResult", "Task"}

#: Where the revision's classes are defined: a module per family (``codegen/emit/lazy.py``).
FAMILIES = "mcpbind.generated.v2025_11_25._types_"


def _families_loaded(modules: set[str], met: set[str]) -> set[str]:
    """The revision's definition modules a server loaded: those of the classes it met (``met``;
    8 to 19 of 111 here), never what it does not serve, such as sampling's or listing tools'."""
    loaded = {m.removeprefix(FAMILIES) for m in modules if m.startswith(FAMILIES)}
    assert met <= loaded, sorted(loaded)
    assert not loaded & {"CreateMessageRequest", "ListToolsResult", "ElicitRequest"}
    assert len(loaded) <= 20, sorted(loaded)
    return loaded


def _closure(name: str) -> set[str]:
    """``name`` and every class of the revision its fields may hold, however deep."""
    found: set[str] = set()
    todo: list[Any] = [getattr(v2025_11_25.types, name)]
    while todo:
        hint = todo.pop()
        if isinstance(hint, type) and issubclass(hint, BaseModel):
            if hint.__name__ in found:
                continue
            found.add(hint.__name__)
            todo.extend(field.annotation for field in hint.model_fields.values())
        else:
            todo.extend(typing.get_args(hint))
    return found


def _serve_once(tmp_path: Path, module: str) -> tuple[set[str], set[str], set[str], set[str]]:
    """``module`` served over real pipes: the handshake, then an ``echo`` call; the models it
    built validators for, the modules it held, the revision's classes it defined and every
    model class it made, when it exited."""
    out = tmp_path / "idle.txt"
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "probe", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hello"}},
        },
    ]
    given = "".join(json.dumps(m) + "\n" for m in messages)
    result = subprocess.run(
        [sys.executable, "-c", IDLE_SERVER, str(out), module],
        input=given,
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
        timeout=60,
    )
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert [a.get("id") for a in answers] == [1, 2]
    assert answers[1]["result"]["content"][0]["text"] == "hello"
    built_line, modules_line, defined_line, made_line = out.read_text().split("\n")
    lines = (built_line, modules_line, defined_line, made_line)
    built, modules, defined, made = (set(line.split()) for line in lines)
    return built, modules, defined, made


def test_an_idle_stdio_server_holds_only_what_it_serves_with(tmp_path: Path) -> None:
    """The example server over real pipes, after the handshake and an echo: no HTTP stack, no
    client, no app layer, no other revision's bindings, and validators only for the handful of
    models it met (not one per generated class): what keeps its idle RSS down."""
    built, modules, defined, _ = _serve_once(tmp_path, "examples.server")
    assert "mcpbind.generated.v2025_11_25.types" in modules
    assert "CallToolResult" in defined and "InitializeResult" not in defined
    assert not defined & TASK_RESULT, sorted(defined & TASK_RESULT)
    assert not {d for d in defined if d.startswith("ServerCapabilities")}, sorted(defined)
    loaded = _families_loaded(modules, {"InitializeRequest", "CallToolResult"})
    assert "InitializeResult" not in loaded, sorted(loaded)
    # pydantic's ``TypeAdapter`` too: every model it meets validates with its own validator.
    unwanted = (*NOT_FOR_STDIO, "mcpbind.runtime.app", "pydantic.type_adapter")
    assert not _under(modules, unwanted), sorted(_under(modules, unwanted))
    # The tools it lists, what it parses and answers: a few, never a revision's worth.
    assert {"CallToolRequestParams", "CallToolResult", "InitializeRequestParams"} <= built
    assert len(built) <= 12, sorted(built)


def test_an_idle_app_server_holds_only_what_it_serves_with(tmp_path: Path) -> None:
    """The example app (``examples/app_server.py``) likewise: its app layer, and nothing of
    HTTP, the CLI, the optional layers, a client or another revision; models for its own
    arguments and outputs and the messages it met, never a revision's worth."""
    built, modules, defined, made = _serve_once(tmp_path, "examples.app_server")
    assert {"mcpbind.runtime.app._app", "mcpbind.generated.v2025_11_25.types"} <= modules
    unwanted = (*NOT_FOR_STDIO, *NOT_FOR_THIS_APP)
    assert not _under(modules, unwanted), sorted(_under(modules, unwanted))
    # Its echo's result is plain text, shaped by the members its spec lists: neither
    # ``CallToolResult`` nor its content classes are created (``_plain.shape_plain``).
    assert not defined & {"CallToolResult", "TextContent", "InitializeResult"}, sorted(defined)
    assert not defined & TASK_RESULT, sorted(defined & TASK_RESULT)
    # Its capabilities are built from the generated tree (``methods.CAPABILITIES``): the 7
    # ``ServerCapabilities`` classes and their family are never created. What it defines is
    # what its two validators need, nothing defined only to be looked at.
    assert not {d for d in defined if d.startswith("ServerCapabilities")}, sorted(defined)
    validated = _closure("InitializeRequestParams") | _closure("CallToolRequestParams")
    assert defined - {"MCPModel"} == validated, sorted(defined ^ validated)
    loaded = _families_loaded(modules, {"InitializeRequest"})
    assert not loaded & {"CallToolResult", "TextContent", "ContentBlock"}, sorted(loaded)
    assert "InitializeResult" not in loaded, sorted(loaded)
    assert {"echoArguments", "CallToolRequestParams", "InitializeRequestParams"} <= built
    # The app built its echo's result from a validated ``str``: served unvalidated, its class
    # (defined, for the shaping) never builds a validator (``routing.BuiltResult``).
    assert "CallToolResult" not in built, sorted(built)
    # A ``str`` returned by a ``-> str`` tool is its structured result as it is: the wrapping
    # ``echoOutput`` model is built by the first listing (``OutputType.plain``).
    assert "echoOutput" not in built, sorted(built)
    # The arguments of what was never called are built when first needed (``_schema.py``).
    never_called = {"weatherArguments", "countArguments", "greetArguments", "configArguments"}
    assert not built & never_called, sorted(built & never_called)
    # Their plain scalar signatures (``count``'s context aside) cannot fail to make a model:
    # not even the classes are made (``Signature.model``); ``echo``'s was, by its call.
    assert "echoArguments" in made
    assert not made & never_called, sorted(made & never_called)
    assert len(built) <= 16, sorted(built)


def test_an_app_defines_few_dataclasses_before_it_serves() -> None:
    """Defining a dataclass compiles its methods (about 2.5 M instructions, 4.4 M frozen): the
    app layer's own records are plain classes and the public ``ElicitationResult`` is defined by
    the first question to the client (``_asking``), so the example app defines none there, and
    the endpoints none (``broadcast.Delivery`` is defined by the first notification sent)."""
    probe = (
        "import dataclasses, runpy, sys\n"
        "runpy.run_path('examples/app_server.py')\n"
        "print(' '.join(sorted(f'{n}.{k}' for n, m in list(sys.modules.items())\n"
        "    if n.startswith(('mcpbind.runtime.app', 'mcpbind.runtime.endpoints'))\n"
        "    for k, v in vars(m).items()\n"
        "    if isinstance(v, type) and v.__module__ == n and dataclasses.is_dataclass(v))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO_ROOT
    )
    assert result.stdout.split() == []
