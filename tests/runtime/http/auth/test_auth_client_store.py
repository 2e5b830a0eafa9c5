"""Token stores: the memory default, and the file store's owner-only permissions."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from mcpbind.runtime.auth import FileTokenStore, MemoryTokenStore, TokenStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_the_file_store_is_owner_only_and_survives_a_new_instance(tmp_path: Path) -> None:
    path = tmp_path / "state" / "tokens.json"
    old = os.umask(0o022)
    try:
        store = FileTokenStore(path)
        await store.save("tokens https://a", {"access_token": "t1"})
    finally:
        os.umask(old)
    assert mode(path) == 0o600
    assert await FileTokenStore(path).load("tokens https://a") == {"access_token": "t1"}
    await store.save("client https://as", {"client_id": "c"})
    await store.delete("tokens https://a")
    assert mode(path) == 0o600
    assert json.loads(path.read_text()) == {"client https://as": {"client_id": "c"}}
    assert not [p for p in path.parent.iterdir() if p.name != "tokens.json"]


async def test_a_file_readable_by_others_is_tightened_before_reading(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({"k": {"access_token": "t"}}))
    path.chmod(0o644)
    assert await FileTokenStore(path).load("k") == {"access_token": "t"}
    assert mode(path) == 0o600
    assert "readable by others" in caplog.text


async def test_an_unreadable_file_is_ignored_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{not json")
    path.chmod(0o600)
    store = FileTokenStore(path)
    assert await store.load("k") is None
    await store.save("k", {"access_token": "t"})
    assert await store.load("k") == {"access_token": "t"}


async def test_the_memory_store_hands_out_copies() -> None:
    store = MemoryTokenStore()
    assert isinstance(store, TokenStore)
    value = {"access_token": "t"}
    await store.save("k", value)
    value["access_token"] = "changed"
    loaded = await store.load("k")
    assert loaded == {"access_token": "t"}
    loaded["access_token"] = "again"
    assert await store.load("k") == {"access_token": "t"}
    await store.delete("k")
    assert await store.load("k") is None
