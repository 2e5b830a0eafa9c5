"""The memory budget over legacy HTTP+SSE, on a server process (``budget_server.py``): POSTs
beyond a 32 MiB budget get 429 with ``Retry-After``, pings go on, and everything is served
again once the held calls are released (``budget_helpers.py`` says how the bound is measured).
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.abc
import httpx
import orjson
import pytest
from budget_helpers import (
    BUDGET_MIB,
    MIB,
    MIN_HELD,
    PING,
    SIZE,
    big_call,
    body,
    rss_mib,
    server_process,
    small_call,
    tool_text,
    within_budget,
)
from httpkit import INITIALIZE

pytestmark = pytest.mark.anyio

#: The revision of HTTP+SSE, the legacy transport.
LEGACY = "2024-11-05"


class SseReader:
    """The legacy SSE stream on a raw socket: its endpoint, then every message, parsed."""

    def __init__(self, stream: anyio.abc.SocketStream) -> None:
        self.stream = stream
        self.buffer = b""
        self.messages: list[Any] = []
        self.endpoint = ""

    async def read(self) -> None:
        while True:
            try:
                self.buffer += await self.stream.receive(1 << 20)
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return
            while b"\r\n\r\n" in self.buffer or b"\n\n" in self.buffer:
                cut = self.buffer.find(b"\n\n")
                event, self.buffer = self.buffer[:cut], self.buffer[cut + 2 :]
                for line in event.split(b"\n"):
                    if line.startswith(b"data: /"):
                        self.endpoint = line[6:].strip().decode()
                    elif line.startswith(b"data: {"):
                        self.messages.append(orjson.loads(line[6:]))

    def answer(self, request_id: Any) -> Any:
        return next((m for m in self.messages if m.get("id") == request_id), None)


async def test_legacy_sse_posts_beyond_the_budget_get_429_and_pings_go_on() -> None:
    async with (
        server_process("legacy") as (process, base),
        httpx.AsyncClient(timeout=60) as http,
        anyio.create_task_group() as tg,
    ):
        host, port = base.removeprefix("http://").split(":")
        stream = await anyio.connect_tcp(host, int(port))
        await stream.send(
            b"GET /sse HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n\r\n"
        )
        sse = SseReader(stream)
        tg.start_soon(sse.read)

        async def answered(request_id: Any) -> Any:
            with anyio.fail_after(30):
                while (found := sse.answer(request_id)) is None:
                    await anyio.sleep(0.02)
            return found

        with anyio.fail_after(10):
            while not sse.endpoint:
                await anyio.sleep(0.02)
        url = f"{base}{sse.endpoint}"
        json_headers = {"content-type": "application/json"}

        async def post(message: dict[str, Any]) -> int:
            return (await http.post(url, json=message, headers=json_headers)).status_code

        init = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": LEGACY}}
        assert await post(init) == 202
        await answered(0)
        assert await post({"jsonrpc": "2.0", "method": "notifications/initialized"}) == 202
        parts = big_call("warm", "budget")
        size = str(sum(len(p) for p in parts))
        warm = await http.post(
            url, content=body(parts), headers={**json_headers, "content-length": size}
        )
        assert warm.status_code == 202
        assert "used" in tool_text(await answered("warm"))  # the base's call
        base_mib = rss_mib(process.pid)
        statuses = []
        for n in range(1, 21):
            parts = big_call(n)
            size = str(sum(len(p) for p in parts))
            response = await http.post(
                url, content=body(parts), headers={**json_headers, "content-length": size}
            )
            statuses.append(response.status_code)
            if response.status_code == 429:
                assert response.headers["retry-after"] == "1"
                assert "Too Many Requests" in response.json()["error"]["message"]
        held = statuses.count(202)
        assert statuses == [202] * held + [429] * (20 - held), statuses
        assert MIN_HELD <= held <= BUDGET_MIB * MIB // SIZE, held
        within_budget(process.pid, base_mib, f"legacy, {held} held")
        assert await post(PING) == 202, "a ping is taken with the budget spent"
        assert (await answered("ping"))["result"] == {}
        assert await post(small_call("r", "release")) == 202
        for n in range(1, held + 1):
            assert tool_text(await answered(n)) == f"held {SIZE}"
        parts = big_call("again", "budget")
        size = str(sum(len(p) for p in parts))
        again = await http.post(
            url, content=body(parts), headers={**json_headers, "content-length": size}
        )
        assert again.status_code == 202
        assert "used" in tool_text(await answered("again"))
        tg.cancel_scope.cancel()
