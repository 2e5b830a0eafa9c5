"""Where the OAuth client keeps what it must remember: client registrations and tokens.

A store is a small async key-value map of JSON objects. The client writes two kinds of entry:
``client <issuer>`` (the registration obtained from that authorization server, never used with
another) and ``tokens <resource>`` (the tokens for that MCP server, with the issuer that minted
them, and for a DPoP-bound token the private key it is bound to, as a JWK: a store that
keeps tokens keeps that key). ``MemoryTokenStore`` (the default) forgets them with the process;
``FileTokenStore`` keeps them in one JSON file readable by its owner only (mode 0600), written
atomically.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import anyio

from ._json import json_object

logger = logging.getLogger(__name__)


@runtime_checkable
class TokenStore(Protocol):
    """Async key-value storage of JSON objects; keys are opaque strings."""

    async def load(self, key: str) -> dict[str, Any] | None: ...

    async def save(self, key: str, value: dict[str, Any]) -> None: ...

    async def delete(self, key: str) -> None: ...


class MemoryTokenStore:
    """Entries in a dict: gone when the process ends."""

    def __init__(self) -> None:
        self._entries: dict[str, dict[str, Any]] = {}

    async def load(self, key: str) -> dict[str, Any] | None:
        entry = self._entries.get(key)
        return dict(entry) if entry is not None else None

    async def save(self, key: str, value: dict[str, Any]) -> None:
        self._entries[key] = dict(value)

    async def delete(self, key: str) -> None:
        self._entries.pop(key, None)


class FileTokenStore:
    """Entries in one JSON file, created with mode 0600 and replaced atomically on each write.

    A file other users can read or write is tightened back to 0600 (with a warning) before it
    is read: tokens and client secrets are credentials.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._lock = anyio.Lock()

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            mode = self.path.stat().st_mode & 0o777
        except FileNotFoundError:
            return {}
        if mode & 0o077:
            logger.warning("%s was readable by others (mode %o); now 0600", self.path, mode)
            os.chmod(self.path, 0o600)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            logger.warning("ignoring unreadable token file %s: %s", self.path, type(exc).__name__)
            return {}
        return json_object(data) or {}

    def _write(self, data: dict[str, dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(descriptor, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                json.dump(data, out)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        os.replace(temporary, self.path)

    async def load(self, key: str) -> dict[str, Any] | None:
        async with self._lock:
            entry = (await anyio.to_thread.run_sync(self._read)).get(key)
        return dict(entry) if isinstance(entry, dict) else None

    async def save(self, key: str, value: dict[str, Any]) -> None:
        async with self._lock:
            data = await anyio.to_thread.run_sync(self._read)
            data[key] = dict(value)
            await anyio.to_thread.run_sync(self._write, data)

    async def delete(self, key: str) -> None:
        async with self._lock:
            data = await anyio.to_thread.run_sync(self._read)
            if data.pop(key, None) is not None:
                await anyio.to_thread.run_sync(self._write, data)
