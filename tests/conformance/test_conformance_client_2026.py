"""The official conformance suite's 2026-07-28 client scenarios against ``fixture_client.py``.

Every client scenario ``--requirements 2026-07-28`` lists outside ``auth/*`` (OAuth is not part
of this runtime yet) runs at the 2026-07-28 wire (``--spec-version 2026-07-28``, so the suite
tells the fixture to speak that revision), plus the unscored one added after the release; each
must end with every check passed and none failed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from suitekit import RESULTS, Suite, strip_ansi

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]

HERE = Path(__file__).resolve().parent
REQUIREMENTS = "2026-07-28"
CLIENT_SCENARIOS = [
    "tools_call",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
]
#: Listed by the suite as "added after the release": run and reported, never scored.
UNSCORED_SCENARIOS = ["json-schema-2020-12-preservation"]
CLIENT_RESULTS: dict[str, tuple[int, int]] = {}


def test_client_scenario_list_is_current(conformance_suite: Suite) -> None:
    """The parametrised list below is exactly what the suite requires of a 2026 client."""
    listing = subprocess.run(
        [*conformance_suite.command, "list", "--requirements", REQUIREMENTS],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    _, _, client_part = listing.stdout.partition("Client scenarios")
    client_part, _, unscored = client_part.partition("Run and reported")
    required = re.findall(r"^\s+- (\S+)", client_part, re.MULTILINE)
    assert [s for s in required if not s.startswith("auth/")] == CLIENT_SCENARIOS
    extra = re.findall(r"^\s+- (\S+) \[client\]", unscored, re.MULTILINE)
    assert [s for s in extra if not s.startswith("auth/")] == UNSCORED_SCENARIOS


@pytest.mark.parametrize("scenario", CLIENT_SCENARIOS + UNSCORED_SCENARIOS)
def test_client_scenario(
    conformance_suite: Suite, scenario: str, tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    command = f"{sys.executable} {HERE / 'fixture_client.py'}"
    run = subprocess.run(
        [*conformance_suite.command, "client", "--command", command, "--scenario", scenario,
         "--spec-version", REQUIREMENTS, "-o", str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    output = strip_ansi(run.stdout + run.stderr)
    found = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", output)
    checks_passed, checks_failed = (int(found[1]), int(found[3])) if found else (0, -1)
    ok = run.returncode == 0 and "OVERALL: PASSED" in output and checks_failed == 0
    CLIENT_RESULTS[scenario] = (checks_passed, checks_failed)
    good = sum(1 for p, f in CLIENT_RESULTS.values() if f == 0 and p > 0)
    RESULTS[f"client {REQUIREMENTS} (non-auth)"] = (
        f"{good} scenarios passed, {len(CLIENT_RESULTS) - good} failed of {len(CLIENT_RESULTS)} run"
        f"; checks {sum(p for p, _ in CLIENT_RESULTS.values())} passed, "
        f"{sum(max(f, 0) for _, f in CLIENT_RESULTS.values())} failed"
    )
    record_property(
        "conformance_client", f"{scenario}: {checks_passed} checks passed, {checks_failed} failed"
    )
    assert ok and checks_passed > 0, (
        f"{scenario}: {checks_passed} passed, {checks_failed} failed\n"
        f"{run.stdout[-4000:]}\n{run.stderr[-2000:]}"
    )
