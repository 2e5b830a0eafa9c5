"""The launcher itself: ``python -m mcpbind.runtime.cluster serve`` on the example ``App``.

Two workers without Redis (the stateless era needs none) behind haproxy, with ``--restart``:
every worker serves, each under its own ``MCPBIND_WORKER_ID``, round robin without stickiness;
a worker that dies is reported and started again; SIGTERM stops every process it started. A
target that cannot be loaded ends the command with a clear message, not a hang. With
``--sticky-sessions`` haproxy keeps a session on the worker that issued it, so handshake-era
sessions work even without Redis.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from clusterkit import Cluster, running_cluster, sse_events
from httpkit import MODERN_META, answers, modern_call, modern_headers
from mcpbind.generated import v2025_11_25
from mcpbind.runtime import Client
from mcpbind.runtime.http import streamable_http_client

pytestmark = [pytest.mark.timeout(90)]

REPO = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running_cluster(
        tmp_path_factory.mktemp("cluster"), None, workers=2,
        target="examples.cluster.app:app", app_dir=REPO, extra=("--restart",),
    ) as running:  # fmt: skip
        yield running


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def whoami(url: str, request_id: int) -> str:
    answer = httpx.post(
        url, json=modern_call(request_id, "whoami"), headers=modern_headers("tools/call", "whoami")
    )
    assert answer.status_code == 200, answer.text
    # JSON or SSE: a worker slower than its ``sse_after`` answers as a stream, as it may.
    (message,) = answers(answer)
    return str(message["result"]["content"][0]["text"])


def test_every_worker_serves_under_its_own_id_round_robin(cluster: Cluster) -> None:
    names = [worker.name for worker in cluster.workers]
    assert len(set(names)) == 2
    answered = [whoami(cluster.url, n) for n in range(4)]
    assert sorted(answered) == sorted(names * 2), answered  # each twice: no stickiness
    for worker in cluster.workers:
        health = httpx.get(f"{worker.base}/healthz")
        assert health.status_code == 200 and health.json() == {"worker": worker.name}


def test_workers_run_with_the_allocator_setting_the_memory_budget_needs(cluster: Cluster) -> None:
    for worker in cluster.workers:
        environ = Path(f"/proc/{worker.pid}/environ").read_bytes().split(b"\0")
        assert b"MALLOC_MMAP_THRESHOLD_=131072" in environ


def test_a_dead_worker_is_reported_and_started_again(cluster: Cluster) -> None:
    dead = cluster.kill(0)
    words = cluster.next_line().split()
    assert words[:3] == ["worker", dead.name, "pid"] and int(words[3]) != dead.pid, words
    assert f"worker {dead.name} (pid {dead.pid}, port" in cluster.stderr()
    assert "exited with code -9" in cluster.stderr()
    assert whoami(words[4], 7) == dead.name  # the same id, on the same port
    cluster.workers[0].pid = int(words[3])


def test_sigterm_stops_every_process_it_started(cluster: Cluster) -> None:
    """... gracefully: an open listen stream gets its ``complete`` answer before the end."""
    balancer = next(int(line.split()[2]) for line in cluster.lines if line.startswith("balancer"))
    listen = {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
              "params": {"notifications": {"toolsListChanged": True}, "_meta": MODERN_META}}  # fmt: skip

    async def listen_until_the_end() -> list[Any]:
        seen: list[Any] = []
        async with httpx.AsyncClient(timeout=15) as http:
            headers = modern_headers("subscriptions/listen")
            url = cluster.workers[1].url
            async with http.stream("POST", url, json=listen, headers=headers) as stream:
                async for _, message in sse_events(stream):
                    seen.append(message)
                    if (
                        message
                        and message.get("method") == "notifications/subscriptions/acknowledged"
                    ):
                        cluster.process.send_signal(signal.SIGTERM)
        return seen

    seen = anyio.run(listen_until_the_end)
    assert seen[-1] is not None and seen[-1].get("id") == 1 and "result" in seen[-1], seen
    assert cluster.process.wait(timeout=15) == 0
    assert all(gone(pid) for pid in [balancer, *(w.pid for w in cluster.workers)])


def test_a_target_that_cannot_load_ends_the_command_clearly(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpbind.runtime.cluster", "serve", "no_such_module:app",
         "--workers", "1", "--port", "0"],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip
    # Checked before any worker starts: one line, status 2 (a usage error), nothing started.
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "python -m mcpbind.runtime.cluster: error: cannot load no_such_module:app: "
        'Could not import module "no_such_module".'
    ]
    assert done.stdout == ""


def test_sticky_sessions_stay_on_the_worker_that_issued_them(tmp_path: Path) -> None:
    async def session_workers() -> list[str]:
        async with Client(streamable_http_client(sticky.url), protocol_version="2025-11-25") as c:
            params = v2025_11_25.types.CallToolRequestParams(name="whoami")
            return [
                str((await c.send_request(v2025_11_25.methods.TOOLS_CALL, params)).content[0].text)
                for _ in range(6)
            ]

    with running_cluster(
        tmp_path, None, workers=2, target="examples.cluster.app:app", app_dir=REPO,
        extra=("--sticky-sessions",),
    ) as sticky:  # fmt: skip
        first, second = anyio.run(session_workers), anyio.run(session_workers)
    names = {worker.name for worker in sticky.workers}
    assert len(set(first)) == 1 and len(set(second)) == 1, (first, second)
    assert {first[0], second[0]} == names  # new sessions still go round robin


def test_the_example_balancer_configuration_is_what_the_launcher_writes() -> None:
    from mcpbind.runtime.cluster import WorkerSpec, haproxy_config

    written = haproxy_config([WorkerSpec(f"w{n}", 9000 + n) for n in (1, 2, 3)], 9000)
    example = (REPO / "examples" / "cluster" / "haproxy.cfg").read_text()
    body = example[example.index("global\n") :]
    assert body == written[written.index("global\n") :]


def test_every_request_state_keeper_takes_the_clusters_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two workers' default keepers open each other's ``requestState`` when the launcher set
    ``MCPBIND_STATE_KEY`` (the apps wire nothing); two processes' without it do not."""
    from mcpbind.runtime import McpError, RequestStateKeeper, shared_state_key

    monkeypatch.delenv("MCPBIND_STATE_KEY", raising=False)
    assert shared_state_key() is None
    sealed = RequestStateKeeper().seal({"v": 1, "n": 1})
    with pytest.raises(McpError):
        RequestStateKeeper().open(sealed)
    monkeypatch.setenv("MCPBIND_STATE_KEY", "a secret of the cluster")
    sealed = RequestStateKeeper().seal({"v": 1, "n": 2})
    assert RequestStateKeeper().open(sealed)["n"] == 2
    monkeypatch.setenv("MCPBIND_STATE_KEY", "short")
    with pytest.raises(ValueError, match="MCPBIND_STATE_KEY"):
        RequestStateKeeper()
