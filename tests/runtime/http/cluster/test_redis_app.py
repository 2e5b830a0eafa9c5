"""``App`` on many workers: ``http_app(shared=...)`` and ``shared_state_from_env()``.

Two ``App`` workers (the same tools, as a deployment runs one program N times) share a real
``redis-server``; the state comes from the environment as a launcher would set it. A session
opened on one is served by the other, and a tool added on one worker is announced to a client
of the other even though the first has no session of its own.
"""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from httpkit import answers, raw_initialize, session_headers
from mcpbind.runtime import App
from mcpbind.runtime.cluster import InProcessState, RedisState, shared_state_from_env
from mcpbind.runtime.http import serving
from rediskit import RedisServer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def make_app() -> App:
    app = App("clustered", version="1.0")

    @app.tool()
    def hello(name: str) -> str:
        """Greets."""
        return f"hello {name}"

    return app


def test_the_state_comes_from_the_environment(
    redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCPBIND_REDIS_URL", raising=False)
    assert isinstance(shared_state_from_env(), InProcessState)
    monkeypatch.setenv("MCPBIND_REDIS_URL", redis.url)
    monkeypatch.setenv("MCPBIND_WORKER_ID", "env-worker")
    state = shared_state_from_env()
    assert isinstance(state, RedisState) and state.worker_id == "env-worker"
    monkeypatch.delenv("MCPBIND_WORKER_ID")
    assert ":" in shared_state_from_env().worker_id  # host:pid


async def test_app_workers_share_sessions_and_changes(
    redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPBIND_REDIS_URL", redis.url)
    apps, endpoints = [], []
    for name in ("app-a", "app-b"):
        monkeypatch.setenv("MCPBIND_WORKER_ID", name)
        app = make_app()
        apps.append(app)
        endpoints.append(app.http_app(shared=shared_state_from_env()))
    async with (
        serving(endpoints[0]) as base_a,
        serving(endpoints[1]) as base_b,
        httpx.AsyncClient(timeout=15) as http,
    ):
        a, b = f"{base_a}/mcp", f"{base_b}/mcp"
        sid = await raw_initialize(http, b)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "hello", "arguments": {"name": "b"}}}  # fmt: skip
        answered = await http.post(a, json=call, headers=session_headers(sid))
        assert answers(answered)[0]["result"]["content"][0]["text"] == "hello b"
        assert endpoints[0].stats["forwarded_out"] == 1
        assert endpoints[1].stats["forwarded_in"] == 1
        async with http.stream("GET", b, headers=session_headers(sid)) as stream:
            with anyio.fail_after(10):
                while endpoints[1].sessions[sid].standalone.consumer is None:
                    await anyio.sleep(0.02)
                assert not apps[0].server.sessions  # worker A has no session of its own
                apps[0].add_tool(lambda: "new", name="fresh")
                seen = []
                async for line in stream.aiter_lines():
                    if line.startswith("data: {"):
                        seen.append(json.loads(line[6:])["method"])
                        break
        assert seen == ["notifications/tools/list_changed"]
