"""The tests' port helper: a held socket no other process can bind, and the retry on a taken
port (said as a warning, given up after a few)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from portkit import (
    PortRetryWarning,
    PortTaken,
    listening_socket,
    on_fresh_port,
    says_port_taken,
)

BIND = "import socket, sys; socket.create_server(('127.0.0.1', int(sys.argv[1])))"


def test_a_listening_socket_is_held_against_other_processes() -> None:
    with listening_socket() as sock:
        port = sock.getsockname()[1]
        run = subprocess.run(
            [sys.executable, "-c", BIND, str(port)], capture_output=True, text=True, timeout=30
        )
    assert run.returncode != 0 and says_port_taken(run.stderr), run.stderr


def test_a_taken_port_is_retried_on_a_fresh_one_and_said() -> None:
    tried: list[int] = []

    def start(port: int) -> int:
        tried.append(port)
        if len(tried) == 1:
            raise PortTaken("Address already in use")
        return port

    with pytest.warns(PortRetryWarning, match="retrying on a fresh port"):
        assert on_fresh_port(start, "peer") == tried[-1]
    assert len(tried) == 2


def test_ports_taken_every_time_fail_the_test() -> None:
    def start(port: int) -> int:
        raise PortTaken("EADDRINUSE")

    with (
        pytest.warns(PortRetryWarning),
        pytest.raises(AssertionError, match="peer: ports taken 3 times"),
    ):
        on_fresh_port(start, "peer")
