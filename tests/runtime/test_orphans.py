"""What a stdio server leaves behind: its whole process group ends with it, on its exit or on
the client's close, escalating to SIGKILL for a grandchild that ignores SIGTERM."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import anyio
import pytest
from mcpbind.generated.v2025_11_25 import types
from mcpbind.runtime import Client, ConnectionClosedError, StdioParameters, stdio_client

pytestmark = pytest.mark.anyio

MISBEHAVING = str(Path(__file__).with_name("stdio_servers.py"))
#: A grandchild that ignores SIGTERM (ignored signals stay ignored across exec) and holds the
#: server's stdout open, started in the background before the server proper.
STUBBORN = "(trap '' TERM; exec sleep 60) & "


def with_grandchild(mode: str, **overrides: float) -> StdioParameters:
    script = STUBBORN + f"exec {shlex.quote(sys.executable)} {shlex.quote(MISBEHAVING)} {mode}"
    return StdioParameters("sh", ["-c", script], **overrides)  # type: ignore[arg-type]


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes in a process group, read from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(stat.parent.name))
    return found


async def gone(pgid: int) -> bool:
    """True once nothing is left in the group (waiting generously: this is not a speed test)."""
    with anyio.move_on_after(10):
        while group_members(pgid):
            await anyio.sleep(0.05)
        return True
    return False


async def test_a_dead_servers_grandchild_is_ended() -> None:
    async with Client(stdio_client(with_grandchild("crash", term_wait=0.5))) as client:
        pid = int(client.session.connection.extra["pid"])
        assert group_members(pid), "the server and its grandchild run in its group"
        with pytest.raises(ConnectionClosedError):
            await client.stub.call_tool(types.CallToolRequestParams(name="any"))
        # The server is gone at once; its grandchild ignores SIGTERM, so SIGKILL ends it.
        assert await gone(pid)


async def test_closing_the_client_ends_the_servers_group() -> None:
    async with Client(stdio_client(with_grandchild("chatty", term_wait=0.5))) as client:
        await client.ping()
        pid = int(client.session.connection.extra["pid"])
        members = group_members(pid)
        assert pid in members and len(members) == 2
    assert not group_members(pid)
