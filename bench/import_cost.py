"""What a revision's generated classes cost to import, and a stdio server to start (not a test):
``python bench/import_cost.py [--rounds N] [--no-callgrind]``.

Measured, each in fresh processes (``PYTHONHASHSEED=0``, ``.pyc`` present after one warm-up):

* ``one class``: ``from mcpbind.generated.v2025_11_25.types import Tool``, against its floor,
  ``import mcpbind.generated.support`` (pydantic and the model base class, which any use of the
  bindings needs). The import is timed inside the process (``time.perf_counter()``, interpreter
  start-up excluded) and the whole process is counted under callgrind; the figure that matters
  is the difference to the floor, the revision's own cost.
* ``first answer``: the example app (``examples/app_server.py``) and the low-level example
  server (``examples/server.py``) spawned and asked ``initialize`` (2025-11-25) by
  ``runtime_stdio``'s blocking driver: the wall time from spawn to the answer, and under
  callgrind the instructions of a server that answers it and exits.
* ``floor``: ``bench/floor_stdio.py``, the running stack under the runtime and nothing of it
  (anyio's asyncio backend on uvloop, orjson, the model base, one model built on the first
  request), spawned, answered and counted the same way in the same rounds: what a first answer
  cannot go below on this machine.
* ``idle RSS``: the same servers after ``initialize`` and one ``echo`` call, idle for 0.5 s,
  against that floor and ``bench/bare_stdio.py`` with the stack imported but not running.

Timed figures are medians (and for the first answers, minimums) of ``--rounds`` interleaved
rounds; callgrind counts are one run each (they do not move with the machine's load).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import _callgrind  # noqa: E402
from runtime_stdio import Driver, rss_mib  # noqa: E402

PROBE = "import time\nt = time.perf_counter()\n{statement}\nprint(repr(time.perf_counter() - t))\n"
ONE_CLASS = "from mcpbind.generated.v2025_11_25.types import Tool"
FLOOR = "import mcpbind.generated.support"
APP = [sys.executable, str(ROOT / "examples" / "app_server.py")]
SERVER = [sys.executable, str(ROOT / "examples" / "server.py")]
STACK = (
    "import anyio, uvloop, orjson, pydantic, runpy; runpy.run_path({path!r}, run_name='__main__')"
)
BARE = [sys.executable, "-c", STACK.format(path=str(ROOT / "bench" / "bare_stdio.py"))]
RUNNING = [sys.executable, str(ROOT / "bench" / "floor_stdio.py")]
ECHO = {"name": "echo", "arguments": {"text": "hello"}}
REVISION = "2025-11-25"


def environment() -> dict[str, str]:
    env = dict(os.environ, PYTHONHASHSEED="0")
    # Measured as a user runs it: with the .pyc files the warm-up wrote.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def timed_import(statement: str) -> float:
    """Seconds ``statement`` takes in a fresh interpreter, start-up excluded."""
    code = PROBE.format(statement=statement)
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        capture_output=True,
        text=True,
        env=environment(),
        cwd=ROOT,
    )
    return float(out.stdout.strip())


def callgrind_total(argv: list[str], drive: Callable[[Driver], None] | None = None) -> int:
    """Instructions ``argv`` runs under callgrind; ``drive`` talks to it before its input closes."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        if drive is None:
            return _callgrind.run(argv, out, environment(), ROOT)
        driver = start(_callgrind.command(argv, out))
        drive(driver)
        driver.close(grace=300)
        return _callgrind.total(out)


def start(argv: list[str]) -> Driver:
    os.environ.update(environment())
    # The driver's children inherit os.environ: without this they would write no .pyc.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    return Driver(argv)


def initialize(driver: Driver) -> None:
    driver.call(
        "initialize",
        {
            "protocolVersion": REVISION,
            "capabilities": {},
            "clientInfo": {"name": "import-cost", "version": "0"},
        },
    )


def first_answer(argv: list[str]) -> float:
    spawned = time.perf_counter()
    driver = start(argv)
    try:
        initialize(driver)
        return time.perf_counter() - spawned
    finally:
        driver.close()


def idle_rss(argv: list[str]) -> float:
    driver = start(argv)
    try:
        initialize(driver)
        driver.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        driver.call("tools/call", ECHO)
        time.sleep(0.5)
        return rss_mib(driver.process.pid)
    finally:
        driver.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--no-callgrind", action="store_true")
    args = parser.parse_args()
    timed_import(ONE_CLASS)  # warm-up: .pyc files written
    first_answer(APP), first_answer(SERVER), first_answer(RUNNING)
    samples: dict[str, list[float]] = {
        "one class ms": [],
        "floor ms": [],
        "first answer ms": [],
        "server answer ms": [],
        "floor answer ms": [],
        "idle RSS MiB": [],
        "server RSS MiB": [],
        "floor RSS MiB": [],
        "bare RSS MiB": [],
    }
    for _ in range(args.rounds):
        samples["one class ms"].append(timed_import(ONE_CLASS) * 1000)
        samples["floor ms"].append(timed_import(FLOOR) * 1000)
        samples["first answer ms"].append(first_answer(APP) * 1000)
        samples["server answer ms"].append(first_answer(SERVER) * 1000)
        samples["floor answer ms"].append(first_answer(RUNNING) * 1000)
        samples["idle RSS MiB"].append(idle_rss(APP))
        samples["server RSS MiB"].append(idle_rss(SERVER))
        samples["floor RSS MiB"].append(idle_rss(RUNNING))
        samples["bare RSS MiB"].append(idle_rss(BARE))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    load = os.getloadavg()[0]
    print(f"medians (minimums) of {args.rounds} rounds (load average {load:.2f}):")
    for name, value in medians.items():
        print(f"  {name:>18}: {value:8.1f} ({min(samples[name]):.1f})")
    print(f"  {'revision cost ms':>18}: {medians['one class ms'] - medians['floor ms']:8.1f}")
    print(f"  {'RSS over floor':>18}: {medians['idle RSS MiB'] - medians['floor RSS MiB']:8.1f}")
    if args.no_callgrind:
        return
    one = callgrind_total([sys.executable, "-c", ONE_CLASS])
    floor = callgrind_total([sys.executable, "-c", FLOOR])
    answer = callgrind_total(APP, initialize)
    server = callgrind_total(SERVER, initialize)
    running = callgrind_total(RUNNING, initialize)
    print("instructions (callgrind, one run each):")
    print(f"  {'one class':>18}: {one / 1e6:8.1f} M")
    print(f"  {'floor':>18}: {floor / 1e6:8.1f} M")
    print(f"  {'revision cost':>18}: {(one - floor) / 1e6:8.1f} M")
    print(f"  {'first answer':>18}: {answer / 1e6:8.1f} M")
    print(f"  {'server answer':>18}: {server / 1e6:8.1f} M")
    print(f"  {'floor answer':>18}: {running / 1e6:8.1f} M")
    print(f"  {'app over floor':>18}: {(answer - running) / 1e6:8.1f} M")


if __name__ == "__main__":
    main()
