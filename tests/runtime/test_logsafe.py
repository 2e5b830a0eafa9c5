"""Peer-supplied text in log lines: escaped, so it can never forge a line of its own."""

from __future__ import annotations

import logging

import pytest
from mcpbind.runtime import SessionOptions
from mcpbind.runtime.core.logsafe import escape, printable
from runtime_helpers import raw_client_of
from stdio_raw import call
from test_saturation import Probe, probe_server

pytestmark = pytest.mark.anyio

FORGED = "tools/call\n2026-11-24 00:00:00 CRITICAL root: forged line\r\x1b[2J\u2028"


def test_escape_leaves_one_printable_line() -> None:
    escaped = escape(FORGED)
    assert escaped.isprintable() and "\n" not in escaped
    assert escaped.startswith("tools/call\\n2026") and escaped.endswith("\\r\\x1b[2J\\u2028")
    assert escape("plain/method") == "plain/method"
    assert escape("a\\nb") == "a\\\\nb", "a literal backslash cannot pass for an escape"
    assert escape("x" * 500, 10) == "xxxxxxxxxx...(+490 chars)"


def test_printable_formats_lazily() -> None:
    assert f"{printable(FORGED)}" == escape(FORGED)
    assert repr(printable("a\nb")) == "'a\\nb'"
    assert str(printable(7)) == "7" and str(printable({"k": "\n"})) == "{'k': '\\n'}"
    assert str(printable(Sneaky())) == "forged\\nline"


class Sneaky:
    def __repr__(self) -> str:
        return "forged\nline"


async def test_peer_text_in_session_logs_stays_on_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with raw_client_of(probe_server(Probe(), SessionOptions())) as peer:
        await peer.send(call(1, "block"))
        with caplog.at_level(logging.DEBUG, logger="mcpbind.runtime"):
            # A notification whose params are not an object is dropped with a warning naming it.
            await peer.send({"jsonrpc": "2.0", "method": FORGED, "params": [1]})
            await peer.send({"jsonrpc": "2.0", "id": FORGED, "result": {}})
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": 1, "reason": FORGED},
                }
            )
            await peer.request({"jsonrpc": "2.0", "id": "p", "method": "ping"})
    lines = [record.getMessage() for record in caplog.records]
    assert any("dropped notification tools/call\\n" in line for line in lines)
    assert any("unknown id 'tools/call\\n" in line for line in lines)
    assert any("peer cancelled request 1: tools/call\\n" in line for line in lines)
    for line in lines:
        assert line.isprintable(), line
