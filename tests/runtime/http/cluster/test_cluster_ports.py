"""The launcher's ports are its own from the moment it picks them.

A port chosen free and bound seconds later by the process that serves it can be taken
meanwhile by any other process on the machine. When the balancer's was, the launcher said
``ready`` (its check connected to the other process), then saw haproxy exit and stopped every
worker: an open ``subscriptions/listen`` stream got its graceful ``complete`` answer where its
client waited for a notification (the one CI failure of ``test_cluster_task_sweep``). The
supervisor now binds every port itself and hands the socket on; a port in use ends the command
before anything starts.
"""

from __future__ import annotations

import errno
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from haproxykit import ensure_haproxy
from mcpbind.runtime.cluster import Supervisor

pytestmark = [pytest.mark.timeout(90)]

REPO = Path(__file__).resolve().parents[4]


def taken(port: int) -> bool:
    """Whether ``127.0.0.1:port`` is bound, as haproxy would bind it (address and port reuse)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            assert exc.errno == errno.EADDRINUSE, exc
            return True
        return False


def test_the_ports_a_supervisor_picks_are_held_until_its_processes_serve_them(
    tmp_path: Path,
) -> None:
    supervisor = Supervisor(
        "examples.cluster.app:app", workers=2, port=0,
        haproxy_path=tmp_path / "haproxy.cfg", run_haproxy=True,
    )  # fmt: skip
    ports = [supervisor.port, *(spec.port for spec in supervisor.specs)]
    try:
        assert len(set(ports)) == 3 and all(taken(port) for port in ports)
    finally:
        supervisor.stop()
    assert not any(taken(port) for port in ports)


def held_pair() -> tuple[socket.socket, int]:
    """A listening socket on a port P whose next one (a first worker's) is free."""
    for _ in range(50):
        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))
        port: int = holder.getsockname()[1]
        if port < 65535 and not taken(port + 1):
            holder.listen()
            return holder, port
        holder.close()
    raise AssertionError("no port with a free neighbour")


def test_a_balancer_port_in_use_ends_the_command_before_anything_starts(tmp_path: Path) -> None:
    holder, port = held_pair()
    with holder:
        done = subprocess.run(
            [sys.executable, "-m", "mcpbind.runtime.cluster", "serve", "examples.cluster.app:app",
             "--workers", "1", "--port", str(port), "--app-dir", str(REPO),
             "--haproxy", str(tmp_path / "haproxy.cfg"), "--run-haproxy",
             "--haproxy-bin", ensure_haproxy()],
            capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 1, done
    # Before: "worker ...", "balancer ..." and "ready" (its check reached this socket), then
    # "haproxy exited with code 1; stopping" took every worker down.
    assert done.stdout == "", done.stdout
    assert f"mcpbind cluster: cannot listen on 127.0.0.1:{port}:" in done.stderr, done.stderr
    assert "haproxy" not in done.stderr
