"""What a peer can send in any number never floods the log nor stops the reading.

Responses to no request are warned about a few times, then summed up (``LogLimiter``);
notification handlers past their bound (``max_pending_requests``, 4,096 by default) are not run
(with a rate-limited warning) instead of holding back the reading, so a ``ping`` is answered
at once while thousands of slow notifications are running. A real server session, in memory.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio
import pytest
from mcpbind.generated.v2025_11_25 import methods
from mcpbind.runtime import Server
from mcpbind.runtime.core.logsafe import LogLimiter
from runtime_helpers import raw_client_of

pytestmark = pytest.mark.anyio

PING = {"jsonrpc": "2.0", "id": "ping-1", "method": "ping"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def warnings_from(caplog: pytest.LogCaptureFixture, text: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno == logging.WARNING and text in r.getMessage()]


async def test_ten_thousand_unknown_responses_give_a_bounded_number_of_warnings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpbind.runtime.core")
    async with raw_client_of(Server("flooded")) as peer:
        for n in range(10_000):
            await peer.send({"jsonrpc": "2.0", "id": f"nobody-{n}", "result": {}})
        # The session still serves: the ping is answered after the flood was read.
        reply = await peer.request(PING)
        assert reply["result"] == {}
    records = warnings_from(caplog, "unknown id")
    assert 1 <= len(records) <= 11, len(records)
    assert "nobody-0" in records[0].getMessage()


def test_a_log_limiter_sums_up_what_it_left_out(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="limited")
    limiter = LogLimiter(logging.getLogger("limited"), burst=3, interval=0.05)
    for n in range(1000):
        limiter.log(logging.WARNING, "event %d", n)
    assert [r.getMessage() for r in caplog.records] == ["event 0", "event 1", "event 2"]
    time.sleep(0.06)  # one interval: one more record, which reports the ones left out
    limiter.log(logging.WARNING, "event %d", 1000)
    assert caplog.records[-1].getMessage() == (
        "event 1000 (and 997 more like it left out of the log)"
    )
    assert limiter.suppressed == 0


async def test_slow_notifications_at_their_bound_never_hold_back_a_ping(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpbind.runtime.core")
    server = Server("busy")
    release = anyio.Event()
    started: list[int] = []

    @server.notification_handler(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED)
    async def slow(params: Any, session: Any) -> None:
        started.append(1)
        await release.wait()

    changed = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
    async with raw_client_of(server) as peer:
        # Past the default bound of 4,096 running handlers; a session that stopped reading
        # would leave these sends waiting on a full stream.
        with anyio.fail_after(10):
            for _ in range(5_000):
                await peer.send(changed)
        begun = time.monotonic()
        reply = await peer.request(PING, timeout=5.0)
        assert reply["result"] == {}
        assert time.monotonic() - begun < 2.0
        assert len(started) == 4_096
        release.set()
        # Once the handlers have ended there is room again: the next one runs.
        with anyio.fail_after(5):
            while len(started) < 4_097:
                await peer.send(changed)
                await anyio.sleep(0.01)
    dropped = warnings_from(caplog, "dropped notification notifications/roots/list_changed")
    assert 1 <= len(dropped) <= 11, len(dropped)
