"""A server of both eras builds its stateless-era lifecycle with the first message that needs
it (``eras/both.py``), and answers every message as that lifecycle answers it."""

from __future__ import annotations

from typing import Any

import pytest
from mcpbind.runtime import HandshakeServer, Server, StatelessServer, memory_pair
from mcpbind.runtime.eras.both import LEGACY, BothEras
from mcpbind.runtime.eras.stateless import (
    CLIENT_CAPABILITIES,
    LEGACY as STATELESS_LEGACY,
    PROTOCOL_VERSION,
)
from runtime_helpers import raw_client_of

pytestmark = pytest.mark.anyio

REVISIONS = ["2025-06-18", "2025-11-25", "2026-07-28"]
META = {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}}
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"},
}


def request(request_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


#: Sessions, each a list of messages: handshake-era ones first, which need no stateless era.
HANDSHAKE_SESSIONS = [
    [
        request(1, "initialize", INITIALIZE),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        request(2, "ping"),
        request(3, "tools/list"),
        request(4, "initialize", INITIALIZE),
    ],
    [request(1, "tools/list"), request(2, "initialize", {"protocolVersion": "2025-11-25"})],
    [request(1, "initialize"), request(2, "initialize", {**INITIALIZE, "_meta": {}})],
    [request(1, "initialize", {**INITIALIZE, "protocolVersion": "1999-01-01"})],
]
STATELESS_SESSIONS = [
    [request(1, "server/discover", {"_meta": META}), request(2, "initialize", INITIALIZE)],
    [request(1, "tools/list", {"_meta": {**META, PROTOCOL_VERSION: "2099-01-01"}})],
    [request(1, "initialize", {**INITIALIZE, "_meta": META})],
]


def servers() -> tuple[Server, Server]:
    """The default server of both eras, and one given ``StatelessServer`` explicitly."""
    lazy = Server("both", "1.0", revisions=REVISIONS, instructions="hi")
    stateless = StatelessServer(["2026-07-28"], legacy=HandshakeServer(REVISIONS[:2]))
    eager = Server("both", "1.0", revisions=REVISIONS, instructions="hi", lifecycle=stateless)
    return lazy, eager


async def answers(server: Server, session: list[dict[str, Any]]) -> list[Any]:
    replies = []
    async with raw_client_of(server, initialize=None) as peer:
        for message in session:
            if "id" in message:
                replies.append(await peer.request(message))
            else:
                await peer.send(message)
    return replies


async def test_handshake_sessions_never_build_the_stateless_lifecycle() -> None:
    lazy, eager = servers()
    assert isinstance(lazy._lifecycle, BothEras)
    for session in HANDSHAKE_SESSIONS:
        assert await answers(lazy, session) == await answers(eager, session)
    assert lazy._lifecycle._stateless is None
    # Bad ``initialize`` params fail as any request's do (-32602 with pydantic's errors), though
    # the lifecycle reads them itself to answer with the JSON it builds.
    refused = (await answers(lazy, HANDSHAKE_SESSIONS[1]))[1]["error"]
    assert refused["code"] == -32602 and refused["message"] == "Invalid params for initialize"
    assert [(e["type"], e["loc"]) for e in refused["data"]] == [
        ("missing", ("capabilities",)),
        ("missing", ("clientInfo",)),
    ]
    for session in STATELESS_SESSIONS:
        assert await answers(lazy, session) == await answers(eager, session)
    assert isinstance(lazy._lifecycle._stateless, StatelessServer)


async def test_the_lifecycle_read_is_the_stateless_one_it_serves_with() -> None:
    lazy, _ = servers()
    assert LEGACY == STATELESS_LEGACY
    served = lazy.lifecycle
    assert isinstance(served, StatelessServer) and served.legacy is not None
    assert served.legacy.supported == tuple(REVISIONS[:2])
    assert lazy.lifecycle is served
    for session in HANDSHAKE_SESSIONS[:1]:
        await answers(lazy, session)  # served by it from now on, as before


async def test_sessions_assumed_initialized_in_either_era() -> None:
    for revision, era in (("2025-11-25", LEGACY), ("2026-07-28", "stateless")):
        seen = []
        for server in servers():
            async with memory_pair() as (_, far):
                session = server.new_session(far)
                server.assume_initialized(session, revision)
            seen.append((session.peer.era, session.peer.phase, session.bindings.revision))
        assert seen[0] == seen[1] and seen[0][0] == era
