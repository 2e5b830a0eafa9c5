"""A POST's body as ``_intake.parse_post`` reads it, and every limit it keeps: the body's
size, the memory budget (503 unread, or once it outgrows it), the message's form. A body that
arrives whole in one ``http.request`` message takes the fast path (no chunk list, the budget's
hold one add and one subtract); the others are read on by ``asgi.read_rest``.

Each case drives ``parse_post`` with a scripted ``receive`` and checks what it answered, what it
read, and that the budget holds nothing of the body afterwards, whichever way it ended.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping, Sequence
from typing import Any

import anyio
import pytest
from mcpbind.runtime.core.budget import READ_FACTOR, MemoryBudget
from mcpbind.runtime.transports.http._intake import parse_post
from mcpbind.runtime.transports.http.asgi import CONTROL_BYTES, held_for, read_body

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

REQUEST = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}'
LIMIT = 4 * 1024 * 1024


class Peer:
    """A scripted client: the messages ``receive`` gives, and what the app sent back."""

    def __init__(self, messages: Sequence[dict[str, Any]]) -> None:
        self.messages = list(messages)
        self.received = 0
        self.sent: list[MutableMapping[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        self.received += 1
        return self.messages.pop(0)

    async def send(self, message: MutableMapping[str, Any]) -> None:
        self.sent.append(message)

    @property
    def status(self) -> int | None:
        return self.sent[0]["status"] if self.sent else None

    @property
    def answer(self) -> Any:
        return json.loads(self.sent[1]["body"])


def whole(body: bytes) -> list[dict[str, Any]]:
    return [{"type": "http.request", "body": body, "more_body": False}]


def chunked(body: bytes, size: int) -> list[dict[str, Any]]:
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    return [
        {"type": "http.request", "body": part, "more_body": i < len(parts) - 1}
        for i, part in enumerate(parts)
    ]


def length(body: bytes) -> dict[str, str]:
    return {"content-length": str(len(body))}


async def post(
    peer: Peer, headers: dict[str, str], budget: MemoryBudget, limit: int = LIMIT
) -> Any:
    return await parse_post(peer.receive, peer.send, headers, limit, budget, True)


@pytest.mark.parametrize("declared", [True, False])
async def test_a_whole_body_is_parsed_and_held_only_while_read(declared: bool) -> None:
    budget = MemoryBudget()
    peer = Peer(whole(REQUEST))
    parsed = await post(peer, length(REQUEST) if declared else {}, budget)
    assert parsed == ([json.loads(REQUEST)], False, len(REQUEST))
    assert budget.used == 0 and budget.peak == len(REQUEST) and peer.received == 1


@pytest.mark.parametrize("declared", [True, False])
async def test_a_body_in_chunks_is_joined(declared: bool) -> None:
    budget = MemoryBudget()
    peer = Peer(chunked(REQUEST, 10))
    parsed = await post(peer, length(REQUEST) if declared else {}, budget)
    assert parsed == ([json.loads(REQUEST)], False, len(REQUEST))
    assert budget.used == 0 and budget.peak == len(REQUEST)
    assert peer.received == len(REQUEST) // 10 + 1


async def test_a_body_shorter_than_declared_is_held_at_its_size() -> None:
    budget = MemoryBudget()
    peer = Peer(whole(REQUEST))
    assert await post(peer, {"content-length": "1000"}, budget) is not None
    assert budget.used == 0 and budget.peak == 1000


@pytest.mark.parametrize("declared", [True, False])
@pytest.mark.parametrize("chunk", [None, 16])
async def test_a_body_over_the_limit_is_refused_413(declared: bool, chunk: int | None) -> None:
    budget = MemoryBudget()
    peer = Peer(whole(REQUEST) if chunk is None else chunked(REQUEST, chunk))
    assert await post(peer, length(REQUEST) if declared else {}, budget, limit=50) is None
    assert peer.status == 413 and "the limit is 50 bytes" in peer.answer["error"]["message"]
    assert budget.used == 0
    if declared:
        assert peer.received == 0  # refused by its Content-Length, unread


async def test_a_large_body_the_budget_cannot_hold_is_refused_unread() -> None:
    budget = MemoryBudget(limit=CONTROL_BYTES)
    body = b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"pad":"' + b"a" * CONTROL_BYTES + b'"}}'
    peer = Peer(whole(body))
    assert await post(peer, length(body), budget) is None
    assert peer.received == 0 and peer.status == 503
    assert dict(peer.sent[0]["headers"])[b"retry-after"] == b"1"
    assert peer.answer["error"]["code"] == -31503 and budget.used == 0


@pytest.mark.parametrize("chunk", [None, 4096])
async def test_a_large_body_declared_small_is_refused_once_it_outgrows_the_budget(
    chunk: int | None,
) -> None:
    budget = MemoryBudget(limit=2 * CONTROL_BYTES)
    body = b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"pad":"' + b"a" * CONTROL_BYTES + b'"}}'
    peer = Peer(whole(body) if chunk is None else chunked(body, chunk))
    assert await post(peer, {"content-length": "10"}, budget) is None
    assert peer.status == 503 and budget.used == 0


async def test_a_large_body_that_fits_is_held_at_its_read_factor() -> None:
    budget = MemoryBudget()
    body = b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"pad":"' + b"a" * CONTROL_BYTES + b'"}}'
    for messages in (whole(body), chunked(body, 4096)):
        parsed = await post(Peer(messages), length(body), budget)
        assert parsed is not None and parsed[2] == 0  # measured by the session, parsed
        assert budget.used == 0 and budget.peak == len(body) * READ_FACTOR


async def test_a_small_body_is_read_with_the_budget_spent() -> None:
    budget = MemoryBudget(limit=100)
    budget.charge(100)
    peer = Peer(whole(REQUEST))
    assert await post(peer, length(REQUEST), budget) is not None
    assert budget.used == 100 and budget.peak == 100 + len(REQUEST)


@pytest.mark.parametrize("first", [True, False])
async def test_a_client_gone_while_its_body_is_read_leaves_nothing_held(first: bool) -> None:
    budget = MemoryBudget()
    gone = {"type": "http.disconnect"}
    messages = [gone] if first else [*chunked(REQUEST, 10)[:2], gone]
    peer = Peer(messages)
    assert await post(peer, length(REQUEST), budget) is None
    assert peer.sent == [] and budget.used == 0


async def test_a_post_cancelled_while_its_body_is_awaited_leaves_nothing_held() -> None:
    budget = MemoryBudget()

    async def never() -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    async def send(message: MutableMapping[str, Any]) -> None:
        raise AssertionError

    with anyio.move_on_after(0.05):
        await parse_post(never, send, length(REQUEST), LIMIT, budget, True)
    assert budget.used == 0 and budget.peak == len(REQUEST)


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":5}', 400, -32600),
        (b'{"jsonrpc":"2.0","id":true,"method":"x"}', 400, -32600),
        (b'{"jsonrpc":"2.0","id":null,"method":"x"}', 400, -32600),
        (b'{"jsonrpc":"1.0","id":1,"method":"x"}', 400, -32600),
        (b'{"id":1,"method":"x"}', 400, -32600),
        (b"[]", 400, -32600),
        (b"[1]", 400, -32600),
        (b'{"jsonrpc":"2.0","id":1', 400, -32700),
        (b"5", 400, -32600),
    ],
)
async def test_what_is_not_a_valid_message_is_refused(body: bytes, status: int, code: int) -> None:
    budget = MemoryBudget()
    peer = Peer(whole(body))
    assert await post(peer, length(body), budget) is None
    assert peer.status == status and peer.answer["error"]["code"] == code
    assert budget.used == 0


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":"a","result":{}}',
        b'{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}',
    ],
)
async def test_notifications_and_responses_are_admitted(body: bytes) -> None:
    parsed = await post(Peer(whole(body)), length(body), MemoryBudget())
    assert parsed == ([json.loads(body)], False, len(body))


async def test_read_body_holds_what_the_caller_releases() -> None:
    """``read_body`` (the cluster's relay reads with it) returns with ``held_for`` the body held."""
    budget = MemoryBudget()
    for messages in (whole(REQUEST), chunked(REQUEST, 7)):
        body = await read_body(Peer(messages).receive, length(REQUEST), LIMIT, budget)
        assert body == REQUEST and budget.used == held_for(len(REQUEST))
        budget.release(held_for(len(body)))
    assert budget.used == 0
