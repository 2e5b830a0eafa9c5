"""The server's side: a catalog of skills, and the extension that serves it.

``SkillCatalog`` holds skills and answers what the extension asks of a server: the entries
(frontmatter, and each file's digest and size, computed once), a skill's files as resources
(``resources/list`` metadata, ``resources/read`` contents) and its directories
(``resources/directory/read``). ``SkillsExtension`` puts the catalog on a ``Server``
(``server.add_extension``): ``skills/list``, ``skills/get`` and ``resources/directory/read``,
declared as ``{"directoryRead": true}`` under ``capabilities.extensions``, in the revisions
whose capabilities have ``extensions`` (2026-07-28 on). ``serve_skills`` does that and, for a
server without resources of its own, serves the files by ``resources/list`` and
``resources/read`` too.
"""

from __future__ import annotations

import base64
import mimetypes
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from mcpbind.runtime.core.bindings import Bindings
from mcpbind.runtime.core.context import RequestContext
from mcpbind.runtime.core.errors import INVALID_PARAMS, McpError
from mcpbind.runtime.core.routing import Handler
from pydantic import BaseModel, ValidationError

from ._skill import Skill, SkillError
from ._wire import (
    DIRECTORY_MIME_TYPE,
    RESOURCES_DIRECTORY_READ,
    SKILL_FILE,
    SKILL_MIME_TYPE,
    SKILLS_EXTENSION,
    SKILLS_GET,
    SKILLS_LIST,
    DirectoryReadParams,
    GetSkillParams,
    ListSkillsParams,
    digest,
)

if TYPE_CHECKING:
    from mcpbind.runtime.endpoints.server import Server

__all__ = ["SkillCatalog", "SkillFile", "SkillsExtension", "serve_skills"]

_SAFE = "-._~!$&'()*+,;=:@"  # RFC 3986 pchar less "%": kept as is in a file's URI
_CURSOR = re.compile(r"[0-9]{1,9}")  # an offset, as this server hands them out


@dataclass(frozen=True)
class SkillFile:
    """One file of a served skill, as a resource: ``text`` if its bytes are UTF-8."""

    uri: str
    name: str
    mime_type: str
    data: bytes
    text: str | None
    description: str | None = None

    def resource(self) -> dict[str, Any]:
        """Its ``Resource`` (``resources/list``, ``resources/directory/read``)."""
        out: dict[str, Any] = {"uri": self.uri, "name": self.name, "mimeType": self.mime_type}
        if self.description is not None:
            out["description"] = self.description
        out["size"] = len(self.data)
        return out

    def contents(self) -> dict[str, Any]:
        """Its ``resources/read`` contents: text, or base64 for bytes that are not UTF-8."""
        if self.text is not None:
            return {"uri": self.uri, "mimeType": self.mime_type, "text": self.text}
        blob = base64.b64encode(self.data).decode("ascii")
        return {"uri": self.uri, "mimeType": self.mime_type, "blob": blob}


def _file(skill: Skill, root: str, relative: str, data: bytes) -> SkillFile:
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    uri = f"{root}/" + "/".join(quote(s, safe=_SAFE) for s in relative.split("/"))
    if relative == SKILL_FILE:
        # Resource Metadata: the SKILL.md is named and described by its frontmatter.
        return SkillFile(uri, skill.name, SKILL_MIME_TYPE, data, text, skill.description)
    guessed = mimetypes.guess_type(relative)[0]
    if relative.endswith(".md"):
        guessed = SKILL_MIME_TYPE
    fallback = "text/plain" if text is not None else "application/octet-stream"
    return SkillFile(uri, relative.rsplit("/", 1)[-1], guessed or fallback, data, text)


@dataclass
class _Served:
    skill: Skill
    root: str
    entry: dict[str, Any]
    files: dict[str, SkillFile]


def _page(items: list[Any], cursor: str | None, size: int) -> tuple[list[Any], str | None]:
    """One page of ``items`` from ``cursor`` (an offset, as this server hands them out)."""
    start = 0
    if cursor is not None:
        if _CURSOR.fullmatch(cursor) is None or int(cursor) > len(items):
            raise McpError(INVALID_PARAMS, f"Invalid params: unknown cursor {cursor!r}")
        start = int(cursor)
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)


class SkillCatalog:
    """The skills a server serves, under ``scheme`` (``skill://<skill-path>/<file-path>``).

    ``page_size`` entries per ``skills/list`` page (and children per directory page);
    ``ttl_ms`` and ``cache_scope`` are the caching hints of ``skills/list`` and ``skills/get``.
    """

    def __init__(
        self,
        skills: Iterable[Skill] = (),
        *,
        scheme: str = "skill",
        page_size: int = 50,
        ttl_ms: int = 0,
        cache_scope: str = "private",
    ) -> None:
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.scheme = scheme
        self.page_size = page_size
        self.cache_members: dict[str, Any] = {"ttlMs": ttl_ms, "cacheScope": cache_scope}
        self._skills: dict[str, _Served] = {}
        self._files: dict[str, SkillFile] = {}
        for skill in skills:
            self.add(skill)

    def __len__(self) -> int:
        return len(self._skills)

    def skill_uri(self, path: str) -> str:
        """The URI of the ``SKILL.md`` of the skill at ``path`` (its entry's ``uri``)."""
        return f"{self.scheme}://{path}/{SKILL_FILE}"

    def add(self, skill: Skill) -> dict[str, Any]:
        """Serve ``skill``; its entry. ``SkillError`` if a skill is already at its URI."""
        root = f"{self.scheme}://{skill.path}"
        uri = self.skill_uri(skill.path)
        if uri in self._skills:
            raise SkillError(f"a skill is already served at {uri}")
        files = {r: _file(skill, root, r, data) for r, data in skill.files.items()}
        clash = next((f.uri for f in files.values() if f.uri in self._files), None)
        if clash is not None:
            raise SkillError(f"{clash} is already a file of another skill")
        entry = {
            "uri": uri,
            "frontmatter": skill.frontmatter,
            "resources": [
                {"uri": f.uri, "digest": digest(f.data), "size": len(f.data)}
                for f in files.values()
            ],
        }
        self._skills[uri] = _Served(skill, root, entry, files)
        self._files.update({f.uri: f for f in files.values()})
        return entry

    def remove(self, uri: str) -> None:
        """Stop serving the skill whose ``SKILL.md`` is at ``uri`` (``KeyError`` if none is)."""
        served = self._skills.pop(uri)
        for file in served.files.values():
            del self._files[file.uri]

    def entries(self) -> list[dict[str, Any]]:
        """Every skill's entry, in the order added."""
        return [served.entry for served in self._skills.values()]

    def entry(self, uri: str) -> dict[str, Any] | None:
        """The entry of the skill whose ``SKILL.md`` is at ``uri``; None if none is."""
        served = self._skills.get(uri)
        return served.entry if served is not None else None

    def files(self) -> Iterator[SkillFile]:
        """Every file of every skill."""
        return iter(self._files.values())

    def file(self, uri: str) -> SkillFile | None:
        return self._files.get(uri)

    def resources(self) -> list[dict[str, Any]]:
        """The ``Resource`` of every file, for a server's ``resources/list``."""
        return [f.resource() for f in self._files.values()]

    def read(self, uri: str) -> dict[str, Any] | None:
        """The ``resources/read`` result for a file ``uri``; None if no skill has it."""
        found = self._files.get(uri)
        return {"contents": [found.contents()]} if found is not None else None

    def directory(self, uri: str) -> list[dict[str, Any]] | None:
        """The direct children of directory ``uri`` (a skill's root or one of its folders);
        None if ``uri`` is no directory of a served skill."""
        uri = uri.rstrip("/")
        served = next(
            (s for s in self._skills.values() if uri == s.root or uri.startswith(s.root + "/")),
            None,
        )
        if served is None:
            return None
        children: dict[str, dict[str, Any]] = {}
        found = uri == served.root
        for file in served.files.values():
            if not file.uri.startswith(uri + "/"):
                continue
            found = True
            head, _, rest = file.uri[len(uri) + 1 :].partition("/")
            if not rest:
                children[file.uri] = file.resource()
            else:
                child = f"{uri}/{head}"
                children.setdefault(
                    child, {"uri": child, "name": head, "mimeType": DIRECTORY_MIME_TYPE}
                )
        return list(children.values()) if found else None

    # -- the extension's methods ------------------------------------------------------------

    def list_page(self, cursor: str | None) -> dict[str, Any]:
        page, next_cursor = _page(self.entries(), cursor, self.page_size)
        result: dict[str, Any] = {"skills": page, **self.cache_members}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    def get(self, uri: str) -> dict[str, Any]:
        entry = self.entry(uri)
        if entry is None:
            raise McpError(INVALID_PARAMS, f"No skill is served at {uri}", {"uri": uri})
        return {"skill": entry, **self.cache_members}

    def read_directory(self, uri: str, cursor: str | None) -> dict[str, Any]:
        children = self.directory(uri)
        if children is None:
            raise McpError(INVALID_PARAMS, f"{uri} is not a directory resource", {"uri": uri})
        page, next_cursor = _page(children, cursor, self.page_size)
        result: dict[str, Any] = {"resources": page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result


def _parsed(model: type[BaseModel], params: Any) -> Any:
    try:
        return model.model_validate(params or {})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'params'}: {e['msg']}" for e in exc.errors()
        )
        raise McpError(INVALID_PARAMS, f"Invalid params: {problems}") from exc


class SkillsExtension:
    """The skills extension over ``catalog``, for ``server.add_extension``; ``directory_read``
    offers ``resources/directory/read`` (declared as ``directoryRead``)."""

    identifier = SKILLS_EXTENSION

    def __init__(self, catalog: SkillCatalog, *, directory_read: bool = True) -> None:
        self.catalog = catalog
        self.directory_read = directory_read
        self._handlers: dict[str, Handler] = {
            SKILLS_LIST: self._list,
            SKILLS_GET: self._get,
        }
        if directory_read:
            self._handlers[RESOURCES_DIRECTORY_READ] = self._read_directory

    def settings(self, bindings: Bindings) -> dict[str, Any] | None:
        capabilities = bindings.module.methods.CAPABILITIES.get("ServerCapabilities", {})
        if "extensions" not in capabilities:
            return None  # a revision before extensions could be declared
        return {"directoryRead": True} if self.directory_read else {}

    def handler(self, bindings: Bindings, method: str) -> Handler | None:
        found = self._handlers.get(method)
        return found if found is not None and self.settings(bindings) is not None else None

    async def _list(self, params: Any, context: RequestContext) -> Any:
        return self.catalog.list_page(_parsed(ListSkillsParams, params).cursor)

    async def _get(self, params: Any, context: RequestContext) -> Any:
        return self.catalog.get(_parsed(GetSkillParams, params).uri)

    async def _read_directory(self, params: Any, context: RequestContext) -> Any:
        parsed = _parsed(DirectoryReadParams, params)
        return self.catalog.read_directory(parsed.uri, parsed.cursor)


def serve_skills(
    server: Server[Any], catalog: SkillCatalog, *, resources: bool = True
) -> SkillsExtension:
    """Serve ``catalog`` on ``server``: the extension's methods and capability, and with
    ``resources`` the files by ``resources/list`` and ``resources/read`` (a server that has
    resources of its own passes False, and answers skill URIs with ``catalog.read(uri)`` and
    lists ``catalog.resources()`` in its own handlers)."""
    extension = SkillsExtension(catalog)
    server.add_extension(extension)
    if resources:
        from mcpbind.generated.v2025_11_25 import methods  # any revision's spec serves all

        async def list_resources(params: Any, context: RequestContext) -> Any:
            page, next_cursor = _page(catalog.resources(), params.cursor, catalog.page_size)
            result: dict[str, Any] = {"resources": page}
            if next_cursor is not None:
                result["nextCursor"] = next_cursor
            return result

        async def read_resource(params: Any, context: RequestContext) -> Any:
            found = catalog.read(params.uri)
            if found is None:
                raise McpError(INVALID_PARAMS, "Resource not found", {"uri": params.uri})
            return found

        server.add_handler(methods.RESOURCES_LIST, list_resources)
        server.add_handler(methods.RESOURCES_READ, read_resource)
    return extension
