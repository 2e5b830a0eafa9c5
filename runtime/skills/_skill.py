"""A skill as a server serves it: its ``SKILL.md`` and supporting files, checked once.

A ``Skill`` is made from a folder (``Skill.from_folder``) or from files given in code
(``Skill({"SKILL.md": text, "references/GUIDE.md": ...})``). Everything a server must not
serve is refused here with a ``SkillError`` naming the rule: no ``SKILL.md``, a frontmatter
that is not YAML or lacks ``name``/``description``, a name against the Agent Skills naming
rules (or, from a folder, unlike the folder's name), a file path that leaves the skill, a skill
past the extension's limits (512 files, 16 MiB), metadata keys under the reserved
``io.modelcontextprotocol/`` prefix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from ._frontmatter import FrontmatterError, parse_frontmatter
from ._wire import MAX_RESOURCES, MAX_TOTAL_BYTES, SKILL_FILE, name_error

__all__ = ["Skill", "SkillError", "skills_in"]

#: Prefix segments kept to what needs no escaping in a URI's authority and path (RFC 3986
#: unreserved characters): the first one is the authority.
_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+")
_RESERVED_METADATA = "io.modelcontextprotocol/"


class SkillError(ValueError):
    """A skill that breaks a rule of the skills extension or of the Agent Skills format."""


def _check_path(relative: str) -> str:
    segments = relative.split("/")
    if (
        not relative
        or "\\" in relative
        or "\x00" in relative
        or any(s in ("", ".", "..") for s in segments)
    ):
        raise SkillError(f"file path {relative!r} is not a relative path inside the skill")
    return relative


def _check_frontmatter(text: str) -> dict[str, Any]:
    try:
        frontmatter = parse_frontmatter(text)
    except FrontmatterError as exc:
        raise SkillError(f"{SKILL_FILE}: {exc}") from exc
    for field in ("name", "description"):
        value = frontmatter.get(field)
        if not isinstance(value, str) or not value:
            raise SkillError(f"{SKILL_FILE}: the frontmatter has no non-empty {field!r}")
    problem = name_error(frontmatter["name"])
    if problem is not None:
        raise SkillError(f"{SKILL_FILE}: {problem}")
    metadata = frontmatter.get("metadata")
    if isinstance(metadata, dict):
        keys: list[str] = list(cast("dict[str, Any]", metadata))
        reserved = sorted(k for k in keys if k.startswith(_RESERVED_METADATA))
        if reserved:
            raise SkillError(
                f"{SKILL_FILE}: metadata keys {reserved} use the prefix {_RESERVED_METADATA!r}, "
                "reserved for MCP extensions"
            )
    return frontmatter


class Skill:
    """One skill: ``files`` maps each path relative to the skill's root (``/``-separated) to
    its content (``str`` is stored as UTF-8); ``prefix`` is the organizational path before the
    skill's name in its URI (``acme/billing`` for ``skill://acme/billing/refunds/SKILL.md``)."""

    def __init__(self, files: Mapping[str, str | bytes], *, prefix: str = "") -> None:
        stored: dict[str, bytes] = {}
        for relative, content in files.items():
            data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
            stored[_check_path(relative)] = data
        raw = stored.get(SKILL_FILE)
        if raw is None:
            raise SkillError(f"a skill must contain {SKILL_FILE} at its root")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SkillError(f"{SKILL_FILE} is not UTF-8 text") from exc
        self.frontmatter: dict[str, Any] = _check_frontmatter(text)
        self.name: str = self.frontmatter["name"]
        self.description: str = self.frontmatter["description"]
        segments = [s for s in prefix.split("/") if s] if prefix else []
        bad = [s for s in segments if _SEGMENT.fullmatch(s) is None or s in (".", "..")]
        if bad:
            raise SkillError(f"prefix segment {bad[0]!r} is not a plain URI segment")
        #: The ``<skill-path>``: the prefix's segments, then the name.
        self.path = "/".join([*segments, self.name])
        if len(stored) > MAX_RESOURCES:
            raise SkillError(
                f"skill {self.path!r} has {len(stored)} files; the limit is {MAX_RESOURCES}"
            )
        total = sum(len(data) for data in stored.values())
        if total > MAX_TOTAL_BYTES:
            raise SkillError(
                f"skill {self.path!r} holds {total} bytes; the limit is {MAX_TOTAL_BYTES}"
            )
        # SKILL.md first, then the others by path: the order of the entry's manifest.
        self.files: dict[str, bytes] = {
            SKILL_FILE: raw,
            **{k: stored[k] for k in sorted(stored) if k != SKILL_FILE},
        }

    @classmethod
    def from_folder(cls, folder: str | Path, *, prefix: str = "") -> Skill:
        """The skill in ``folder`` (its files, recursively; hidden ones, such as ``.git``,
        left out). The folder's name must be the skill's name, as Agent Skills requires."""
        root = Path(folder)
        if not (root / SKILL_FILE).is_file():
            raise SkillError(f"{root} has no {SKILL_FILE}")
        resolved = root.resolve()
        chosen: list[Path] = []
        total = 0
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if any(part.startswith(".") for part in relative.parts) or not path.is_file():
                continue
            if not path.resolve().is_relative_to(resolved):
                raise SkillError(f"{path} links outside the skill's folder")
            chosen.append(path)
            total += path.stat().st_size
            # Past a limit before reading anything: a huge folder is refused, not loaded.
            if len(chosen) > MAX_RESOURCES or total > MAX_TOTAL_BYTES:
                raise SkillError(
                    f"{root} holds more than {MAX_RESOURCES} files or {MAX_TOTAL_BYTES} bytes"
                )
        files = {path.relative_to(root).as_posix(): path.read_bytes() for path in chosen}
        skill = cls(files, prefix=prefix)
        if skill.name != root.name:
            raise SkillError(
                f"the skill in {root} is named {skill.name!r}; its folder must have that name"
            )
        return skill

    def __repr__(self) -> str:
        return f"Skill({self.path!r}, {len(self.files)} files)"


def skills_in(folder: str | Path, *, prefix: str = "") -> list[Skill]:
    """The skills of ``folder``: itself if it holds a ``SKILL.md``, else each of its
    subfolders that does (a folder of skills, as hosts keep them)."""
    root = Path(folder)
    if not root.is_dir():
        raise SkillError(f"{root} is not a folder")
    if (root / SKILL_FILE).is_file():
        return [Skill.from_folder(root, prefix=prefix)]
    found = [
        Skill.from_folder(sub, prefix=prefix)
        for sub in sorted(root.iterdir())
        if sub.is_dir() and not sub.name.startswith(".") and (sub / SKILL_FILE).is_file()
    ]
    if not found:
        raise SkillError(f"{root} holds no skill (no {SKILL_FILE} in it or its subfolders)")
    return found
