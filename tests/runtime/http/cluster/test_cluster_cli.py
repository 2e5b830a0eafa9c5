"""``mcpbind serve``: the cluster launcher under the ``mcpbind`` command line, a real subprocess
with two workers sharing a real Redis behind haproxy; SIGINT stops it all (exit status 0)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from haproxykit import ensure_haproxy
from mcpbind.runtime import Client
from mcpbind.runtime.http import streamable_http_client
from rediskit import RedisServer

pytestmark = [pytest.mark.timeout(120)]

REPO = Path(__file__).resolve().parents[4]
MCPBIND = [sys.executable, "-m", "mcpbind.codegen"]


def test_serve_brings_up_workers_that_answer(tmp_path: Path, redis: RedisServer) -> None:
    command = [*MCPBIND, "serve", "examples/cluster/app.py:app", "--workers", "2",
               "--port", "0", "--redis", redis.url, "--haproxy", str(tmp_path / "h.cfg"),
               "--run-haproxy", "--haproxy-bin", ensure_haproxy(), "--check-ms", "200"]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=REPO, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None
    try:
        lines: list[str] = []
        for line in process.stdout:
            lines.append(line.strip())
            if line.strip() == "ready":
                break
        workers = [line.split()[1] for line in lines if line.startswith("worker ")]
        url = next(line.split()[3] for line in lines if line.startswith("balancer "))
        assert len(workers) == 2, lines

        async def main() -> tuple[set[str], str]:
            async with Client(streamable_http_client(url), protocol_version="2026-07-28") as c:
                served = {(await c.call_tool("whoami")).content[0].text for _ in range(4)}
            async with Client(streamable_http_client(url)) as c:  # a session, shared in Redis
                echoed = [(await c.call_tool("echo", {"text": "hi"})).content[0].text for _ in "ab"]
            return served, echoed[-1]

        served, echoed = anyio.run(main)
        assert served == set(workers) and echoed == "hi"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        assert "Traceback" not in err
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_target_that_does_not_import_is_one_line_before_any_worker(tmp_path: Path) -> None:
    done = subprocess.run(
        [*MCPBIND, "serve", "no_such_module:app", "--workers", "1", "--port", "0"],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        'mcpbind: error: cannot load no_such_module:app: Could not import module "no_such_module".'
    ]
    assert done.stdout == ""  # no worker was started
