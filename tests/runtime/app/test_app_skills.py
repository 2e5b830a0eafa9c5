"""Skills (SEP-2640) served by an ``App``: from a folder and from code, listed, loaded and
verified by ``SkillsClient`` in memory and over Streamable HTTP."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from app_helpers import STATELESS
from mcpbind.generated import v2025_11_25
from mcpbind.runtime import Client, McpError
from mcpbind.runtime.app import App
from mcpbind.runtime.http import serving
from mcpbind.runtime.skills import SkillError, SkillsClient
from mcpbind.runtime.testing import connect

pytestmark = pytest.mark.anyio

FOLDER = Path(__file__).resolve().parents[2] / "conformance" / "skills"
REFUNDS = "---\nname: refunds\ndescription: Refund requests, per policy\nlicense: MIT\n---\nHi\n"


def skills_app() -> App:
    app = App("skills", page_size=2)
    app.skills_from(FOLDER)
    app.add_skill({"SKILL.md": REFUNDS, "examples/email.md": "Dear customer\n"}, prefix="acme")

    @app.resource("text://plain")
    def plain() -> str:
        return "not a skill"

    return app


async def check_the_skills(client: Client) -> None:
    skills = SkillsClient(client)
    assert skills.settings == {"directoryRead": True}
    entries = await skills.list()
    assert [e.uri for e in entries] == [
        "skill://git-workflow/SKILL.md",
        "skill://pdf-processing/SKILL.md",
        "skill://acme/refunds/SKILL.md",
    ]
    refunds = entries[2]
    assert refunds.frontmatter == {
        "name": "refunds",
        "description": "Refund requests, per policy",
        "license": "MIT",
    }
    loaded = await skills.load(refunds)
    assert loaded.body == "Hi\n"
    assert await skills.read(loaded, "examples/email.md") == b"Dear customer\n"
    pdf = await skills.load(entries[1])
    forms = (FOLDER / "pdf-processing" / "references" / "FORMS.md").read_bytes()
    assert await skills.read(pdf, "references/FORMS.md") == forms
    children = await skills.read_directory("skill://pdf-processing")
    assert {c["uri"]: c["mimeType"] for c in children} == {
        "skill://pdf-processing/SKILL.md": "text/markdown",
        "skill://pdf-processing/references": "inode/directory",
        "skill://pdf-processing/scripts": "inode/directory",
    }
    with pytest.raises(McpError) as caught:
        await skills.get("skill://acme/unknown/SKILL.md")
    assert caught.value.code == -32602


async def test_an_app_serves_its_skills_in_memory() -> None:
    app = skills_app()
    async with connect(app, protocol_version=STATELESS) as client:
        await check_the_skills(client)
        listed = await client.list_all(client.session.bindings.methods["resources/list"])
        uris = [r.uri for r in listed]
        assert "text://plain" in uris
        assert "skill://acme/refunds/examples/email.md" in uris
        skill_md = next(r for r in listed if r.uri == "skill://acme/refunds/SKILL.md")
        assert (skill_md.name, skill_md.description, skill_md.mimeType) == (
            "refunds",
            "Refund requests, per policy",
            "text/markdown",
        )


async def test_an_app_serves_its_skills_over_streamable_http() -> None:
    async with (
        serving(skills_app().http_app()) as base,
        Client(f"{base}/mcp", protocol_version=STATELESS) as client,
    ):
        await check_the_skills(client)


async def test_a_handshake_client_sees_the_files_but_no_extension() -> None:
    async with connect(skills_app(), protocol_version="2025-11-25") as client:
        assert "extensions" not in client.server_capabilities
        spec = client.session.bindings.methods["resources/read"]
        result = await client.send_request(spec, {"uri": "skill://acme/refunds/SKILL.md"})
        assert result.contents[0].text == REFUNDS


async def test_an_app_without_skills_declares_no_extension() -> None:
    app = App("plain")

    @app.tool()
    def echo(text: str) -> str:
        return text

    async with connect(app, protocol_version=STATELESS) as client:
        assert "extensions" not in client.server_capabilities
        assert app.skills is None


def test_bad_skills_are_refused_and_leave_the_app_as_it_was(tmp_path: Path) -> None:
    app = skills_app()
    before = dict(app.resources)
    with pytest.raises(SkillError, match="lowercase"):
        app.add_skill({"SKILL.md": "---\nname: Bad\ndescription: d\n---\n"})
    with pytest.raises(SkillError, match="already served"):
        app.skills_from(FOLDER / "pdf-processing")
    app.resource("skill://taken/SKILL.md")(lambda: "mine")
    with pytest.raises(SkillError, match="already a resource of the app"):
        app.add_skill({"SKILL.md": "---\nname: taken\ndescription: d\n---\n"})
    with pytest.raises(SkillError, match="holds no skill"):
        app.skills_from(tmp_path)
    assert app.skills is not None
    assert len(app.skills) == 3
    assert set(app.resources) == set(before) | {"skill://taken/SKILL.md"}


async def test_skills_added_and_removed_while_serving_are_told_once_each() -> None:
    app = skills_app()
    heard: list[str] = []
    async with connect(app, protocol_version="2025-11-25") as client:
        spec = v2025_11_25.methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED

        async def on_change(params: object, session: object) -> None:
            heard.append(spec.method)

        client.add_notification_handler(spec, on_change)
        await client.ping()
        read = client.session.bindings.methods["resources/read"]
        # Three files, one step: one notification, sent once all three are served.
        added = app.add_skill(
            {"SKILL.md": skill_md("returns"), "a.md": "a", "b/c.md": "c"}, prefix="acme"
        )
        await wait_for(heard, 1)
        result = await client.send_request(read, {"uri": "skill://acme/returns/b/c.md"})
        assert result.contents[0].text == "c"
        app.remove_skill(added)
        await wait_for(heard, 2)
        with pytest.raises(McpError):
            await client.send_request(read, {"uri": "skill://acme/returns/a.md"})
        app.remove_skill("pdf-processing")
        await wait_for(heard, 3)
        await anyio.sleep(0.1)
    assert heard == [spec.method] * 3
    assert app.skills is not None
    assert [e["uri"] for e in app.skills.entries()] == [
        "skill://git-workflow/SKILL.md",
        "skill://acme/refunds/SKILL.md",
    ]
    assert not [uri for uri in app.resources if uri.startswith("skill://pdf-processing/")]
    async with connect(app, protocol_version=STATELESS) as client:
        listed = await SkillsClient(client).list()
    assert [e.uri for e in listed] == [e["uri"] for e in app.skills.entries()]


async def test_a_skill_not_served_cannot_be_removed() -> None:
    with pytest.raises(KeyError, match="no skill 'refunds' is served"):
        App("none").remove_skill("refunds")
    app = skills_app()
    with pytest.raises(KeyError, match="no skill 'refunds' is served"):
        app.remove_skill("refunds")  # it is served under its prefix: acme/refunds
    app.remove_skill("acme/refunds")
    assert "skill://acme/refunds/SKILL.md" not in app.resources


def skill_md(name: str) -> str:
    return f"---\nname: {name}\ndescription: d\n---\nBody\n"


async def wait_for(heard: list[str], count: int) -> None:
    with anyio.fail_after(5):
        while len(heard) < count:
            await anyio.sleep(0.01)
