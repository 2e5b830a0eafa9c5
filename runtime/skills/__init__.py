"""Skills (SEP-2640, the ``io.modelcontextprotocol/skills`` extension): Agent Skills served
over MCP resources, listed with their digests, and verified by the host that loads them.

Server: ``SkillCatalog([Skill.from_folder("skills/pdf-processing")])`` on a ``Server`` with
``serve_skills(server, catalog)`` (``App.add_skill``/``App.skills_from`` do it for an app).
Host: ``SkillsClient(client)``: ``list()``, ``get(uri)``, ``load(entry)`` (the ``SKILL.md``,
verified), ``read(loaded, "references/FORMS.md")`` (a listed file, verified).

A feature layer beside ``auth`` and ``telemetry``. May import: ``endpoints`` and below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpbind.runtime._exports import install

if TYPE_CHECKING:
    from ._catalog import (
        SkillCatalog as SkillCatalog,
        SkillFile as SkillFile,
        SkillsExtension as SkillsExtension,
        serve_skills as serve_skills,
    )
    from ._client import (
        LoadedSkill as LoadedSkill,
        SkillsClient as SkillsClient,
        SkillVerificationError as SkillVerificationError,
    )
    from ._frontmatter import (
        FrontmatterError as FrontmatterError,
        parse_frontmatter as parse_frontmatter,
    )
    from ._skill import Skill as Skill, SkillError as SkillError, skills_in as skills_in
    from ._wire import (
        RESOURCES_DIRECTORY_READ as RESOURCES_DIRECTORY_READ,
        SKILLS_EXTENSION as SKILLS_EXTENSION,
        SKILLS_GET as SKILLS_GET,
        SKILLS_LIST as SKILLS_LIST,
        SkillEntry as SkillEntry,
        SkillResource as SkillResource,
        digest as digest,
    )

install(globals())
