"""Benchmark of N workers behind haproxy (not a test): ``python bench/cluster.py``.

Every configuration is started with the project's own launcher (``Supervisor``, what
``python -m mcpbind.runtime.cluster serve`` runs) on ``examples/cluster/app.py``, behind a
real haproxy (round robin), with or without a real ``redis-server`` as shared state:

* calls/s of ``echo`` through haproxy with 1, 2 and 3 workers, Redis on and off, in both eras
  (2025-11-25: one session, whose requests land on every worker and are forwarded to its owner
  when Redis is on; without Redis such a session cannot work beyond one worker, shown as "-";
  2026-07-28: stateless, any worker serves it), sequentially and with 32 in flight (the light
  ``LoadClient`` of ``runtime_http.py``, one keep-alive connection per request in flight);
* 3 workers with Redis behind haproxy with ``sticky=True`` (``--sticky-sessions``: a session's
  requests go to the worker that issued it, so none is forwarded);
* 1 worker without haproxy, for what the balancer itself costs;
* the added latency of a forwarded request: one session's ``echo`` sent straight to its owner,
  then to another worker, which forwards it (3 workers, Redis on);
* Redis: the commands our workers send per call (``INFO commandstats``, before and after), and
  what this ``redis-server`` sustains (``redis-benchmark``, if installed); their quotient is
  the rough ceiling of calls/s one Redis instance carries.

The machine's cores are shared with the workers, haproxy, Redis and the client, so absolute
figures mean little: read the ratios within one run. Prints a median of ``--rounds`` rounds.
"""

from __future__ import annotations

import argparse
import io
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(REPO / "tests" / "runtime" / "http" / "cluster"))
sys.path.insert(0, str(REPO / "tests"))  # portkit, which rediskit uses

from haproxykit import ensure_haproxy  # noqa: E402
from mcpbind.runtime import run  # noqa: E402
from mcpbind.runtime.cluster import Supervisor  # noqa: E402
from rediskit import RedisServer  # noqa: E402
from runtime_http import IN_FLIGHT, LoadClient  # noqa: E402

TARGET = "examples.cluster.app:app"
ERAS = {"2025-11-25": False, "2026-07-28": True}


async def rates(url: str, modern: bool, count: int) -> tuple[float, float]:
    """(sequential calls/s, calls/s with ``IN_FLIGHT`` in flight) of ``echo`` at ``url``."""
    client = LoadClient(url, modern)
    try:
        await client.open_session()
        await client.sequential(100)  # warm up every worker's connection
        return await client.sequential(count), await client.in_flight(count * 2)
    finally:
        client.close()


async def forwarded_latency(owner: str, other: str, count: int) -> tuple[float, float]:
    """Mean ms per sequential call of one session: sent to its owner, sent to another worker."""
    local = LoadClient(owner)
    remote = LoadClient(other)
    try:
        await local.open_session()
        await remote.connect(1)
        remote.head = local.head  # the same session, over a connection to the other worker
        await local.sequential(100)
        await remote.sequential(100)
        direct = await local.sequential(count)
        forwarded = await remote.sequential(count)
        return 1000 / direct, 1000 / forwarded
    finally:
        local.close()
        remote.close()


def cluster(
    workers: int, redis: RedisServer | None, tmp: Path, balanced: bool, sticky: bool = False
) -> Supervisor:
    supervisor = Supervisor(
        TARGET, workers=workers, port=0, redis_url=redis.url if redis else None,
        app_dir=str(REPO), haproxy_path=tmp / "haproxy.cfg" if balanced else None,
        run_haproxy=balanced, haproxy_binary=ensure_haproxy(), out=io.StringIO(), sticky=sticky,
    )  # fmt: skip
    try:
        supervisor.start()
    except BaseException:
        supervisor.stop()
        raise
    return supervisor


def commands_done(redis: RedisServer) -> int:
    """Commands this Redis has executed so far (``INFO commandstats``)."""
    info = subprocess.run(
        ["redis-cli", "-s", str(redis.socket_path), "info", "commandstats"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return sum(
        int(part.split("=", 1)[1])
        for line in info.splitlines() if line.startswith("cmdstat_")
        for part in line.split(":", 1)[1].split(",") if part.startswith("calls=")
    )  # fmt: skip


def redis_benchmark(redis: RedisServer) -> dict[str, float]:
    """Requests/s of a few commands like ours, one at a time and pipelined 16 deep."""
    if shutil.which("redis-benchmark") is None:
        return {}
    found: dict[str, float] = {}
    for pipeline in (1, 16):
        out = subprocess.run(
            ["redis-benchmark", "-s", str(redis.socket_path), "-q", "-n", "50000", "-c", "16",
             "-P", str(pipeline), "-t", "set,get,publish,lpush,ping"],
            capture_output=True, text=True, check=False,
        ).stdout  # fmt: skip
        for line in out.replace("\r", "\n").splitlines():
            name, sep, rest = line.partition(": ")
            if sep and "requests per second" in rest:
                found[f"{name.strip()} -P{pipeline}"] = float(rest.split()[0])
    return found


def balanced(
    results: dict[str, list[float]], redis: RedisServer, tmp: Path, count: int,
    workers: int, shared: RedisServer | None, sticky: bool,
) -> None:  # fmt: skip
    """Both eras through haproxy over ``workers`` workers (Redis ``shared`` or none)."""
    supervisor = cluster(workers, shared, tmp, True, sticky)
    url = f"http://127.0.0.1:{supervisor.port}/mcp"
    try:
        for era, modern in ERAS.items():
            if not modern and shared is None and workers > 1 and not sticky:
                continue  # no shared state: a session lives on one worker
            before = commands_done(redis)
            seq, many = run(rates, url, modern, count)
            calls = count * 3 + 100 + (0 if modern else 2)
            key = f"{era} {workers}w redis={'on' if shared else 'off'}{' sticky' if sticky else ''}"
            results.setdefault(f"{key} seq/s", []).append(seq)
            results.setdefault(f"{key} x{IN_FLIGHT}/s", []).append(many)
            if shared is not None:
                per = (commands_done(redis) - before) / calls
                results.setdefault(f"{key} redis cmds/call", []).append(per)
    finally:
        supervisor.stop()


def direct(results: dict[str, list[float]], tmp: Path, count: int) -> None:
    """Both eras on 1 worker without haproxy: what the balancer costs."""
    alone = cluster(1, None, tmp, balanced=False)
    try:
        url = f"http://127.0.0.1:{alone.specs[0].port}/mcp"
        for era, modern in ERAS.items():
            seq, many = run(rates, url, modern, count)
            results.setdefault(f"{era} 1w direct seq/s", []).append(seq)
            results.setdefault(f"{era} 1w direct x{IN_FLIGHT}/s", []).append(many)
    finally:
        alone.stop()


def forwarding(results: dict[str, list[float]], redis: RedisServer, tmp: Path, count: int) -> None:
    """One session's calls to its owner, then to another worker (3 workers, Redis)."""
    three = cluster(3, redis, tmp, balanced=False)
    try:
        owner, other = (f"http://127.0.0.1:{s.port}/mcp" for s in three.specs[:2])
        local, forwarded = run(forwarded_latency, owner, other, count)
        results.setdefault("latency ms, to the owner", []).append(local)
        results.setdefault("latency ms, forwarded", []).append(forwarded)
    finally:
        three.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="sequential calls per figure")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    results: dict[str, list[float]] = {}
    redis = RedisServer()
    redis.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            tmp = Path(folder)
            for _ in range(args.rounds):
                for shared in (None, redis):
                    for workers in (1, 2, 3):
                        balanced(results, redis, tmp, args.count, workers, shared, False)
                balanced(results, redis, tmp, args.count, 3, redis, True)
                direct(results, tmp, args.count)
                forwarding(results, redis, tmp, args.count)
        bench = redis_benchmark(redis)
    finally:
        redis.close()
    medians = {key: statistics.median(values) for key, values in results.items()}
    for key, value in medians.items():
        print(f"{key:48} {value:10.2f}")
    for era in ERAS:
        for mode in ("seq/s", f"x{IN_FLIGHT}/s"):
            base = medians.get(f"{era} 1w redis=off {mode}")
            if not base:
                continue
            ratios = [
                f"{key.split(' ', 1)[1].rsplit(' ', 1)[0]}: {value / base:.2f}"
                for key, value in medians.items()
                if key.startswith(era) and key.endswith(mode)
            ]
            print(f"{era} {mode} relative to 1 worker behind haproxy without Redis: "
                  + ", ".join(ratios))  # fmt: skip
    print(f"forwarding adds {medians['latency ms, forwarded'] - medians['latency ms, to the owner']:.2f} ms"
          f" per call ({medians['latency ms, forwarded'] / medians['latency ms, to the owner']:.2f}x)")  # fmt: skip
    for name, value in bench.items():
        print(f"redis-benchmark {name:28} {value:12.0f} req/s")
    per_call = medians.get("2025-11-25 3w redis=on redis cmds/call")
    single = [value for name, value in bench.items() if name.endswith("-P1")]
    if single and per_call:
        ceiling = statistics.median(single) / per_call
        print(
            f"one Redis: ~{ceiling:.0f} handshake-era calls/s through 3 workers at {per_call:.1f} "
            "commands each (its unpipelined ops/s over our commands per call)"
        )


if __name__ == "__main__":
    main()
