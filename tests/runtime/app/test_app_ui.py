"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension): ``ui://`` views served as
``text/html;profile=mcp-app`` with their ``_meta.ui``, tools naming their view, app-only tools
kept from clients that cannot show views, the extension declared in the server's capabilities.

Checked with our client (memory and stdio, both eras), and against the extension's own
reference code: its host side (``AppBridge``) and view side (``App``) from the npm package
``@modelcontextprotocol/ext-apps``, which parse what we serve with the extension's schemas."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import npmkit
import pytest
import suitekit
from app_helpers import STATELESS
from mcpbind.generated import v2025_11_25, v2026_07_28
from mcpbind.runtime import Client, StdioParameters
from mcpbind.runtime.app import App

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).with_name("ui_server.py")
HOST = Path(__file__).with_name("peers") / "ui_host.mjs"
EXT_APPS = "@modelcontextprotocol/ext-apps"
EXT_APPS_VERSION = "2.0.4"
MIME = "text/html;profile=mcp-app"
UI = "io.modelcontextprotocol/ui"
MODULES = {"2025-11-25": v2025_11_25, STATELESS: v2026_07_28}
VIEW_META = {
    "csp": {
        "connectDomains": ["https://api.example.com"],
        "resourceDomains": ["https://cdn.example.com"],
    },
    "permissions": {"clipboardWrite": {}},
    "prefersBorder": True,
}
A_HOST = {"extensions": {UI: {"mimeTypes": [MIME]}}}


def load_server() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("ui_server_copy", SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def transport(how: str) -> Any:
    if how == "memory":
        return load_server().app.memory_transport()
    return StdioParameters(sys.executable, [str(SERVER)])


@pytest.mark.parametrize("how", ["memory", "stdio"])
@pytest.mark.parametrize("version", sorted(MODULES))
async def test_a_host_sees_the_view_and_the_tools_that_use_it(how: str, version: str) -> None:
    module = MODULES[version]
    types = module.types
    async with Client(transport(how), protocol_version=version, capabilities=A_HOST) as client:
        capabilities = client.server_capabilities
        tools = {tool.name: tool for tool in await client.list_all(module.methods.TOOLS_LIST)}
        resources = await client.list_all(module.methods.RESOURCES_LIST)
        read = await client.stub.read_resource(
            types.ReadResourceRequestParams(uri="ui://weather/dashboard")
        )
        called = await client.stub.call_tool(
            types.CallToolRequestParams(name="refresh", arguments={"city": "Oslo"})
        )
    assert capabilities["extensions"] == {UI: {}}
    assert sorted(tools) == ["plain", "refresh", "weather"]
    weather = tools["weather"].model_dump(by_alias=True, exclude_none=True)["_meta"]
    assert weather == {
        "ui": {"resourceUri": "ui://weather/dashboard"},
        "ui/resourceUri": "ui://weather/dashboard",
    }
    refresh = tools["refresh"].model_dump(by_alias=True, exclude_none=True)["_meta"]
    assert refresh["ui"] == {"resourceUri": "ui://weather/dashboard", "visibility": ["app"]}
    assert getattr(tools["plain"], "meta", None) is None
    listed = resources[0].model_dump(by_alias=True, exclude_none=True)
    assert listed["uri"] == "ui://weather/dashboard" and listed["mimeType"] == MIME
    assert listed["_meta"] == {"ui": VIEW_META}
    content = read.contents[0].model_dump(by_alias=True, exclude_none=True)
    assert content["mimeType"] == MIME and content["text"].startswith("<!DOCTYPE html>")
    assert content["_meta"] == {"ui": VIEW_META}
    assert called.content[0].text == "Oslo: 22.0"


@pytest.mark.parametrize("version", sorted(MODULES))
async def test_a_client_without_the_extension_is_not_given_app_only_tools(version: str) -> None:
    """It cannot show the view, so it would hand the view's own tools to its model."""
    module = MODULES[version]
    async with Client(transport("memory"), protocol_version=version) as client:
        names = [tool.name for tool in await client.list_all(module.methods.TOOLS_LIST)]
    assert names == ["weather", "plain"]


async def test_only_an_app_with_views_declares_the_extension() -> None:
    plain = App("plain")
    plain.add_tool(lambda: "x", name="x")
    async with Client(plain.memory_transport(), protocol_version="2025-11-25") as client:
        assert "extensions" not in client.server_capabilities
    linked = App("linked")
    linked.add_tool(lambda: "x", name="x", ui="ui://linked/view")
    async with Client(linked.memory_transport(), protocol_version=STATELESS) as client:
        assert client.server_capabilities["extensions"] == {UI: {}}


def test_what_the_extension_does_not_have_is_refused() -> None:
    app = App("bad")
    with pytest.raises(ValueError, match="starts with 'ui://', not 'https://x/view'"):
        app.ui_resource("https://x/view")
    with pytest.raises(ValueError, match="unknown CSP members \\['scriptDomains'\\]"):
        app.ui_resource("ui://x/view", csp={"scriptDomains": ["https://x"]})
    with pytest.raises(ValueError, match="unknown permissions \\['usb'\\]"):
        app.ui_resource("ui://x/view", permissions=["usb"])
    with pytest.raises(ValueError, match="tool 'x': an MCP Apps view's URI starts with 'ui://'"):
        app.add_tool(lambda: 1, name="x", ui="view.html")
    with pytest.raises(ValueError, match="visibility is a non-empty list of 'model' and 'app'"):
        app.add_tool(lambda: 1, name="y", ui={"resourceUri": "ui://x", "visibility": []})
    with pytest.raises(ValueError, match="needs a 'resourceUri'"):
        app.add_tool(lambda: 1, name="z", ui={"visibility": ["app"]})
    assert app.tools == {} and app.resources == {}


@pytest.fixture(scope="session")
def ext_apps() -> tuple[Path, Path]:
    """(node, the npm folder holding the extension's package and its peers)."""
    root = suitekit.cache_dir().parent / "ext-apps"
    node = npmkit.install(root, EXT_APPS, EXT_APPS_VERSION, "the MCP Apps extension's SDK")
    return node, root


@pytest.mark.interop
@pytest.mark.timeout(900)
@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_the_extensions_reference_host_and_view_use_the_server(
    ext_apps: tuple[Path, Path], era: str
) -> None:
    node, root = ext_apps
    shutil.copy(HOST, root / HOST.name)  # beside node_modules, where its imports resolve
    command = [str(node), str(root / HOST.name), era, sys.executable, str(SERVER)]
    with anyio.fail_after(120):
        done = await anyio.run_process(
            command, check=False, env={**os.environ}, stdin=subprocess.DEVNULL
        )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    report = json.loads(done.stdout)
    assert report["errors"] == []  # the extension's schemas took every _meta.ui
    assert (report["mimeType"], report["extension"]) == (MIME, UI)  # its constants are ours
    assert report["serverCapabilities"]["extensions"] == {UI: {}}
    assert report["tools"] == {
        "weather": {"resourceUri": "ui://weather/dashboard", "appOnly": False},
        "refresh": {"resourceUri": "ui://weather/dashboard", "appOnly": True},
        "plain": {"resourceUri": None, "appOnly": False},
    }
    assert report["resources"][0]["mimeType"] == MIME
    assert report["contents"][0]["_meta"] == {"ui": VIEW_META}
    # The view's own calls, through the bridge and the host's client.
    assert report["viewCall"]["content"] == [{"type": "text", "text": "Oslo: 22.0"}]
    assert report["viewRead"]["contents"][0]["text"].startswith("<!DOCTYPE html>")
    assert ("cacheScope" in report["viewRead"]) == (era == "stateless")  # the era it spoke
