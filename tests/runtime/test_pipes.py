"""``PipeReader`` and ``PipeWriter`` on real pipes: framing, end of input, back-pressure, breakage."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator

import anyio
import pytest
from mcpbind.runtime import Envelope, Malformed
from mcpbind.runtime.transports._pipes import WRITE_BACKLOG, PipeReader, PipeWriter

pytestmark = pytest.mark.anyio


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    for fd in (read_fd, write_fd):
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    yield read_fd, write_fd
    for fd in (read_fd, write_fd):
        with contextlib.suppress(OSError):
            os.close(fd)


async def test_the_reader_frames_lines_and_ends_after_the_last_one(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    reader = PipeReader(read_fd, 1024, True)
    with pytest.raises(anyio.WouldBlock):
        reader.receive_nowait()
    os.write(write_fd, b'{"a": 1}\n\n{"b"')
    os.write(write_fd, b': 2}\nnot json\n{"tail": true}')
    os.close(write_fd)
    got = [(await reader.receive()).message for _ in range(4)]
    assert got[:2] == [{"a": 1}, {"b": 2}]
    assert isinstance(got[2], Malformed)
    assert got[3] == {"tail": True}
    with pytest.raises(anyio.EndOfStream):
        await reader.receive()


async def test_an_empty_pipe_is_not_read_again_until_it_is_ready(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read that found nothing is not repeated (a system call and two exceptions) before
    the pipe signals data; then one read gets it."""
    read_fd, write_fd = pipe
    reader = PipeReader(read_fd, 1024, True)
    reads: list[int] = []
    real_read = os.read

    def counting_read(fd: int, size: int) -> bytes:
        reads.append(fd)
        return real_read(fd, size)

    monkeypatch.setattr(os, "read", counting_read)
    for _ in range(2):
        with pytest.raises(anyio.WouldBlock):
            reader.receive_nowait()
    assert len(reads) == 1
    os.write(write_fd, b'{"a": 1}\n')
    assert (await reader.receive()).message == {"a": 1}
    assert len(reads) == 2


async def test_the_reader_waits_for_data(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    reader = PipeReader(read_fd, 1024, True)

    async def write_later() -> None:
        await anyio.sleep(0.05)
        os.write(write_fd, b'{"late": 1}\n')

    async with anyio.create_task_group() as tg:
        tg.start_soon(write_later)
        assert (await reader.receive()).message == {"late": 1}


async def test_end_wakes_a_waiting_reader_after_what_it_has(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    eof_seen: list[bool] = []

    async def on_eof() -> None:
        eof_seen.append(True)

    reader = PipeReader(read_fd, 1024, True, on_eof)
    os.write(write_fd, b'{"n": 1}\n')
    assert (await reader.receive()).message == {"n": 1}

    async def end_soon() -> None:
        await anyio.sleep(0.05)
        reader.end()

    with anyio.fail_after(2):
        async with anyio.create_task_group() as tg:
            tg.start_soon(end_soon)
            with pytest.raises(anyio.EndOfStream):
                await reader.receive()
    assert eof_seen == [True]


async def test_a_line_over_the_limit_is_reported_not_buffered(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    reader = PipeReader(read_fd, 100, True)
    os.write(write_fd, b"x" * 500 + b'\n{"ok": 1}\n')
    first = await reader.receive()
    assert isinstance(first.message, Malformed) and "larger than 100" in first.message.reason
    assert (await reader.receive()).message == {"ok": 1}


async def test_a_batch_over_its_limit_is_refused_unparsed(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    reader = PipeReader(read_fd, 1000, True, max_batch=50)
    small = b'[{"jsonrpc": "2.0", "method": "a"}]'
    big = b'  [{"jsonrpc": "2.0", "method": "a"}, {"jsonrpc": "2.0", "method": "b"}]'
    os.write(write_fd, small + b"\n" + big + b"\n" + b'{"ok": 1, "pad": "' + b"x" * 60 + b'"}\n')
    first, second, third = [(await reader.receive()) for _ in range(3)]
    assert first.message == [{"jsonrpc": "2.0", "method": "a"}] and first.size == len(small)
    assert isinstance(second.message, Malformed) and second.message.code == -32600
    assert f"a batch of {len(big)} bytes" in second.message.reason
    assert third.message["ok"] == 1, "a single message is not a batch, however long"


async def test_a_regular_file_is_read_through_a_thread(tmp_path: anyio.Path) -> None:
    path = os.path.join(str(tmp_path), "input.jsonl")
    with open(path, "wb") as file:
        file.write(b'{"n": 1}\n{"n": 2}\n')
    fd = os.open(path, os.O_RDONLY)
    try:
        reader = PipeReader(fd, 1024, False)
        assert [(await reader.receive()).message for _ in range(2)] == [{"n": 1}, {"n": 2}]
        with pytest.raises(anyio.EndOfStream):
            await reader.receive()
    finally:
        os.close(fd)


async def test_the_writer_writes_at_once_while_the_pipe_has_room(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    writer = PipeWriter(write_fd, True)
    writer.send_nowait(Envelope({"jsonrpc": "2.0", "id": 1, "result": {}}))
    assert os.read(read_fd, 1024) == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'


async def test_a_full_pipe_makes_a_backlog_then_back_pressure(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    writer = PipeWriter(write_fd, True)
    big = {"data": "x" * 60_000}
    line = len(b'{"data":""}\n') + 60_000
    sent = 0
    with pytest.raises(anyio.WouldBlock):
        while True:  # nobody reads: the pipe fills, then the backlog does
            writer.send_nowait(Envelope(big))
            sent += 1
    assert sent * line >= WRITE_BACKLOG
    received = bytearray()
    done = anyio.Event()

    async def drain() -> None:
        while len(received) < (sent + 1) * line:
            try:
                received.extend(os.read(read_fd, 65536))
            except BlockingIOError:
                await anyio.wait_readable(read_fd)
        done.set()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.flush)
            tg.start_soon(drain)
            await writer.send(Envelope(big))  # waits for the backlog to shrink
            writer.close()
            await done.wait()
    assert bytes(received).count(b"\n") == sent + 1
    assert all(len(part) == line - 1 for part in bytes(received).split(b"\n")[:-1])


async def test_a_reader_gone_breaks_the_writer(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    os.close(read_fd)
    writer = PipeWriter(write_fd, True)
    with pytest.raises(anyio.BrokenResourceError):
        writer.send_nowait(Envelope({"n": 1}))
    with pytest.raises(anyio.BrokenResourceError):
        await writer.send(Envelope({"n": 2}))
    with anyio.fail_after(1):
        await writer.flush()  # returns at once: nothing more can be written


async def test_a_closed_writer_refuses_messages(pipe: tuple[int, int]) -> None:
    _, write_fd = pipe
    writer = PipeWriter(write_fd, True)
    writer.close()
    with pytest.raises(anyio.ClosedResourceError):
        writer.send_nowait(Envelope({"n": 1}))


def _available(read_fd: int) -> bytes:
    try:
        return os.read(read_fd, 1 << 20)
    except BlockingIOError:
        return b""


async def test_a_burst_of_answers_goes_out_in_one_write(pipe: tuple[int, int]) -> None:
    """While input is still buffered (``more()``), answers are held; the one sent when none
    is left carries them all; a lone answer is written at once."""
    read_fd, write_fd = pipe
    buffered = [True]
    writer = PipeWriter(write_fd, True, lambda: buffered[0])
    writer.send_nowait(Envelope({"id": 1}))
    writer.send_nowait(Envelope({"id": 2}))
    assert _available(read_fd) == b""  # held for the rest of the burst
    buffered[0] = False
    writer.send_nowait(Envelope({"id": 3}))
    assert _available(read_fd) == b'{"id":1}\n{"id":2}\n{"id":3}\n'
    writer.send_nowait(Envelope({"id": 4}))  # a lone answer: no wait
    assert _available(read_fd) == b'{"id":4}\n'


async def test_held_answers_go_out_within_the_loop_pass(pipe: tuple[int, int]) -> None:
    """A burst whose last answer is not sent yet (the session stopped reading) does not keep
    the others: they are written by the next pass of the event loop."""
    read_fd, write_fd = pipe
    writer = PipeWriter(write_fd, True, lambda: True)
    writer.send_nowait(Envelope({"id": 1}))
    assert _available(read_fd) == b""
    await anyio.sleep(0)
    await anyio.sleep(0)
    assert _available(read_fd) == b'{"id":1}\n'


async def test_a_write_failing_for_held_answers_fails_the_next_send(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    writer = PipeWriter(write_fd, True, lambda: True)
    writer.send_nowait(Envelope({"id": 1}))
    os.close(read_fd)
    await anyio.sleep(0)
    await anyio.sleep(0)
    with pytest.raises(anyio.BrokenResourceError):
        writer.send_nowait(Envelope({"id": 2}))


async def test_closing_sends_what_a_burst_held(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    writer = PipeWriter(write_fd, True, lambda: True)
    writer.send_nowait(Envelope({"id": 1}))
    writer.close()
    assert _available(read_fd) == b'{"id":1}\n'
