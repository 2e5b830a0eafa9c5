"""The host's side: list skills, load one, read its files, each verified as the extension
requires ("Integrity and Verification").

Nothing is read ahead of need: ``list``/``get`` fetch entries only; ``load`` reads the skill's
``SKILL.md`` and checks its size, its digest and its frontmatter against the entry, in that
order; ``read`` reads one supporting file the entry lists, checked the same way, and refuses
one it does not list. A failed check raises ``SkillVerificationError`` and the content is not
returned: the caller refreshes the entry (``get``) and starts over.
"""

from __future__ import annotations

import base64
import binascii
import builtins
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, cast

from mcpbind.generated.names import RESOURCES_READ
from mcpbind.generated.support import Direction, MethodSpec
from mcpbind.runtime.core.bindings import dump
from mcpbind.runtime.core.errors import CapabilityError, InvalidResultError
from mcpbind.runtime.eras.stateless_client import StatelessClient
from pydantic import ValidationError

from ._frontmatter import FrontmatterError, parse_frontmatter, split_frontmatter
from ._skill import SkillError
from ._wire import (
    RESOURCES_DIRECTORY_READ,
    SKILL_FILE,
    SKILLS_EXTENSION,
    SKILLS_GET,
    SKILLS_LIST,
    SkillEntry,
    digest,
    skill_name_of,
)

if TYPE_CHECKING:
    from mcpbind.runtime.endpoints.client import Client

__all__ = ["LoadedSkill", "SkillVerificationError", "SkillsClient"]

Failure = Literal["size", "digest", "frontmatter", "unlisted"]
#: A listing that keeps handing out cursors is cut off (and a cursor seen twice ends it).
_MAX_PAGES: Final = 1000


class SkillVerificationError(SkillError):
    """Content that is not what the skill's entry describes (``reason``: its size, digest or
    frontmatter differ, or the file is not in the entry's manifest). The content is not used."""

    def __init__(self, uri: str, reason: Failure, message: str) -> None:
        super().__init__(f"{uri}: {message}")
        self.uri = uri
        self.reason: Failure = reason


def _spec(method: str) -> MethodSpec[Any, Any]:
    return MethodSpec(
        revision="2026-07-28",
        method=method,
        handler_name="",
        directions=frozenset({Direction.CLIENT_TO_SERVER}),
        request_type=None,
        params_type=dict,
        params_required=False,
        result_type=dict,
        result_link="",
    )


_SPECS: Final = {m: _spec(m) for m in (SKILLS_LIST, SKILLS_GET, RESOURCES_DIRECTORY_READ)}


def _object(value: object) -> dict[str, Any] | None:
    """``value`` if it is a JSON object."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _list(value: object) -> list[object] | None:
    """``value`` if it is a JSON array."""
    return cast("list[object]", value) if isinstance(value, list) else None


def _same(a: object, b: object) -> bool:
    """JSON equality: ``True`` is not ``1`` here, as it is to Python's ``==``."""
    left, right = _object(a), _object(b)
    if left is not None and right is not None:
        return left.keys() == right.keys() and all(_same(left[k], right[k]) for k in left)
    items, others = _list(a), _list(b)
    if items is not None and others is not None:
        return len(items) == len(others) and all(
            _same(x, y) for x, y in zip(items, others, strict=True)
        )
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


@dataclass(frozen=True)
class LoadedSkill:
    """A skill whose ``SKILL.md`` passed verification: the entry it was loaded under (the
    held entry, which bounds what may be read of it), its text and its body."""

    entry: SkillEntry
    text: str

    @property
    def body(self) -> str:
        return split_frontmatter(self.text)[1]

    @property
    def root(self) -> str:
        """The skill's directory: its ``SKILL.md`` URI less ``/SKILL.md``."""
        return self.entry.uri[: -len(SKILL_FILE) - 1]

    def resolve(self, path: str) -> str:
        """The URI of ``path`` relative to the skill's root (a URI is taken as it is)."""
        return path if "://" in path else f"{self.root}/{path.lstrip('/')}"


class SkillsClient:
    """The skills of the server ``client`` is connected to."""

    def __init__(self, client: Client[Any, Any, Any]) -> None:
        self.client = client

    @property
    def settings(self) -> dict[str, Any] | None:
        """The server's settings of the extension; None if it did not declare it."""
        extensions = _object(self.client.server_capabilities.get("extensions"))
        return _object(extensions.get(SKILLS_EXTENSION)) if extensions is not None else None

    async def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send an extension request: the era's ``_meta`` added, the result a JSON object."""
        if self.settings is None:
            raise CapabilityError(f"the server did not declare the {SKILLS_EXTENSION} extension")
        client = self.client
        session = client.session
        body = dict(params)
        lifecycle = client.lifecycle
        if isinstance(lifecycle, StatelessClient) and session.peer.era == "stateless":
            body["_meta"] = dict(lifecycle.meta(client, session.bindings))
        raw = _object(await session.send_request_raw(_SPECS[method], body))
        if raw is None:
            raise InvalidResultError(f"the result of {method!r} is not an object")
        return raw

    @staticmethod
    def _entry(method: str, raw: Any) -> SkillEntry:
        try:
            entry = SkillEntry.model_validate(raw)
        except ValidationError as exc:
            raise InvalidResultError(f"{method}: a malformed skill entry: {exc}") from exc
        return entry

    async def list(self) -> list[SkillEntry]:
        """Every entry of ``skills/list``, page after page; nothing else is fetched."""
        entries: list[SkillEntry] = []
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            raw = await self._request(SKILLS_LIST, {"cursor": cursor} if cursor else {})
            skills = raw.get("skills")
            if not isinstance(skills, list):
                raise InvalidResultError(f"{SKILLS_LIST}: the result has no 'skills' array")
            entries += [self._entry(SKILLS_LIST, item) for item in cast("list[object]", skills)]
            cursor = raw.get("nextCursor")
            if not isinstance(cursor, str) or not cursor or cursor in seen:
                return entries
            seen.add(cursor)
        return entries

    async def get(self, uri: str) -> SkillEntry:
        """``skills/get``: the current entry of the skill whose ``SKILL.md`` is at ``uri``."""
        raw = await self._request(SKILLS_GET, {"uri": uri})
        return self._entry(SKILLS_GET, raw.get("skill"))

    async def read_directory(self, uri: str) -> builtins.list[dict[str, Any]]:
        """``resources/directory/read``: the direct children of directory ``uri``, every page
        (a ``CapabilityError`` if the server did not declare ``directoryRead``)."""
        if not (self.settings or {}).get("directoryRead"):
            raise CapabilityError("the server did not declare directoryRead")
        children: builtins.list[dict[str, Any]] = []
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            params = {"uri": uri, **({"cursor": cursor} if cursor else {})}
            raw = await self._request(RESOURCES_DIRECTORY_READ, params)
            page = raw.get("resources")
            if not isinstance(page, list):
                raise InvalidResultError(f"{RESOURCES_DIRECTORY_READ}: no 'resources' array")
            children += [c for c in map(_object, cast("list[object]", page)) if c is not None]
            cursor = raw.get("nextCursor")
            if not isinstance(cursor, str) or not cursor or cursor in seen:
                break
            seen.add(cursor)
        return children

    async def _fetch(self, uri: str) -> bytes:
        """The raw bytes of resource ``uri`` (text as UTF-8, a blob decoded)."""
        spec = self.client.session.bindings.methods[RESOURCES_READ]
        result = dump(await self.client.send_request(spec, {"uri": uri}))
        contents = [c for c in map(_object, result.get("contents", [])) if c is not None]
        chosen = next((c for c in contents if c.get("uri") == uri), None) or next(
            iter(contents), None
        )
        if chosen is None:
            raise InvalidResultError(f"{RESOURCES_READ} of {uri} returned no contents")
        if isinstance(chosen.get("text"), str):
            return str(chosen["text"]).encode("utf-8")
        try:
            return base64.b64decode(str(chosen.get("blob", "")), validate=True)
        except binascii.Error as exc:
            raise InvalidResultError(f"{RESOURCES_READ} of {uri}: a malformed blob") from exc

    async def _verified(self, entry: SkillEntry, uri: str) -> bytes:
        listed = entry.listed(uri)
        if listed is None and entry.resources != "dynamic":
            raise SkillVerificationError(uri, "unlisted", "not a file of the held entry")
        data = await self._fetch(uri)
        if listed is not None:
            if len(data) != listed.size:
                raise SkillVerificationError(
                    uri, "size", f"read {len(data)} bytes; the entry says {listed.size}"
                )
            found = digest(data)
            if found != listed.digest:
                raise SkillVerificationError(
                    uri, "digest", f"content digest {found} is not the entry's {listed.digest}"
                )
        return data

    async def load(self, skill: SkillEntry | str) -> LoadedSkill:
        """Load a skill (an entry from ``list``, or a ``SKILL.md`` URI, confirmed by ``get``):
        read its ``SKILL.md`` and verify size, digest and frontmatter against the entry."""
        entry = skill if isinstance(skill, SkillEntry) else await self.get(skill)
        if skill_name_of(entry.uri) != entry.name:
            # Checkable from the entry alone: no file is read for an entry that breaks it.
            raise SkillVerificationError(
                entry.uri,
                "frontmatter",
                f"the URI does not end in <name>/SKILL.md ({entry.name!r})",
            )
        data = await self._verified(entry, entry.uri)
        try:
            text = data.decode("utf-8")
            frontmatter = parse_frontmatter(text)
        except (UnicodeDecodeError, FrontmatterError) as exc:
            raise SkillVerificationError(entry.uri, "frontmatter", str(exc)) from exc
        if not _same(frontmatter, entry.frontmatter):
            differ = sorted(
                k
                for k in frontmatter.keys() | entry.frontmatter.keys()
                if not _same(frontmatter.get(k), entry.frontmatter.get(k))
            )
            raise SkillVerificationError(
                entry.uri, "frontmatter", f"frontmatter fields {differ} differ from the entry's"
            )
        return LoadedSkill(entry, text)

    async def read(self, skill: LoadedSkill, path: str) -> bytes:
        """A file of a loaded skill (``path`` relative to its root, or a URI), verified
        against the held entry; an unlisted file is refused before anything is read."""
        return await self._verified(skill.entry, skill.resolve(path))
