"""The transport helpers: ``put``/``take`` on memory object streams, both ways ``take`` waits."""

from __future__ import annotations

import anyio
import pytest
from mcpbind.runtime import Envelope, memory_pair
from mcpbind.runtime.core import _memory_receive as memory_module
from mcpbind.runtime.core.transport import put, take

pytestmark = pytest.mark.anyio


@pytest.fixture(params=[True, False], ids=["direct-wait", "anyio-receive"])
def wait_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    if request.param and not memory_module._WAIT_DIRECTLY:
        pytest.fail("this anyio's memory streams are laid out differently: take() falls back")
    monkeypatch.setattr(memory_module, "_WAIT_DIRECTLY", request.param)
    return bool(request.param)


async def test_take_waits_for_an_item(wait_mode: bool) -> None:
    send, receive = anyio.create_memory_object_stream[Envelope](4)
    got: list[object] = []

    async def consumer() -> None:
        got.append((await take(receive)).message)
        got.append((await take(receive)).message)

    async with anyio.create_task_group() as tg:
        tg.start_soon(consumer)
        await anyio.sleep(0.01)
        await put(send, Envelope({"n": 1}))
        await put(send, Envelope({"n": 2}))
    assert got == [{"n": 1}, {"n": 2}]


async def test_take_ends_when_the_sender_closes(wait_mode: bool) -> None:
    send, receive = anyio.create_memory_object_stream[Envelope](4)
    async with anyio.create_task_group() as tg:

        async def close_soon() -> None:
            await anyio.sleep(0.01)
            send.close()

        tg.start_soon(close_soon)
        with pytest.raises(anyio.EndOfStream):
            await take(receive)


async def test_a_cancelled_take_leaves_no_waiter_behind(wait_mode: bool) -> None:
    send, receive = anyio.create_memory_object_stream[Envelope](4)
    with anyio.move_on_after(0.01):
        await take(receive)
    assert not receive._state.waiting_receivers
    await put(send, Envelope("later"))
    assert (await take(receive)).message == "later"


async def test_put_waits_when_the_buffer_is_full() -> None:
    send, receive = anyio.create_memory_object_stream[Envelope](1)
    await put(send, Envelope(1))
    async with anyio.create_task_group() as tg:
        tg.start_soon(put, send, Envelope(2))
        await anyio.sleep(0.01)
        assert (await take(receive)).message == 1
    assert (await take(receive)).message == 2


async def test_memory_pair_connects_both_ways() -> None:
    async with memory_pair() as (a, b):
        await put(a.outgoing, Envelope({"to": "b"}, related_id=3))
        await put(b.outgoing, Envelope({"to": "a"}))
        received = await take(b.incoming)
        assert received.message == {"to": "b"} and received.related_id == 3
        assert (await take(a.incoming)).message == {"to": "a"}
