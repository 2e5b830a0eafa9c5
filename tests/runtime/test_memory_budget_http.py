"""The memory budget over Streamable HTTP: 100 calls of 3 MiB on a server process
(``budget_server.py``) within a 32 MiB budget, in one handshake session, in 100, and as
stateless-era requests (``budget_helpers.py`` says how the bound is measured); and an
in-process server with its budget spent, refusing new work and answering pings.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest
from budget_helpers import (
    BUDGET_MIB,
    CALLS,
    MIB,
    MIN_HELD,
    PING,
    SIZE,
    TAIL,
    big_call,
    body,
    call_head,
    is_busy,
    rss_mib,
    server_process,
    small_call,
    tool_text,
    within_budget,
)
from httpkit import MODERN_META, modern_headers, raw_initialize, session_headers
from mcpbind.generated.v2025_11_25 import methods, types
from mcpbind.runtime import MemoryBudget, RequestContext, Server, SessionOptions
from mcpbind.runtime.core.budget import REQUEST_BYTES
from mcpbind.runtime.http import StreamableHTTPServer, serving

pytestmark = pytest.mark.anyio


async def wait_for(condition: Callable[[], Awaitable[bool]], seconds: float = 60) -> None:
    with anyio.fail_after(seconds):
        while not await condition():
            await anyio.sleep(0.1)


async def post_parts(
    http: httpx.AsyncClient, base: str, parts: list[bytes], headers: dict[str, str]
) -> httpx.Response:
    size = str(sum(len(p) for p in parts))
    return await http.post(
        f"{base}/mcp", content=body(parts), headers={**headers, "content-length": size}
    )


def answer_of(response: httpx.Response) -> Any:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[6:] for line in response.text.splitlines() if line.startswith("data: {")]
        return json.loads(data[-1])
    return response.json()


def busy_answer(response: httpx.Response) -> bool:
    """Refused at once: 503 with ``Retry-After`` and -31503, or (handshake era, a request
    that reached its session) the JSON-RPC busy error in a 200 answer."""
    if response.status_code == 503:
        return "retry-after" in response.headers and is_busy(response.json())
    return response.status_code == 200 and is_busy(answer_of(response))


async def open_session(http: httpx.AsyncClient, base: str) -> dict[str, str]:
    """A handshake-era session's headers, initialized by hand."""
    return session_headers(await raw_initialize(http, f"{base}/mcp"))


async def small(
    http: httpx.AsyncClient, base: str, headers: dict[str, str], message: dict[str, Any]
) -> Any:
    if "mcp-name" in headers:  # stateless era: the header names the tool called
        headers = {**headers, "mcp-name": message["params"]["name"]}
    response = await http.post(f"{base}/mcp", json=message, headers=headers)
    assert response.status_code == 200, response.text
    return answer_of(response)


@pytest.mark.parametrize(
    "layout",
    ["one handshake session", "100 handshake sessions", "100 stateless-era requests"],
)
async def test_http_100_calls_of_3_mib_stay_within_the_budget(layout: str) -> None:
    modern = layout.startswith("100 stateless")
    limits = httpx.Limits(max_connections=CALLS + 20, max_keepalive_connections=CALLS + 20)
    async with (
        server_process("http") as (process, base),
        httpx.AsyncClient(timeout=120, limits=limits) as http,
    ):
        if modern:
            sessions = [modern_headers(name="hold")] * CALLS
            control = modern_headers(name="budget")
        elif layout == "one handshake session":
            sessions = [await open_session(http, base)] * CALLS
            control = sessions[0]
        else:
            sessions = [await open_session(http, base) for _ in range(CALLS)]
            control = sessions[0]

        async def budget_use() -> dict[str, int]:
            answer = await small(http, base, control, small_call("b", "budget", modern))
            return dict(json.loads(tool_text(answer)))

        async def budget_used() -> int:
            return (await budget_use())["used"]

        warm = await post_parts(http, base, big_call("warm", "budget", modern), control)
        assert "used" in tool_text(answer_of(warm))  # the base's call
        base_mib = rss_mib(process.pid)
        responses: dict[int, httpx.Response] = {}

        async def one(n: int) -> None:
            responses[n] = await post_parts(http, base, big_call(n, modern=modern), sessions[n])

        async def settled() -> bool:  # every call answered busy or waiting in the tool
            # The query is new work too: while bodies still stream in and are held, it may be
            # answered busy itself; ask again.
            headers = control
            message = small_call("b", "budget", modern)
            if "mcp-name" in headers:
                headers = {**headers, "mcp-name": "budget"}
            response = await http.post(f"{base}/mcp", json=message, headers=headers)
            if busy_answer(response):
                return False
            held = int(json.loads(tool_text(answer_of(response)))["held"])
            return len(responses) + held >= CALLS

        async with anyio.create_task_group() as tg:
            for n in range(CALLS):
                tg.start_soon(one, n)
            await wait_for(settled)
            held = CALLS - len(responses)
            refused = list(responses.values())
            assert all(busy_answer(r) for r in refused), [(r.status_code, r.text) for r in refused]
            assert any(r.status_code == 503 for r in refused)
            assert MIN_HELD <= held <= BUDGET_MIB * MIB // SIZE, held
            # 100 calls would hold 300 MiB; the bodies being read (from their first byte) and
            # what uvicorn reads of them ahead of the app are held in the budget too.
            within_budget(process.pid, base_mib, f"{layout}, {held} held")
            # Pings go on, on every session, while the budget is spent.
            if not modern:
                for headers in {id(h): h for h in sessions}.values():
                    assert (await small(http, base, headers, PING))["result"] == {}
            released = await small(http, base, control, small_call("r", "release", modern))
            assert tool_text(released) == "released"
        done = [n for n, r in responses.items() if r.status_code == 200 and not busy_answer(r)]
        assert len(done) == held
        assert {tool_text(answer_of(responses[n])) for n in done} == {f"held {SIZE}"}
        # What is left: the event store's answers, and the asking request itself.
        assert await budget_used() < REQUEST_BYTES + 64 * 1024
        # Everything recovers: every session takes a 3 MiB call again.
        again = await post_parts(http, base, big_call("again", "budget", modern), control)
        assert "used" in tool_text(answer_of(again))
        for headers in {id(h): h for h in sessions}.values():
            if not modern:
                assert "used" in tool_text(
                    await small(http, base, headers, small_call("s", "budget"))
                )
                assert (await http.delete(f"{base}/mcp", headers=headers)).status_code == 200
        # The sessions gone (their event stores with them), the budget holds nothing but the
        # asking call.
        final = await small(
            http, base, modern_headers(name="budget"), small_call("b", "budget", True)
        )
        assert json.loads(tool_text(final))["used"] < REQUEST_BYTES + 1024  # the asking one


async def test_with_the_budget_spent_http_refuses_new_work_and_serves_pings() -> None:
    budget = MemoryBudget(8 * MIB)
    server = Server(
        "spent", capabilities={"tools": {}}, options=SessionOptions(memory_budget=budget)
    )

    @server.handler(methods.TOOLS_LIST)
    async def list_tools(
        params: types.PaginatedRequestParams, context: RequestContext
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])

    app = StreamableHTTPServer(server.serve, memory_budget=budget)
    async with serving(app) as base, httpx.AsyncClient(timeout=30) as http:
        headers = await open_session(http, base)
        assert budget.reserve(budget.limit - budget.used)  # every byte held elsewhere
        # A body over 64 KiB is refused unread: 503, Retry-After, -31503 busy.
        refused = await post_parts(http, base, [call_head(1, "x"), b"y" * 100_000, TAIL], headers)
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        assert is_busy(refused.json()) and refused.json()["id"] is None
        # A small one is read: a ping is answered, a request refused by its session.
        assert (await small(http, base, headers, PING))["result"] == {}
        listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        assert is_busy(await small(http, base, headers, listed))
        # In the stateless era the busy answer is an HTTP 503 with Retry-After too.
        modern = {**listed, "params": {"_meta": MODERN_META}}
        stateless = modern_headers("tools/list")
        busy = await http.post(f"{base}/mcp", json=modern, headers=stateless)
        assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
        assert is_busy(busy.json()) and busy.json()["id"] == 2
        budget.release(budget.limit)
        assert (await small(http, base, headers, listed))["result"] == {"tools": []}
        again = await post_parts(http, base, [call_head(3, "x"), b"y" * 100_000, TAIL], headers)
        assert again.status_code == 200 and not is_busy(answer_of(again))
        assert budget.used < 64 * 1024  # the ping and the answers' events
