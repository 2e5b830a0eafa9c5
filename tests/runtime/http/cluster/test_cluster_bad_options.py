"""Bad input to the cluster launcher is one line and an exit status, never a traceback: both
command lines (``mcpbind serve``, ``python -m mcpbind.runtime.cluster``) as real subprocesses,
each bad option caught before any worker starts (nothing on stdout, where workers are named)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcpbind.runtime.cluster import check_serve_options

pytestmark = [pytest.mark.timeout(60)]

REPO = Path(__file__).resolve().parents[4]
MCPBIND = [sys.executable, "-m", "mcpbind.codegen"]
LAUNCHER = [sys.executable, "-m", "mcpbind.runtime.cluster"]
TARGET = "examples/cluster/app.py:app"


def run(*command: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, capture_output=True, text=True, timeout=50, check=False, cwd=REPO,
        env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def one_line(done: subprocess.CompletedProcess[str], status: int, prefix: str) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == status, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert len(lines) == 1 and lines[0].startswith(prefix), done.stderr
    assert done.stdout == ""  # no worker was started
    return lines[0]


BAD_OPTIONS = [
    (["--redis", "redis://127.0.0.1:6379/0/3"], "--redis 'redis://127.0.0.1:6379/0/3': the path must be /DB"),
    (["--redis", "redis://127.0.0.1:6379/x"], "the path must be /DB, a database number, not /x"),
    (["--redis", "unix:///x?db=0/3"], "Invalid value for 'db' in connection URL"),
    (["--redis", "unix://"], "a unix:// URL needs the socket's path"),
    (["--redis", "http://x"], "Redis URL must specify one of the following schemes"),
    (["--redis", "redis://127.0.0.1:99999"], "Port out of range"),
    (["--redis", "redis://127.0.0.1:abc"], "Port could not be cast to integer"),
    (["--port", "70000"], "--port 70000: the balancer and its 1 worker(s) take ports"),
    (["--port", "65535"], "take ports 65535..65536, which must lie in 1..65535"),
    (["--port", "-1"], "--port -1"),
    (["--check-ms", "0"], "--check-ms 0: the health-check interval must be positive"),
    (["--haproxy", "/nonexistent-b15/h.cfg"], "no folder '/nonexistent-b15'"),
    (["--haproxy", "/tmp"], "--haproxy '/tmp': is a folder, not a file"),
    (["--haproxy", "h.cfg", "--run-haproxy", "--haproxy-bin", "/nonexistent-b15/haproxy"],
     "--haproxy-bin '/nonexistent-b15/haproxy': no such program"),
    (["--host", "no-such-host.invalid"], "--host 'no-such-host.invalid'"),
    (["--durable-tasks"], "--durable-tasks needs --redis URL"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "fragment"), BAD_OPTIONS)
def test_mcpbind_serve_says_what_is_wrong_in_one_line(args: list[str], fragment: str) -> None:
    done = run(*MCPBIND, "serve", TARGET, "--workers", "1", *args)
    assert fragment in one_line(done, 2, "mcpbind: error: ")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [BAD_OPTIONS[0], BAD_OPTIONS[4], BAD_OPTIONS[7], BAD_OPTIONS[12], (["--workers", "0"], "at least one worker")],
)  # fmt: skip
def test_the_module_launcher_too(args: list[str], fragment: str) -> None:
    done = run(*LAUNCHER, "serve", "examples.cluster.app:app", "--workers", "1", *args)
    line = one_line(done, 2, "python -m mcpbind.runtime.cluster: error: ")
    assert fragment in line


def test_the_module_launcher_checks_its_target_before_any_worker() -> None:
    done = run(*LAUNCHER, "serve", "no_such_module:app", "--workers", "1", "--port", "0")
    assert one_line(done, 2, "python -m mcpbind.runtime.cluster: error: ").endswith(
        'cannot load no_such_module:app: Could not import module "no_such_module".'
    )


def test_the_module_launcher_finds_its_target_without_running_it(tmp_path: Path) -> None:
    # The user's module runs in the workers only, under the environment the launcher gives them.
    marker = tmp_path / "ran"
    (tmp_path / "loud.py").write_text(
        "import os\n"
        f"with open({str(marker)!r}, 'a') as out:\n"
        "    out.write(os.environ.get('MCPBIND_WORKER_ID', 'supervisor') + '\\n')\n"
        "raise RuntimeError('no app here')\n"
    )
    done = run(*LAUNCHER, "serve", "loud:app", "--workers", "1", "--port", "0", "--app-dir",
               str(tmp_path))  # fmt: skip
    assert done.returncode != 0, done.stderr
    assert "Traceback" not in done.stderr
    ran = marker.read_text().split()
    assert ran and "supervisor" not in ran, ran
    done = run(*LAUNCHER, "serve", "loud", "--workers", "1", "--port", "0")
    assert one_line(done, 2, "python -m mcpbind.runtime.cluster: error: ").endswith(
        'cannot load loud: Import string "loud" must be in format "<module>:<attribute>".'
    )


def test_a_worker_with_a_bad_target_fd_or_redis_url_is_one_line() -> None:
    done = run(*LAUNCHER, "worker", "no_such_module:app", "--port", "0")
    assert "cannot load no_such_module:app" in one_line(done, 1, "mcpbind cluster worker: ")
    done = run(*LAUNCHER, "worker", "examples.cluster.app:app", "--port", "1", "--fd", "97")
    assert "cannot serve on 127.0.0.1:1: Bad file descriptor" in one_line(
        done, 1, "mcpbind cluster worker: "
    )
    env = {**os.environ, "MCPBIND_REDIS_URL": "http://x"}
    done = run(*LAUNCHER, "worker", "examples.cluster.app:app", "--port", "0", env=env)
    assert "MCPBIND_REDIS_URL 'http://x': Redis URL must specify" in one_line(
        done, 1, "mcpbind cluster worker: "
    )


@pytest.mark.parametrize(
    "url",
    ["redis://127.0.0.1:6379", "redis://127.0.0.1:6379/", "redis://h:1/2?socket_timeout=3",
     "rediss://u:p@h:1/15", "unix:///tmp/r.sock?db=1"],
)  # fmt: skip
def test_good_redis_urls_pass(url: str) -> None:
    check_serve_options(
        workers=2, host="127.0.0.1", port=9000, redis_url=url, haproxy_path=None,
        run_haproxy=False, haproxy_binary="haproxy", check_ms=1000, durable_tasks=True,
    )  # fmt: skip


def test_mcpbind_serve_checks_its_options_before_running_the_target(tmp_path: Path) -> None:
    # `mcpbind serve` imports its target in the launcher (a failing one is one line there), but
    # only once every option has passed: a bad option never runs the user's code.
    marker = tmp_path / "ran"
    loud = tmp_path / "loud.py"
    loud.write_text(f"open({str(marker)!r}, 'a').close()\nraise RuntimeError('no app here')\n")
    done = run(*MCPBIND, "serve", f"{loud}:app", "--workers", "1", "--port", "70000")
    assert "--port 70000" in one_line(done, 2, "mcpbind: error: ")
    assert not marker.exists()
    done = run(*MCPBIND, "serve", f"{loud}:app", "--workers", "1", "--port", "0")
    line = one_line(done, 2, "mcpbind: error: ")
    assert line.endswith("cannot import loud:app: RuntimeError: no app here"), line
    assert marker.exists()
