"""The conformance suite's ``tasks-*`` scenarios (the 2026-07-28 tasks extension, SEP-2663)
against ``fixture_server.py`` (whose task tools are ``fixture_tasks.py``).

The suite runs them with ``--requirements 2026-07-28`` but does not score them (an extension is
not on the spec's timeline); here each is run on its own, forced at 2026-07-28, and must end
with 0 failed checks. The list is the suite's own: a scenario it adds fails the first test.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from suitekit import RESULTS, Suite, fixture_server, strip_ansi

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600)]

HERE = Path(__file__).resolve().parent
SCENARIOS = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
]
#: Scenarios the suite runs without checks yet (its harness for them is pending a rewrite).
NO_CHECKS = {"tasks-status-notifications"}
_CHECKS = re.compile(r"Passed: (\d+)/(\d+), (\d+) failed")
TOTALS: dict[str, tuple[int, int]] = {}


@pytest.fixture(scope="module")
def fixture_url() -> Iterator[str]:
    with fixture_server(HERE / "fixture_server.py") as url:
        yield url


def test_scenario_list_is_current(conformance_suite: Suite) -> None:
    """Exactly the ``tasks-*`` server scenarios the suite knows are run below."""
    listing = subprocess.run(
        [*conformance_suite.command, "list", "--server"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    known = re.findall(r"^\s+- (tasks-\S+)", listing.stdout, re.MULTILINE)
    assert sorted(known) == sorted(SCENARIOS)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_tasks_scenario(
    conformance_suite: Suite, fixture_url: str, scenario: str, tmp_path: Path
) -> None:
    run = subprocess.run(
        [*conformance_suite.command, "server", "--url", fixture_url, "--scenario", scenario,
         "--spec-version", "2026-07-28", "--force", "-o", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    output = strip_ansi(run.stdout + run.stderr)
    found = _CHECKS.search(output)
    assert found is not None, f"{scenario} did not report its checks:\n{output[-4000:]}"
    passed, failed = int(found[1]), int(found[3])
    TOTALS[scenario] = (passed, failed)
    RESULTS["server tasks-* (2026-07-28 extension)"] = (
        f"{sum(p for p, _ in TOTALS.values())} passed, "
        f"{sum(f for _, f in TOTALS.values())} failed in {len(TOTALS)} scenarios"
    )
    assert failed == 0, f"{scenario}: {passed} passed, {failed} failed\n{output[-6000:]}"
    assert passed > 0 or scenario in NO_CHECKS, f"{scenario} ran no checks:\n{output[-4000:]}"
