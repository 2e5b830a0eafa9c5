"""Instructions per echo call of a stdio server, under callgrind (not a test):
``python bench/stdio_instructions.py [--server lowlevel|app|app-async|bare] [--count N]``.

Rates and CPU times move with whatever else runs on a shared machine; instruction counts do
not. The server runs under ``valgrind --tool=callgrind`` twice, driven by ``runtime_stdio``'s
blocking ``Driver``: once answering only ``initialize``, once also ``--count`` sequential echo
calls; the difference divided by the count is the cost of one call, start-up excluded (both
with ``PYTHONHASHSEED=0``, so their start-ups match).
``--pipelined`` keeps 32 calls in flight (requests then arrive in bursts).
``--profile DIR`` keeps the larger run's callgrind file there for ``callgrind_annotate``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench")]

import _callgrind  # noqa: E402
from runtime_stdio import IN_FLIGHT, Driver  # noqa: E402

SERVERS = {
    "lowlevel": [sys.executable, "-m", "examples.server"],
    "app": [sys.executable, str(ROOT / "examples" / "app_server.py")],
    "app-async": [sys.executable, str(ROOT / "bench" / "peers" / "app_async_echo.py")],
    "bare": [sys.executable, str(ROOT / "bench" / "bare_stdio.py")],
}
ECHO = {"name": "echo", "arguments": {"text": "hello"}}


def instructions(
    argv: list[str], count: int, out: Path, ping: bool = False, pipelined: bool = False
) -> int:
    """Instructions the server ran to start, answer ``count`` echo calls (or pings) and exit;
    ``pipelined``: the calls ``IN_FLIGHT`` at a time, so requests arrive in bursts."""
    driver = Driver(_callgrind.command(argv, out))
    driver.initialize()
    if pipelined and count:
        driver.pipelined(count, ECHO)
    for _ in range(0 if pipelined else count):
        driver.call("ping") if ping else driver.call("tools/call", ECHO)
    # Under valgrind a loaded machine can take longer than the usual 5 s to exit and write the
    # totals; killing it then left no totals to read.
    driver.close(grace=300)
    return _callgrind.total(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", choices=sorted(SERVERS), default="lowlevel")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--ping", action="store_true", help="count ping instead of echo")
    parser.add_argument(
        "--pipelined", action="store_true", help=f"echo calls {IN_FLIGHT} at a time"
    )
    parser.add_argument("--profile", type=Path, help="keep the callgrind file here")
    args = parser.parse_args()
    os.environ["PYTHONHASHSEED"] = "0"  # the same start-up in both runs, to the instruction
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.profile or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        base = instructions(SERVERS[args.server], 0, Path(tmp) / "base.out")
        out = folder / f"{args.server}.out"
        full = instructions(SERVERS[args.server], args.count, out, args.ping, args.pipelined)
    per_call = (full - base) / args.count
    what = "ping" if args.ping else f"echo call (x{IN_FLIGHT})" if args.pipelined else "echo call"
    print(
        f"{args.server}: start-up {base / 1e6:.1f} M instructions, {per_call / 1e3:.1f} k per {what}"
    )


if __name__ == "__main__":
    main()
