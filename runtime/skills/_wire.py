"""The wire facts of the skills extension (``io.modelcontextprotocol/skills``, SEP-2640).

The extension is not in any ``schema.json``: its identifier, its three methods and the shapes
of its entries are written here after the extension's specification
(``specification/stable/skills.mdx`` of ``modelcontextprotocol/ext-skills``). A skill entry
carries the skill's ``SKILL.md`` frontmatter verbatim and, for each file, the digest
(``sha256:`` and 64 lowercase hex digits of the raw bytes) and size (the byte count) a host
verifies what it reads against.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

__all__ = [
    "DIRECTORY_MIME_TYPE",
    "MAX_RESOURCES",
    "MAX_TOTAL_BYTES",
    "RESOURCES_DIRECTORY_READ",
    "SKILLS_EXTENSION",
    "SKILLS_GET",
    "SKILLS_LIST",
    "SKILL_FILE",
    "SKILL_MIME_TYPE",
    "DirectoryReadParams",
    "GetSkillParams",
    "ListSkillsParams",
    "SkillEntry",
    "SkillResource",
    "digest",
    "name_error",
    "skill_name_of",
]

SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
# The extension's methods: the one place they are spelled (no schema holds them).
SKILLS_LIST: Final = "skills/list"
SKILLS_GET: Final = "skills/get"
RESOURCES_DIRECTORY_READ: Final = "resources/directory/read"

SKILL_FILE: Final = "SKILL.md"
SKILL_MIME_TYPE: Final = "text/markdown"
DIRECTORY_MIME_TYPE: Final = "inode/directory"
#: The per-skill limits every host must accept, and a server should not exceed ("Limits").
MAX_RESOURCES: Final = 512
MAX_TOTAL_BYTES: Final = 16 * 1024 * 1024

#: The Agent Skills naming rules: 1-64 lowercase letters, digits and hyphens; no hyphen first,
#: last or twice in a row.
_NAME = re.compile(r"(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def digest(data: bytes) -> str:
    """The extension's digest of a file's raw bytes: ``sha256:{64 lowercase hex}``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def name_error(name: object) -> str | None:
    """Why ``name`` breaks the Agent Skills naming rules; None if it keeps them."""
    if not isinstance(name, str) or not name:
        return "a skill name is a non-empty string"
    if _NAME.fullmatch(name) is None:
        return (
            f"skill name {name!r} must be 1-64 lowercase letters, digits and hyphens, "
            "with no hyphen first, last or twice in a row"
        )
    return None


def skill_name_of(uri: str) -> str | None:
    """The skill name a ``SKILL.md`` URI ends in (its final ``<skill-path>`` segment); None
    for a URI that is not ``<scheme>://<skill-path>/SKILL.md``."""
    _, sep, rest = uri.partition("://")
    segments = [s for s in rest.split("/") if s]
    if not sep or len(segments) < 2 or segments[-1] != SKILL_FILE:
        return None
    return segments[-2]


class _Wire(BaseModel):
    # Built on first use: only a server or client that speaks skills pays for the validators.
    model_config = ConfigDict(extra="allow", defer_build=True)


class SkillResource(_Wire):
    """One file of a skill: its URI, the digest and the size of its raw bytes."""

    uri: StrictStr
    digest: StrictStr = Field(pattern=_DIGEST.pattern)
    size: StrictInt = Field(ge=0)


class SkillEntry(_Wire):
    """A skill's entry in ``skills/list`` and ``skills/get``: the URI of its ``SKILL.md``, its
    frontmatter as written, and its complete file manifest (or ``"dynamic"``)."""

    uri: StrictStr
    frontmatter: dict[str, Any]
    resources: list[SkillResource] | Literal["dynamic"]

    @property
    def name(self) -> str:
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str:
        return str(self.frontmatter.get("description", ""))

    def listed(self, uri: str) -> SkillResource | None:
        """The manifest's entry for file ``uri``; None if unlisted (or the skill is dynamic)."""
        if isinstance(self.resources, str):
            return None
        return next((r for r in self.resources if r.uri == uri), None)


class _Params(_Wire):
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ListSkillsParams(_Params):
    cursor: StrictStr | None = None


class GetSkillParams(_Params):
    uri: StrictStr


class DirectoryReadParams(_Params):
    uri: StrictStr
    cursor: StrictStr | None = None
