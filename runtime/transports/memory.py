"""The in-memory transport: two connected ``Connection`` ends in one process."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import anyio
from mcpbind.runtime.core.transport import STREAM_BUFFER, Connection, Envelope

__all__ = ["memory_pair"]


@asynccontextmanager
async def memory_pair(
    buffer: int = STREAM_BUFFER,
) -> AsyncGenerator[tuple[Connection, Connection], None]:
    """Two connected in-memory connections, for tests and in-process use.

    Messages pass as the same dicts, without serialisation, which also keeps tests honest
    about not sharing state: the session never mutates a message after sending it.
    """
    a_send, b_receive = anyio.create_memory_object_stream[Envelope](buffer)
    b_send, a_receive = anyio.create_memory_object_stream[Envelope](buffer)
    async with a_send, b_receive, b_send, a_receive:
        yield Connection(a_receive, a_send), Connection(b_receive, b_send)
