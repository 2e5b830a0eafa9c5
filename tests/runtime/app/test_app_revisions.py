"""Results shaped for the revision each client negotiated: what a revision lacks is dropped
or converted, never sent to fail the call; what the stateless era requires is filled in."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from app_helpers import REVISIONS, STATELESS, wire
from mcpbind.generated.v2026_07_28 import types as t26
from mcpbind.runtime.app import App
from pydantic import BaseModel

pytestmark = pytest.mark.anyio

ICON = {"src": "https://example.com/icon.png", "mimeType": "image/png"}

#: Per revision: (Tool members, content types of the mixed result, structuredContent?).
EXPECTED: dict[str, tuple[set[str], list[str], bool]] = {
    "2024-11-05": ({"name", "description", "inputSchema"}, ["text", "text"], False),
    "2025-03-26": (
        {"name", "description", "inputSchema", "annotations"},
        ["text", "text", "audio"],
        False,
    ),
    "2025-06-18": (
        {"name", "description", "inputSchema", "annotations", "title", "outputSchema"},
        ["text", "resource_link", "audio"],
        True,
    ),
    "2025-11-25": (
        {"name", "description", "inputSchema", "annotations", "title", "outputSchema", "icons"},
        ["text", "resource_link", "audio"],
        True,
    ),
    STATELESS: (
        {"name", "description", "inputSchema", "annotations", "title", "outputSchema", "icons"},
        ["text", "resource_link", "audio"],
        True,
    ),
}


class Reading(BaseModel):
    value: float


def mixed_app(**options: Any) -> App:
    app = App("mixed", **options)

    @app.tool(title="Mixed", annotations={"readOnlyHint": True, "title": "Mixed"}, icons=[ICON])
    def mixed() -> list[Any]:
        """Every kind of content."""
        return [
            t26.TextContent(text="hello"),
            t26.ResourceLink(uri="file:///report.pdf", name="report", mimeType="application/pdf"),
            t26.AudioContent(data="AAAA", mimeType="audio/wav"),
        ]

    @app.tool(title="Measure")
    def measure() -> Reading:
        """A structured reading."""
        return Reading(value=1.5)

    @app.resource("data://one", title="One", icons=[ICON])
    def one() -> str:
        return "1"

    @app.prompt(title="Speak", icons=[ICON])
    def speak() -> list[Any]:
        return [
            "say it",
            {"role": "assistant", "content": t26.AudioContent(data="AAAA", mimeType="audio/wav")},
        ]

    return app


@pytest.mark.parametrize("revision", REVISIONS)
async def test_tools_fit_each_revision(revision: str, caplog: pytest.LogCaptureFixture) -> None:
    members, kinds, structured = EXPECTED[revision]
    caplog.set_level(logging.WARNING, "mcpbind.app")
    async with wire(mixed_app(), revision) as peer:
        listed = await peer.result("tools/list")
        mixed = await peer.call("mixed")
        measured = await peer.call("measure")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert set(tools["mixed"]) == members
    if "annotations" in members:
        expected = {"readOnlyHint": True, "title": "Mixed"}
        assert tools["mixed"]["annotations"] == expected
    assert [block["type"] for block in mixed["content"]] == kinds
    if "resource_link" not in kinds:
        assert mixed["content"][1] == {
            "type": "text",
            "text": "Resource link: report <file:///report.pdf> (application/pdf)",
        }
    if "audio" not in kinds:
        assert "'audio' content block left out" in caplog.text
        assert revision in caplog.text
    assert ("structuredContent" in measured) is structured
    assert measured["content"] == [{"type": "text", "text": '{\n  "value": 1.5\n}'}]
    if revision == STATELESS:
        assert listed["resultType"] == "complete"
        assert listed["ttlMs"] == 0 and listed["cacheScope"] == "private"
        assert mixed["resultType"] == "complete"
    else:
        assert "resultType" not in listed and "ttlMs" not in listed
        assert "resultType" not in mixed


@pytest.mark.parametrize("revision", REVISIONS)
async def test_resources_and_prompts_fit_each_revision(revision: str) -> None:
    members = EXPECTED[revision][0]
    async with wire(mixed_app(), revision) as peer:
        resources = await peer.result("resources/list")
        read = await peer.result("resources/read", {"uri": "data://one"})
        prompts = await peer.result("prompts/list")
        spoken = await peer.result("prompts/get", {"name": "speak"})
    resource = resources["resources"][0]
    assert ("title" in resource) is ("title" in members)
    assert ("icons" in resource) is ("icons" in members)
    assert read["contents"] == [{"uri": "data://one", "text": "1", "mimeType": "text/plain"}]
    prompt = prompts["prompts"][0]
    assert ("title" in prompt) is ("title" in members)
    roles = [message["role"] for message in spoken["messages"]]
    # Audio in a prompt message arrived with 2025-03-26; before it the message is left out.
    assert roles == (["user"] if revision == "2024-11-05" else ["user", "assistant"])
    if revision == STATELESS:
        assert read["ttlMs"] == 0 and read["resultType"] == "complete"
        assert spoken["resultType"] == "complete" and "ttlMs" not in spoken


async def test_cache_members_are_the_apps_choice() -> None:
    app = mixed_app(ttl_ms=60_000, cache_scope="public")
    async with wire(app, STATELESS) as peer:
        listed = await peer.result("tools/list")
    assert (listed["ttlMs"], listed["cacheScope"]) == (60_000, "public")
