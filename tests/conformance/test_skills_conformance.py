"""The conformance suite's skills extension scenarios (SEP-2640, ``sep-2640-*``).

Server: the three server scenarios against ONE ``fixture_server.py`` in its default
configuration (whose skills are ``fixture_skills.py``'s folder), and against the app layer's
``conformance_app.py`` (``App.skills_from`` of the same folder). Client: the four client
scenarios with ``fixture_client.py``. An extension is not on the spec's timeline, so each runs
on its own, forced at 2026-07-28; every check the scenario reports (its own, and the wire
schema check of a server scenario) must be SUCCESS: none skipped, none a warning, none failed.
The list is the suite's own: a scenario it adds fails the first test.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from suitekit import FIXTURE_CLIENT, RESULTS, Suite, fixture_server, strip_ansi

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]

HERE = Path(__file__).resolve().parent
SERVERS = {
    "fixture": HERE / "fixture_server.py",
    "app": HERE.parent / "runtime" / "app" / "conformance_app.py",
}
SERVER_SCENARIOS = {
    "sep-2640-skills-enumeration": 32,
    "sep-2640-skills-manifest": 6,
    "sep-2640-skills-directory": 7,
}
CLIENT_SCENARIOS = {
    "sep-2640-client-no-prefetch": "sep-2640-host-no-prefetch",
    "sep-2640-client-verify-digest": "sep-2640-host-verify-digest",
    "sep-2640-client-verify-size": "sep-2640-host-size-mismatch-failure",
    "sep-2640-client-verify-frontmatter": "sep-2640-host-frontmatter-comparison",
}
TOTALS: dict[str, Counter[str]] = {}


@pytest.fixture(scope="module", params=list(SERVERS))
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """One server process per kind (the low-level fixture, the app): its name and URL."""
    with fixture_server(SERVERS[request.param]) as url:
        yield request.param, url


def checks_of(out: Path, output: str) -> list[dict[str, Any]]:
    """The checks the suite wrote for the one scenario run into ``out``."""
    found = sorted(out.glob("*/checks.json"))
    assert len(found) == 1, f"no single checks.json under {out}:\n{output[-4000:]}"
    checks: list[dict[str, Any]] = json.loads(found[0].read_text())
    return checks


def record(side: str, scenario: str, checks: list[dict[str, Any]]) -> Counter[str]:
    counts = Counter(c["status"] for c in checks)
    TOTALS[f"{side} {scenario}"] = counts
    RESULTS["sep-2640-* (skills extension)"] = "; ".join(
        f"{name}: " + ", ".join(f"{n} {status}" for status, n in sorted(c.items()))
        for name, c in TOTALS.items()
    )
    return counts


def not_success(checks: list[dict[str, Any]]) -> list[str]:
    return [
        f"{c['id']}: {c['status']} {c.get('errorMessage', '')}"
        for c in checks
        if c["status"] != "SUCCESS"
    ]


def test_scenario_list_is_current(conformance_suite: Suite) -> None:
    """Exactly the ``sep-2640-*`` scenarios the suite knows, on each side, are run below."""
    listing = subprocess.run(
        [*conformance_suite.command, "list"], capture_output=True, text=True, timeout=60, check=True
    )
    known = re.findall(r"^\s+- (sep-2640-\S+)", listing.stdout, re.MULTILINE)
    assert sorted(known) == sorted([*SERVER_SCENARIOS, *CLIENT_SCENARIOS])


@pytest.mark.parametrize("scenario", SERVER_SCENARIOS)
def test_server_scenario(
    conformance_suite: Suite, server: tuple[str, str], scenario: str, tmp_path: Path
) -> None:
    name, server_url = server
    run = subprocess.run(
        [*conformance_suite.command, "server", "--url", server_url, "--scenario", scenario,
         "--spec-version", "2026-07-28", "--force", "-o", str(tmp_path)],
        capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    output = strip_ansi(run.stdout + run.stderr)
    checks = checks_of(tmp_path, output)
    counts = record(f"server ({name})", scenario, checks)
    assert not_success(checks) == [], output[-4000:]
    assert counts["SUCCESS"] == SERVER_SCENARIOS[scenario], counts
    assert "wire-schema-valid" in {c["id"] for c in checks}


@pytest.mark.parametrize("scenario", CLIENT_SCENARIOS)
def test_client_scenario(conformance_suite: Suite, scenario: str, tmp_path: Path) -> None:
    run = subprocess.run(
        [*conformance_suite.command, "client", "--command", f"{sys.executable} {FIXTURE_CLIENT}",
         "--scenario", scenario, "--spec-version", "2026-07-28", "--force", "-o", str(tmp_path)],
        capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    output = strip_ansi(run.stdout + run.stderr)
    checks = checks_of(tmp_path, output)
    record("client", scenario, checks)
    assert not_success(checks) == [], output[-4000:]
    assert [c["id"] for c in checks] == [CLIENT_SCENARIOS[scenario]]
    assert run.returncode == 0 and "OVERALL: PASSED" in output, output[-4000:]
