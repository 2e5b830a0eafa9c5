"""``App.run_http`` on a port it cannot bind: one plain ``OSError`` naming ``host:port``,
raised before the lifespan is entered, not an exception group from inside the server."""

from __future__ import annotations

import errno
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import pytest
from mcpbind.runtime.app import App
from portkit import listening_socket

pytestmark = [pytest.mark.timeout(30)]


def test_a_port_in_use_is_one_oserror_before_the_lifespan() -> None:
    entered: list[str] = []

    @asynccontextmanager
    async def lifespan(app: App[None]) -> AsyncGenerator[None]:
        entered.append("entered")
        yield

    app = App("busy", lifespan=lifespan)
    with listening_socket() as sock:
        port = sock.getsockname()[1]
        with pytest.raises(OSError) as raised:
            app.run_http(port=port)
    assert raised.type is OSError  # not a group around one
    assert raised.value.errno == errno.EADDRINUSE
    assert str(raised.value.strerror) == f"cannot listen on 127.0.0.1:{port}: address in use"
    assert entered == []


def test_a_port_out_of_range_is_an_oserror_too() -> None:
    with pytest.raises(OSError, match=r"cannot listen on 127\.0\.0\.1:70000: .*0-65535"):
        App("far").run_http(port=70000)
