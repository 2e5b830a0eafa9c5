"""The skills layer (SEP-2640): skills checked as made, the catalog's entries, the extension on
a bare ``Server``, and the host's verification, over the in-memory transport."""

from __future__ import annotations

import hashlib
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from mcpbind.generated.v2025_11_25 import methods
from mcpbind.runtime import CapabilityError, Client, InvalidResultError, McpError, Server
from mcpbind.runtime.core.bindings import Bindings
from mcpbind.runtime.core.routing import Handler
from mcpbind.runtime.endpoints.middleware import CallNext, IncomingCall
from mcpbind.runtime.skills import (
    RESOURCES_DIRECTORY_READ,
    SKILLS_GET,
    SKILLS_LIST,
    FrontmatterError,
    Skill,
    SkillCatalog,
    SkillError,
    SkillsClient,
    SkillVerificationError,
    digest,
    parse_frontmatter,
    serve_skills,
    skills_in,
)

pytestmark = pytest.mark.anyio

SKILL_MD = (
    "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDFs\n---\n\nBody.\n"
)
FORMS = "# Forms\n"
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"


def pdf_skill(**extra: str | bytes) -> Skill:
    return Skill({"SKILL.md": SKILL_MD, "references/FORMS.md": FORMS, **extra})


def skill_md(name: str = "pdf-processing", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: Does things\n{extra}---\nBody\n"


# -- skills, checked as they are made ---------------------------------------------------------


def test_a_skill_from_code_keeps_its_frontmatter_and_files_in_manifest_order() -> None:
    skill = Skill(
        {"scripts/b.py": b"\x00\xff", "SKILL.md": skill_md(extra="license: MIT\n"), "a.md": "a"},
        prefix="acme/billing",
    )
    assert skill.path == "acme/billing/pdf-processing"
    assert skill.frontmatter == {
        "name": "pdf-processing",
        "description": "Does things",
        "license": "MIT",
    }
    assert list(skill.files) == ["SKILL.md", "a.md", "scripts/b.py"]
    assert skill.files["scripts/b.py"] == b"\x00\xff"


@pytest.mark.parametrize(
    ("files", "prefix", "message"),
    [
        ({"README.md": "x"}, "", "must contain SKILL.md"),
        ({"SKILL.md": "no frontmatter"}, "", "does not begin with"),
        ({"SKILL.md": "---\n- a\n---\n"}, "", "not a YAML mapping"),
        ({"SKILL.md": "---\nname: [\n---\n"}, "", "not valid YAML"),
        ({"SKILL.md": "---\nname: pdf\n---\n"}, "", "no non-empty 'description'"),
        ({"SKILL.md": "---\ndescription: d\n---\n"}, "", "no non-empty 'name'"),
        ({"SKILL.md": skill_md("PDF")}, "", "lowercase letters"),
        ({"SKILL.md": skill_md("pdf--tools")}, "", "twice in a row"),
        ({"SKILL.md": skill_md("-pdf")}, "", "lowercase letters"),
        ({"SKILL.md": skill_md("p" * 65)}, "", "1-64"),
        ({"SKILL.md": skill_md(), "../escape.md": "x"}, "", "inside the skill"),
        ({"SKILL.md": skill_md(), "/abs.md": "x"}, "", "inside the skill"),
        ({"SKILL.md": skill_md(), "a\\b.md": "x"}, "", "inside the skill"),
        ({"SKILL.md": skill_md(), "a//b.md": "x"}, "", "inside the skill"),
        ({"SKILL.md": b"\xff\xfe"}, "", "not UTF-8"),
        (
            {"SKILL.md": skill_md(extra="metadata:\n  io.modelcontextprotocol/x: 1\n")},
            "",
            "reserved",
        ),
        ({"SKILL.md": skill_md()}, "acme/bad segment", "plain URI segment"),
        ({"SKILL.md": skill_md()}, "acme/..", "plain URI segment"),
    ],
)
def test_a_skill_that_breaks_a_rule_is_refused_with_the_rule(
    files: dict[str, str | bytes], prefix: str, message: str
) -> None:
    with pytest.raises(SkillError, match=message):
        Skill(files, prefix=prefix)


def test_the_limits_are_enforced() -> None:
    many = {f"f{i}.txt": "x" for i in range(512)}
    with pytest.raises(SkillError, match="513 files; the limit is 512"):
        Skill({"SKILL.md": skill_md(), **many})
    Skill({"SKILL.md": skill_md(), **dict(list(many.items())[:511])})
    with pytest.raises(SkillError, match="the limit is 16777216"):
        Skill({"SKILL.md": skill_md(), "big.bin": bytes(16 * 1024 * 1024)})


def test_a_skill_from_a_folder(tmp_path: Path) -> None:
    root = tmp_path / "pdf-processing"
    (root / "references").mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD)
    (root / "references" / "FORMS.md").write_text(FORMS)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref")
    skill = Skill.from_folder(root)
    assert list(skill.files) == ["SKILL.md", "references/FORMS.md"]
    assert skills_in(tmp_path)[0].path == "pdf-processing"
    assert skills_in(root)[0].path == "pdf-processing"


def test_a_folder_named_unlike_its_skill_or_linking_out_is_refused(tmp_path: Path) -> None:
    wrong = tmp_path / "other-name"
    wrong.mkdir()
    (wrong / "SKILL.md").write_text(SKILL_MD)
    with pytest.raises(SkillError, match="its folder must have that name"):
        Skill.from_folder(wrong)
    root = tmp_path / "pdf-processing"
    root.mkdir()
    (root / "SKILL.md").write_text(SKILL_MD)
    (tmp_path / "secret.txt").write_text("secret")
    os.symlink(tmp_path / "secret.txt", root / "leak.txt")
    with pytest.raises(SkillError, match="links outside"):
        Skill.from_folder(root)
    big = tmp_path / "big-skill"
    big.mkdir()
    (big / "SKILL.md").write_text(skill_md("big-skill"))
    for i in range(512):
        (big / f"f{i}.txt").write_text("x")
    with pytest.raises(SkillError, match="more than 512 files"):
        Skill.from_folder(big)
    with pytest.raises(SkillError, match="is not a folder"):
        skills_in(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SkillError, match="holds no skill"):
        skills_in(tmp_path / "empty")


def test_frontmatter_follows_the_yaml_1_2_core_schema() -> None:
    text = (
        "\ufeff---\nname: a\ndescription: yes\nversion: 017\ndate: 2024-01-01\n"
        "flag: true\nnone: ~\nmetadata:\n  tags: [on, 1.5]\n---\n"
    )
    assert parse_frontmatter(text) == {
        "name": "a",
        "description": "yes",
        "version": 17,
        "date": "2024-01-01",
        "flag": True,
        "none": None,
        "metadata": {"tags": ["on", 1.5]},
    }
    for bad in ("---\na: 1\na: 2\n---\n", "---\n1: a\n---\n", "---\na: .inf\n---\n", "text"):
        with pytest.raises(FrontmatterError):
            parse_frontmatter(bad)


# -- the catalog ------------------------------------------------------------------------------


def test_an_entry_lists_every_file_with_its_digest_and_size() -> None:
    catalog = SkillCatalog([pdf_skill(**{"bin/x.dat": b"\x00\xff"})])
    entry = catalog.entries()[0]
    assert entry["uri"] == "skill://pdf-processing/SKILL.md"
    assert entry["frontmatter"]["name"] == "pdf-processing"
    sha = "sha256:" + hashlib.sha256(SKILL_MD.encode()).hexdigest()
    assert entry["resources"][0] == {
        "uri": "skill://pdf-processing/SKILL.md",
        "digest": sha,
        "size": len(SKILL_MD.encode()),
    }
    assert [r["uri"] for r in entry["resources"]] == [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/bin/x.dat",
        "skill://pdf-processing/references/FORMS.md",
    ]
    blob = catalog.read("skill://pdf-processing/bin/x.dat")
    assert blob == {
        "contents": [
            {"uri": "skill://pdf-processing/bin/x.dat", "mimeType": "application/octet-stream",
             "blob": "AP8="}
        ]
    }  # fmt: skip
    skill_md_resource = catalog.resources()[0]
    assert skill_md_resource["mimeType"] == "text/markdown"
    assert skill_md_resource["name"] == "pdf-processing"
    assert skill_md_resource["description"] == "Extract, fill, and assemble PDFs"


def test_a_second_skill_at_the_same_uri_is_refused_and_one_can_be_removed() -> None:
    catalog = SkillCatalog([pdf_skill()])
    with pytest.raises(SkillError, match="already served"):
        catalog.add(pdf_skill())
    catalog.remove("skill://pdf-processing/SKILL.md")
    assert catalog.entries() == [] and catalog.resources() == []
    with pytest.raises(ValueError, match="page_size"):
        SkillCatalog(page_size=0)


# -- on the wire ------------------------------------------------------------------------------


@asynccontextmanager
async def connected(
    server: Server, version: str = MODERN
) -> AsyncIterator[tuple[Client, SkillsClient]]:
    async with Client(server, protocol_version=version) as client:
        yield client, SkillsClient(client)


def skills_server(*skills: Skill, page_size: int = 50) -> tuple[Server, list[str]]:
    """A bare server serving ``skills``, and the URIs of the resources read from it."""
    server = Server("skills")
    serve_skills(server, SkillCatalog(skills, page_size=page_size))
    reads: list[str] = []

    async def count(call: IncomingCall, call_next: CallNext) -> Any:
        if call.method == methods.RESOURCES_READ.method and call.params:
            reads.append(call.params["uri"])
        return await call_next()

    server.add_middleware(count)
    return server, reads


async def raw(client: Client, method: str, params: dict[str, Any]) -> Any:
    return await SkillsClient(client)._request(method, params)


async def test_list_get_load_and_read_without_reading_ahead() -> None:
    other = Skill({"SKILL.md": skill_md("git-workflow")}, prefix="team")
    server, reads = skills_server(pdf_skill(), other, page_size=1)
    async with connected(server) as (client, skills):
        assert client.server_capabilities["extensions"] == {
            "io.modelcontextprotocol/skills": {"directoryRead": True}
        }
        assert "resources" in client.server_capabilities
        entries = await skills.list()  # two pages of one
        assert [e.uri for e in entries] == [
            "skill://pdf-processing/SKILL.md",
            "skill://team/git-workflow/SKILL.md",
        ]
        assert (await skills.get(entries[1].uri)) == entries[1]
        assert reads == []  # listing and getting fetch no file
        loaded = await skills.load(entries[0])
        assert reads == ["skill://pdf-processing/SKILL.md"]
        assert loaded.body == "\nBody.\n" and loaded.root == "skill://pdf-processing"
        assert await skills.read(loaded, "references/FORMS.md") == FORMS.encode()
        by_uri = await skills.load("skill://team/git-workflow/SKILL.md")
        assert by_uri.entry.name == "git-workflow"
        page = await raw(client, SKILLS_LIST, {})
        assert page["ttlMs"] == 0 and page["cacheScope"] == "private"
        assert page["resultType"] == "complete" and page["nextCursor"] == "1"


async def test_directories_are_read_one_level_at_a_time() -> None:
    server, _ = skills_server(pdf_skill(**{"references/deep/x.md": "x"}), page_size=1)
    async with connected(server) as (_, skills):
        root = await skills.read_directory("skill://pdf-processing")
        assert root == [
            {"uri": "skill://pdf-processing/SKILL.md", "name": "pdf-processing",
             "mimeType": "text/markdown", "description": "Extract, fill, and assemble PDFs",
             "size": len(SKILL_MD)},
            {"uri": "skill://pdf-processing/references", "name": "references",
             "mimeType": "inode/directory"},
        ]  # fmt: skip
        nested = await skills.read_directory("skill://pdf-processing/references")
        assert [c["uri"] for c in nested] == [
            "skill://pdf-processing/references/FORMS.md",
            "skill://pdf-processing/references/deep",
        ]


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        (SKILLS_GET, {"uri": "skill://nope/SKILL.md"}, "No skill is served at"),
        (SKILLS_GET, {}, "Invalid params: uri"),
        (SKILLS_GET, {"uri": 7}, "Invalid params: uri"),
        (SKILLS_LIST, {"cursor": "99"}, "unknown cursor"),
        (SKILLS_LIST, {"cursor": "x"}, "unknown cursor"),
        (SKILLS_LIST, {"cursor": "\u00b2"}, "unknown cursor"),
        (SKILLS_LIST, {"cursor": "9" * 5000}, "unknown cursor"),
        (RESOURCES_DIRECTORY_READ, {"uri": "skill://pdf-processing", "cursor": "-1"}, "cursor"),
        (RESOURCES_DIRECTORY_READ, {"uri": "skill://pdf-processing/SKILL.md"}, "not a directory"),
        (RESOURCES_DIRECTORY_READ, {"uri": "skill://nope"}, "not a directory"),
        (RESOURCES_DIRECTORY_READ, {"uri": "skill://pdf-processing/refs"}, "not a directory"),
    ],
)
async def test_bad_requests_get_invalid_params(
    method: str, params: dict[str, Any], message: str
) -> None:
    server, _ = skills_server(pdf_skill())
    async with connected(server) as (client, _):
        with pytest.raises(McpError, match=message) as caught:
            await raw(client, method, params)
        assert caught.value.code == -32602
        assert len(await SkillsClient(client).list()) == 1  # the session goes on


async def test_a_handshake_revision_has_no_extension() -> None:
    server, _ = skills_server(pdf_skill())
    async with connected(server, HANDSHAKE) as (client, skills):
        assert "extensions" not in client.server_capabilities
        assert skills.settings is None
        with pytest.raises(CapabilityError, match="did not declare"):
            await skills.list()
        spec = client.session.bindings.methods[methods.RESOURCES_READ.method]
        result = await client.send_request(spec, {"uri": "skill://pdf-processing/SKILL.md"})
        assert result.contents[0].text == SKILL_MD  # the files are ordinary resources


# -- verification -----------------------------------------------------------------------------


def tampering_server(alter: Callable[[str], str], catalog: SkillCatalog | None = None) -> Server:
    """A server whose entries describe ``pdf_skill`` but whose SKILL.md reads are altered."""
    catalog = catalog or SkillCatalog([pdf_skill()])
    server = Server("tampering")
    serve_skills(server, catalog, resources=False)

    @server.handler(methods.RESOURCES_READ)
    async def read(params: Any, context: Any) -> Any:
        found = catalog.read(params.uri)
        assert found is not None
        content = found["contents"][0]
        if params.uri.endswith("/SKILL.md"):
            content = {**content, "text": alter(content["text"])}
        return {"contents": [content]}

    return server


@pytest.mark.parametrize(
    ("alter", "reason"),
    [
        (lambda t: t.replace("Body.", "Evil."), "digest"),
        (lambda t: t + "more", "size"),
        (lambda t: t[:-1], "size"),
    ],
)
async def test_a_file_unlike_its_entry_is_not_used(
    alter: Callable[[str], str], reason: str
) -> None:
    async with connected(tampering_server(alter)) as (_, skills):
        entry = (await skills.list())[0]
        with pytest.raises(SkillVerificationError) as caught:
            await skills.load(entry)
        assert caught.value.reason == reason
        assert caught.value.uri == entry.uri


async def test_frontmatter_unlike_the_entrys_is_not_loaded() -> None:
    evil = SKILL_MD.replace("Extract, fill, and assemble PDFs", "Exfiltrate credentials")
    # A server whose entry carries the digest of what it serves, but the old frontmatter
    # (the catalog's own entry, edited in place).
    catalog = SkillCatalog([pdf_skill()])
    entry = catalog.entries()[0]
    entry["resources"][0] = {
        "uri": entry["uri"],
        "digest": digest(evil.encode()),
        "size": len(evil.encode()),
    }
    async with connected(tampering_server(lambda _: evil, catalog)) as (_, skills):
        with pytest.raises(SkillVerificationError, match=r"\['description'\]") as caught:
            await skills.load((await skills.list())[0])
        assert caught.value.reason == "frontmatter"


async def test_an_entry_whose_uri_is_not_its_name_is_not_loaded() -> None:
    server, reads = skills_server(pdf_skill())
    async with connected(server) as (_, skills):
        entry = (await skills.list())[0]
        renamed = entry.model_copy(update={"frontmatter": {**entry.frontmatter, "name": "pdf"}})
        with pytest.raises(SkillVerificationError, match="does not end in") as caught:
            await skills.load(renamed)
        assert caught.value.reason == "frontmatter"
        assert reads == []


async def test_an_unlisted_file_is_refused_before_it_is_read() -> None:
    server, reads = skills_server(pdf_skill())
    async with connected(server) as (_, skills):
        loaded = await skills.load((await skills.list())[0])
        with pytest.raises(SkillVerificationError) as caught:
            await skills.read(loaded, "references/NEW.md")
        assert caught.value.reason == "unlisted"
        assert reads == ["skill://pdf-processing/SKILL.md"]


class _Malformed:
    """An extension answering ``skills/list`` with an entry that has no ``resources``."""

    identifier = "io.modelcontextprotocol/skills"

    def settings(self, bindings: Bindings) -> dict[str, Any] | None:
        return {}

    def handler(self, bindings: Bindings, method: str) -> Handler | None:
        async def answer(params: Any, context: Any) -> Any:
            return {"skills": [{"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a"}}]}

        return answer if method == SKILLS_LIST else None


async def test_a_malformed_entry_is_an_invalid_result() -> None:
    server = Server("malformed")
    server.add_extension(_Malformed())
    async with connected(server) as (_, skills):
        with pytest.raises(InvalidResultError, match="malformed skill entry"):
            await skills.list()
        with pytest.raises(CapabilityError, match="directoryRead"):
            await skills.read_directory("skill://a")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=st.dictionaries(
        st.from_regex(r"[a-z]{1,8}(/[a-z]{1,8})?\.(md|bin)", fullmatch=True),
        st.binary(max_size=64) | st.text(max_size=64),
        max_size=4,
    )
)
async def test_whatever_the_files_hold_they_verify(files: dict[str, str | bytes]) -> None:
    skill = Skill({**files, "SKILL.md": SKILL_MD})
    server, _ = skills_server(skill)
    async with connected(server) as (_, skills):
        loaded = await skills.load((await skills.list())[0])
        for relative, content in skill.files.items():
            assert await skills.read(loaded, relative) == content


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    method=st.sampled_from([SKILLS_LIST, SKILLS_GET, RESOURCES_DIRECTORY_READ]),
    params=st.dictionaries(st.sampled_from(["uri", "cursor", "x"]), _JSON, max_size=3),
)
async def test_any_params_get_a_result_or_invalid_params(
    method: str, params: dict[str, Any]
) -> None:
    server, _ = skills_server(pdf_skill(), page_size=1)
    async with connected(server) as (client, _):
        try:
            result = await raw(client, method, params)
        except McpError as exc:
            assert exc.code == -32602, exc
        else:
            assert result["resultType"] == "complete"
