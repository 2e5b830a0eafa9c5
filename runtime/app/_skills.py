"""The app's skills (SEP-2640): ``app.add_skill(...)`` and ``app.skills_from(folder)``.

Each file of a skill becomes an ordinary resource of the app (its ``SKILL.md`` named and
described by its frontmatter), so ``resources/list`` and ``resources/read`` serve them with
the app's own paging, caching hints and ``enable``/``disable`` tags; the skills extension
(``skills/list``, ``skills/get``, ``resources/directory/read``) answers from the catalog. A base
of ``App``, kept apart to keep that module small.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._visible import VisibleRegistries

if TYPE_CHECKING:
    # The skills layer (and PyYAML) is imported by the first skill added, not by every app.
    from mcpbind.runtime.skills import Skill, SkillCatalog, SkillFile

__all__ = ["AppSkills"]


def _content(file: SkillFile) -> Callable[[], str | bytes]:
    value: str | bytes = file.text if file.text is not None else file.data

    def read() -> str | bytes:
        return value

    return read


class AppSkills(VisibleRegistries):
    """What ``App`` has that these need, and the methods."""

    page_size: int | None
    cache_members: dict[str, Any]
    add_resource: Callable[..., None]
    remove_resource: Callable[[str], None]
    #: The skills served (``None`` until the first is added, so an app without skills
    #: declares no extension).
    skills: SkillCatalog | None = None

    def add_skill(
        self,
        skill: Skill | Mapping[str, str | bytes],
        *,
        prefix: str = "",
    ) -> Skill:
        """Serve ``skill`` (a ``Skill``, or its files: ``{"SKILL.md": ..., "path": ...}``,
        under ``prefix``); ``SkillError`` for one that breaks the extension's rules, or that
        another skill already has the URI of."""
        from mcpbind.runtime.skills import Skill, SkillCatalog, SkillError, SkillsExtension

        made = skill if isinstance(skill, Skill) else Skill(skill, prefix=prefix)
        catalog = self.skills
        if catalog is None:
            catalog = self.skills = SkillCatalog(
                page_size=self.page_size or 50,
                ttl_ms=self.cache_members["ttlMs"],
                cache_scope=self.cache_members["cacheScope"],
            )
            self.server.add_extension(SkillsExtension(catalog))
        entry = catalog.add(made)
        taken = [r["uri"] for r in entry["resources"] if r["uri"] in self.resources]
        if taken:
            catalog.remove(entry["uri"])
            raise SkillError(f"{taken[0]} is already a resource of the app")
        for listed in entry["resources"]:
            file = catalog.file(listed["uri"])
            assert file is not None
            self.add_resource(
                _content(file),
                file.uri,
                name=file.name,
                description=file.description,
                mime_type=file.mime_type,
            )
        return made

    def remove_skill(self, skill: Skill | str) -> None:
        """Stop serving ``skill`` (one added, or its path: ``"pdf-processing"``,
        ``"team/pdf-processing"`` under a prefix) and its files' resources; clients are told.
        ``KeyError`` if no such skill is served."""
        path = skill if isinstance(skill, str) else skill.path
        catalog = self.skills
        entry = catalog.entry(catalog.skill_uri(path)) if catalog is not None else None
        if catalog is None or entry is None:
            raise KeyError(f"no skill {path!r} is served")
        catalog.remove(entry["uri"])
        for listed in entry["resources"]:
            self.remove_resource(listed["uri"])

    def skills_from(self, folder: str | Path, *, prefix: str = "") -> list[Skill]:
        """Serve the skills of ``folder``: the skill it holds, or each subfolder's (folders
        named as their skills, with a ``SKILL.md``); ``SkillError`` names what is wrong."""
        from mcpbind.runtime.skills import skills_in

        found = skills_in(folder, prefix=prefix)
        for skill in found:
            self.add_skill(skill)
        return found
