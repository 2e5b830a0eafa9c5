"""The peer table (not a test): ``python bench/peer_table.py [--rounds 3] [--write-docs]``.

Every peer runs the same echo tool (it returns its ``text`` argument as text content), written
as its own README shows, and is measured by the same client, in the same run, over stdio and
Streamable HTTP:

* the limit: a hand-written loop with no MCP runtime (``bench/bare_stdio.py``; over HTTP the
  bare ASGI app of ``bench/runtime_http.py``, answering JSON);
* mcpbind's low-level ``Server`` (``examples/server.py``; over HTTP ``StreamableHTTPServer``)
  and its app with an ``async def`` echo (``bench/peers/app_async_echo.py``, ``App.http_app``);
* the TypeScript SDK (``bench/peers/ts_stdio_server.cjs``, ``bench/ts_http_server.cjs``;
  installed with npm into ``$MCPBIND_NPM_CACHE`` on first use);
* the official Python SDK's ``MCPServer`` (``tests/runtime/sdk_server.py``) and its low-level
  ``Server`` (``bench/peers/sdk_lowlevel_echo.py``);
* FastMCP 4.x and zeromcp (``bench/peers/fastmcp_echo.py``, ``bench/peers/zeromcp_echo.py``),
  which are not mcpbind's dependencies: they run in a venv of their own, ``--peers-venv``,
  created with ``python -m venv`` and ``pip install`` on first use.

The clients are the existing benchmarks' light drivers, so the figures are the servers' own:
over stdio ``bench/runtime_stdio.py``'s blocking line-at-a-time driver (a new server process per
round: start-up is spawn to the answer to ``initialize``; idle RSS after 300 warm-up calls),
over HTTP ``bench/runtime_http.py``'s raw keep-alive HTTP/1.1 client on uvloop (one server
process for the whole run, warmed up once; a 2025-11-25 session, then the stateless 2026-07-28
era where the peer serves it). Each server as configured by default (over HTTP the SDKs and
FastMCP answer with SSE, mcpbind with JSON when the answer is ready at once). Measured:
sequential ``tools/call`` of echo, the same with 32 in flight, and the server's CPU time per
sequential call (``/proc``; the steadiest column when other work shares the machine).

Rounds interleave: each round measures every peer once, the order rotated by one peer from round
to round. Each cell is the median of the rounds, and in brackets the spread, (max - min) / median.
A peer that cannot run here is listed as not run, with why; a cell a peer does not serve is n/a.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
PEERS = BENCH / "peers"
sys.path[:0] = [str(ROOT), str(BENCH), str(ROOT / "tests")]  # tests: portkit

import httpx  # noqa: E402
import orjson  # noqa: E402
from mcpbind.runtime import run  # noqa: E402
from portkit import on_fresh_port, taken_in  # noqa: E402
from runtime_http import (  # noqa: E402
    MODERN,
    MODERN_META,
    NPM_PACKAGES,
    VERSION,
    LoadClient,
    measure_light,
    node,
    npm_cache,
    start,
)
from runtime_stdio import IN_FLIGHT, Target, measure  # noqa: E402

DOCS = ROOT / "docs" / "benchmarks.md"
START, END = "<!-- peer-table:start -->", "<!-- peer-table:end -->"
PEER_PACKAGES = ("fastmcp==4.*", "zeromcp", "uvloop", "httptools")
DEFAULT_VENV = Path.home() / ".cache" / "mcpbind-bench" / "peers-venv"
ECHO = {"name": "echo", "arguments": {"text": "hello"}}
ERAS = (VERSION, MODERN)
STDIO_COLUMNS = (
    "echo seq /s",
    f"echo x{IN_FLIGHT} /s",
    "server CPU us/echo",
    "idle RSS MiB",
    "start-up ms",
)
HTTP_COLUMNS = ("seq /s", f"x{IN_FLIGHT} /s", "server CPU us/call")


@dataclass
class Peer:
    """One row: how to start it over stdio and over HTTP, or why it cannot run here."""

    key: str
    label: str
    stdio: list[str] = field(default_factory=list)
    #: The HTTP server's command: it prints its URL, or (``http_port``) takes ``--http PORT``.
    http: list[str] = field(default_factory=list)
    http_port: bool = False
    not_run: str | None = None


@dataclass
class Results:
    """Every round's figures per cell, and why a cell was not measured."""

    values: dict[tuple[str, str], dict[str, list[float]]] = field(default_factory=dict)
    missing: dict[tuple[str, str], str] = field(default_factory=dict)

    def add(self, peer: str, place: str, got: dict[str, float]) -> None:
        cell = self.values.setdefault((peer, place), {})
        for metric, value in got.items():
            cell.setdefault(metric, []).append(value)


# -- the peers --------------------------------------------------------------------------------


def peers_python(venv: Path, install: bool) -> Path | str:
    """The peers venv's Python with FastMCP and zeromcp, made on first use; a reason if not."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import fastmcp, zeromcp, uvloop, httptools"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    if not install:
        return f"no FastMCP and zeromcp in {venv} (run without --no-install to make it)"
    print(f"installing {' '.join(PEER_PACKAGES)} into {venv}", file=sys.stderr)
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
    if made.returncode != 0:
        return f"python -m venv failed: {made.stderr.strip()[-200:]}"
    pip = [str(python), "-m", "pip", "install", "--quiet", *PEER_PACKAGES]
    done = subprocess.run(pip, capture_output=True, text=True)
    if done.returncode != 0:
        return f"pip install failed: {done.stderr.strip()[-200:]}"
    return python


def typescript(cache: Path | str, executable: str | None) -> tuple[list[str], list[str], str]:
    """The TypeScript SDK's stdio and HTTP commands; a reason instead if it cannot run."""
    if isinstance(cache, str) or executable is None:
        return [], [], cache if isinstance(cache, str) else "node not found"
    stdio = [executable, str(PEERS / "ts_stdio_server.cjs"), str(cache)]
    return stdio, [executable, str(BENCH / "ts_http_server.cjs"), str(cache)], ""


@dataclass
class Setup:
    """What the peers run on: the peers venv's Python and the TypeScript SDK, or why not."""

    other_python: Path | str
    ts_stdio: list[str]
    ts_http: list[str]
    ts_why: str
    ts_cache: Path | None


def installed_npm_cache() -> Path | str:
    """The npm cache if the TypeScript SDK is already in it (``--no-install``)."""
    cache = Path(os.environ.get("MCPBIND_NPM_CACHE", Path(tempfile.gettempdir()) / "mcpbind-npm"))
    modules = cache / "node_modules"
    if all((modules / name / "package.json").exists() for name in NPM_PACKAGES):
        return cache
    return f"the TypeScript SDK is not in {cache} (run without --no-install to install it)"


def setup(venv: Path, install: bool) -> Setup:
    cache, executable = npm_cache() if install else installed_npm_cache(), node()
    ts_stdio, ts_http, ts_why = typescript(cache, executable)
    ts_cache = cache if isinstance(cache, Path) and not ts_why else None
    return Setup(peers_python(venv, install), ts_stdio, ts_http, ts_why, ts_cache)


def named(name: str, version: str | None) -> str:
    return f"{name} {version}" if version else name


def peers(found: Setup, versions: dict[str, str]) -> list[Peer]:
    python, me = sys.executable, [sys.executable, str(BENCH / "runtime_http.py"), "--serve"]
    other = found.other_python
    # The peers venv runs its own packages only: not the checkout on PYTHONPATH.
    in_venv = ["env", "-u", "PYTHONPATH", str(other)]
    other_why = other if isinstance(other, str) else None
    sdk = named("Python SDK", versions.get("mcp"))
    lowlevel = [python, str(PEERS / "sdk_lowlevel_echo.py")]
    fastmcp = [*in_venv, str(PEERS / "fastmcp_echo.py")]
    zeromcp = [*in_venv, str(PEERS / "zeromcp_echo.py")]
    return [
        Peer(
            "limit",
            "hand-written loop (the limit)",
            [python, str(BENCH / "bare_stdio.py")],
            [*me, "bare", "--json"],
        ),
        Peer(
            "mcpbind",
            "mcpbind low-level `Server`",
            [python, "-m", "examples.server"],
            [*me, "mcpbind"],
        ),
        Peer(
            "mcpbind-app",
            "mcpbind app, `async def` echo",
            [python, str(PEERS / "app_async_echo.py")],
            [python, str(BENCH / "app_echo.py"), "--serve", "app-async"],
        ),
        Peer(
            "typescript-sdk",
            named("TypeScript SDK", versions.get("typescript-sdk")),
            found.ts_stdio,
            found.ts_http,
            not_run=found.ts_why or None,
        ),
        Peer(
            "python-sdk",
            f"{sdk} `MCPServer`",
            [python, str(ROOT / "tests" / "runtime" / "sdk_server.py")],
            [*me, "python-sdk"],
        ),
        Peer("python-sdk-lowlevel", f"{sdk} low-level `Server`", lowlevel, lowlevel, True),
        Peer(
            "fastmcp",
            named("FastMCP", versions.get("fastmcp")),
            fastmcp,
            fastmcp,
            True,
            other_why,
        ),
        Peer(
            "zeromcp",
            named("zeromcp", versions.get("zeromcp")),
            zeromcp,
            zeromcp,
            True,
            other_why,
        ),
    ]


# -- the machine and the versions -------------------------------------------------------------


def versions(found: Setup) -> dict[str, str]:
    """Each peer's version, and the stack's under them, as the run found them."""
    got = {"python": platform.python_version()}
    for name in ("mcp", "uvicorn", "pydantic"):
        got[name] = importlib.metadata.version(name)
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True
    )
    got["mcpbind"] = commit.stdout.strip() or "?"
    if isinstance(found.other_python, Path):
        code = (
            "import importlib.metadata as m, json; print(json.dumps({n: m.version(n) for n in"
            " ('fastmcp', 'zeromcp', 'uvicorn')}))"
        )
        done = subprocess.run([str(found.other_python), "-c", code], capture_output=True)
        if done.returncode == 0:
            other = orjson.loads(done.stdout)
            got.update(fastmcp=other["fastmcp"], zeromcp=other["zeromcp"])
            got["peers-venv uvicorn"] = other["uvicorn"]
    if found.ts_cache is not None:
        probe = [*found.ts_stdio[:1], str(PEERS / "ts_client.cjs"), str(found.ts_cache), "versions"]
        done = subprocess.run(probe, capture_output=True)
        if done.returncode == 0:
            ts = orjson.loads(done.stdout)
            got["typescript-sdk"], got["node"] = ts["version"], ts["node"]
    return got


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def load() -> str:
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


# -- starting and measuring -------------------------------------------------------------------


def start_on_port(argv: list[str], timeout: float = 60) -> tuple[subprocess.Popen[bytes], str]:
    """Start a server that takes ``--http PORT``; its URL once it answers HTTP there.
    Such a server only takes a port: one taken before it bound it is tried again on a fresh
    one (``portkit.on_fresh_port``, which warns so)."""

    def attempt(port: int) -> tuple[subprocess.Popen[bytes], str]:
        with tempfile.TemporaryFile() as log:  # the server's stderr, for the reason it failed
            process = subprocess.Popen(
                [*argv, "--http", str(port)], stdout=subprocess.DEVNULL, stderr=log, cwd=ROOT
            )
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if process.poll() is not None:
                    log.seek(0)
                    output = log.read().decode(errors="replace")
                    if (taken := taken_in(output)) is not None:
                        raise taken
                    tail = output.strip().splitlines()[-1:]
                    raise RuntimeError(f"exited with status {process.returncode}: {''.join(tail)}")
                # An HTTP answer (any status), not just a connection: whoever took the port
                # may be listening on it.
                url = f"http://127.0.0.1:{port}/mcp"
                try:
                    httpx.get(url, timeout=1)
                    return process, url
                except httpx.TransportError:
                    time.sleep(0.1)
        process.kill()
        raise RuntimeError(f"not listening after {timeout:.0f} s")

    return on_fresh_port(attempt, " ".join(argv[-2:]))


def short(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 160 else text[:157] + "..."


async def refusal(url: str, modern: bool, error: Exception) -> str:
    """Why a server failed the echo: its answer to one more, as it came (HTTP status, body)."""
    client = LoadClient(url, modern)
    try:
        await client.open_session()
        meta = b"," + MODERN_META if modern else b""
        body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
        body += b'"arguments":{"text":"hello"}%s}}' % meta
        reply = await client.connections[0].exchange(client._request(body))
        answer = " ".join(reply.body.decode(errors="replace").split())[:140]
        return f"answered a {MODERN if modern else VERSION} echo with HTTP {reply.status}: {answer}"
    except Exception:
        return f"failed: {short(error)}"
    finally:
        client.close()


def rotated(items: list[Peer], by: int) -> list[Peer]:
    by %= max(len(items), 1)
    return items[by:] + items[:by]


def stdio_round(peers_: list[Peer], results: Results, count: int, turn: int) -> None:
    for peer in rotated(peers_, turn):
        if (peer.key, "stdio") in results.missing:
            continue
        try:
            got = measure(Target(peer.stdio, ECHO), count)
        except (Exception, SystemExit) as error:  # the driver exits when a server fails
            results.missing[(peer.key, "stdio")] = f"failed: {short(error)}"
            continue
        results.add(peer.key, "stdio", {k: v for k, v in got.items() if "ping" not in k})


Servers = dict[str, tuple[subprocess.Popen[bytes] | subprocess.Popen[str], str]]


def start_servers(peers_: list[Peer], results: Results) -> Servers:
    servers: Servers = {}
    for peer in peers_:
        try:
            servers[peer.key] = (
                start_on_port(peer.http) if peer.http_port else start(peer.label, peer.http)
            )
        except (Exception, SystemExit) as error:  # start() exits when no URL comes
            for era in ERAS:
                results.missing[(peer.key, era)] = f"did not start: {short(error)}"
    return servers


def http_pass(
    peers_: list[Peer], servers: Servers, results: Results, count: int, turn: int | None
) -> None:
    """Each server measured in each era it serves; ``turn`` None: the unrecorded warm-up."""
    for peer in rotated(peers_, turn or 0):
        if peer.key not in servers:
            continue
        process, url = servers[peer.key]
        for era in ERAS:
            if (peer.key, era) in results.missing:
                continue
            try:
                got = run(measure_light, url, process.pid, count, era == MODERN)
            except Exception as error:
                results.missing[(peer.key, era)] = run(refusal, url, era == MODERN, error)
                continue
            if turn is not None:
                results.add(peer.key, era, got)


def bench(peers_: list[Peer], rounds: int, count: int, transports: list[str]) -> Results:
    results = Results()
    runnable = [peer for peer in peers_ if peer.not_run is None]
    servers = start_servers(runnable, results) if "http" in transports else {}
    try:
        if servers:
            http_pass(runnable, servers, results, max(count // 4, 100), None)
        for turn in range(rounds):
            if "stdio" in transports:
                stdio_round(runnable, results, count, turn)
            if servers:
                http_pass(runnable, servers, results, count, turn)
    finally:
        for process, _url in servers.values():
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
    return results


# -- the report -------------------------------------------------------------------------------


def cell(values: list[float], decimals: int = 0) -> str:
    """The median, and the spread of the rounds as a share of it."""
    middle = statistics.median(values)
    figure = f"{middle:,.{decimals}f}"
    if len(values) < 2 or not middle:
        return figure
    return f"{figure} ({(max(values) - min(values)) / middle:.0%})"


def units(metric: str) -> str:
    """A column's heading: ``echo seq /s`` as ``seq /s``, ``us/echo`` as ``µs/call``."""
    return metric.removeprefix("echo ").replace("us/echo", "us/call").replace(" us/", " µs/")


def table(
    peers_: list[Peer], results: Results, places: list[tuple[str, tuple[str, ...]]]
) -> tuple[list[str], dict[str, str]]:
    """Markdown rows, a group of columns per (place, metrics); and the footnotes."""
    notes: dict[str, str] = {}
    head = ["peer"] + [
        f"{place} {units(metric)}" for place, metrics in places for metric in metrics
    ]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|--:" * (len(head) - 1) + "|"]
    for peer in peers_:
        row = [peer.label]
        for place, metrics in places:
            reason = peer.not_run or results.missing.get((peer.key, place))
            values = results.values.get((peer.key, place))
            if reason is not None or values is None:
                notes[f"{peer.label}, {place}"] = reason or "no figures"
                row += ["not run" if peer.not_run else "n/a"] * len(metrics)
            else:
                row += [cell(values[m], 1 if "MiB" in m else 0) for m in metrics]
        lines.append("| " + " | ".join(row) + " |")
    return lines, notes


def report(
    peers_: list[Peer],
    results: Results,
    facts: dict[str, str],
    found_versions: dict[str, str],
    transports: list[str],
) -> str:
    out = [
        f"Measured {facts['date']} by `python bench/peer_table.py --rounds {facts['rounds']}"
        f" --calls {facts['calls']}` at mcpbind `{facts['mcpbind']}`, on {facts['cpu']}"
        f" ({facts['cores']} cores). Load average (1 / 5 / 15 min) at the start"
        f" {facts['load start']}, at the end {facts['load end']}.",
        "",
    ]
    busiest = max(float(facts[key].split()[0]) for key in ("load start", "load end"))
    if busiest > float(facts["cores"]):
        out += [
            "The load average was above the number of cores: other work shared the machine, so "
            "the rates moved with it (see their spread); the server CPU per call usually moves "
            "least. Compare peers within one run only.",
            "",
        ]
    out += [
        "Versions: " + ", ".join(f"{name} {value}" for name, value in found_versions.items()) + ".",
        "",
        f"Each cell: the median of {facts['rounds']} interleaved rounds, and in brackets the "
        "spread, (max - min) / median. Calls/s of sequential `tools/call` echo and with "
        f"{IN_FLIGHT} in flight; the server's CPU time per sequential call.",
        "",
    ]
    notes: dict[str, str] = {}
    if "stdio" in transports:
        lines, found = table(peers_, results, [("stdio", STDIO_COLUMNS)])
        out += [*lines, ""]
        notes.update(found)
    if "http" in transports:
        lines, found = table(peers_, results, [(era, HTTP_COLUMNS) for era in ERAS])
        out += [
            f"Streamable HTTP: {VERSION} in a session (`initialize` first); {MODERN} "
            "stateless (no session, the headers and `_meta` on every POST).",
            "",
            *lines,
            "",
        ]
        notes.update({f"{key} (HTTP)": why for key, why in found.items()})
    out += [f"- {key}: {why}" for key, why in notes.items()]
    return "\n".join(out).rstrip() + "\n"


def write_docs(section: str) -> None:
    text = DOCS.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise SystemExit(f"{DOCS} has no {START} ... {END} section")
    before, rest = text.split(START, 1)
    _old, after = rest.split(END, 1)
    DOCS.write_text(f"{before}{START}\n{section}{END}{after}", encoding="utf-8")
    print(f"wrote the table into {DOCS.relative_to(ROOT)}", file=sys.stderr)


# -- the command ------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--calls", type=int, default=1000, help="sequential calls per cell (twice as many x32)"
    )
    parser.add_argument("--transport", choices=["stdio", "http", "both"], default="both")
    parser.add_argument("--peers", help="comma-separated keys of the peers to run (default: all)")
    parser.add_argument(
        "--peers-venv",
        type=Path,
        default=DEFAULT_VENV,
        help=f"the venv holding FastMCP and zeromcp, made on first use (default: {DEFAULT_VENV})",
    )
    parser.add_argument(
        "--no-install", action="store_true", help="never create the peers venv or run pip/npm"
    )
    parser.add_argument(
        "--write-docs", action="store_true", help=f"replace the marked section of {DOCS.name}"
    )
    parser.add_argument("--list", action="store_true", help="print the peers' keys and exit")
    args = parser.parse_args()
    # A terminated run stops its servers too (SystemExit runs bench()'s clean-up).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.list:
        # The rows without setting anything up (the labels lack the versions).
        offline = Setup("(not looked up)", [], [], "", None)
        print("\n".join(f"{p.key}\t{p.label}" for p in peers(offline, {})))
        return
    # The servers started from this checkout import it, whichever venv holds mcpbind.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    )
    transports = ["stdio", "http"] if args.transport == "both" else [args.transport]
    facts: dict[str, str] = {"load start": load()}
    found = setup(args.peers_venv, not args.no_install)
    found_versions = versions(found)
    chosen = peers(found, found_versions)
    if args.peers:
        keys = args.peers.split(",")
        unknown = set(keys) - {p.key for p in chosen}
        if unknown:
            raise SystemExit(f"unknown peers: {', '.join(sorted(unknown))}")
        chosen = [p for p in chosen if p.key in keys]
    results = bench(chosen, args.rounds, args.calls, transports)
    facts.update(
        {
            "load end": load(),
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "rounds": str(args.rounds),
            "calls": str(args.calls),
            "mcpbind": found_versions.pop("mcpbind"),
            "cpu": cpu_model(),
            "cores": str(os.cpu_count() or 0),
        }
    )
    section = report(chosen, results, facts, found_versions, transports)
    print(section)
    if args.write_docs:
        write_docs(section)


if __name__ == "__main__":
    main()
