"""What importing the runtime costs: a program imports only what it uses.

Each check runs in a fresh interpreter, since this process has imported everything already.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import mcpbind.runtime
from runtime_helpers import REPO_ROOT

HEAVY = ("anyio", "asyncio", "pydantic", "mcpbind.generated._support")
HTTP = ("mcpbind.runtime.http", "starlette", "httpx", "uvicorn", "httptools")


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
    assert _under(modules, ("mcpbind.runtime",)) == {"mcpbind.runtime"}
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
    assert "mcpbind.runtime._server" in modules
    assert "mcpbind.runtime._client" not in modules
    assert not _under(modules, HTTP)
    assert not _under(modules, ("mcpbind.generated.v2025_11_25", "mcpbind.generated.v2026_07_28"))


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
