"""The official conformance suite against our fixture server and our scenario-driven client.

Server: every scenario of ``--requirements 2025-11-25`` and of ``--requirements 2026-07-28``
runs against ONE ``fixture_server.py`` process on 127.0.0.1 in the default configuration
(both eras from one endpoint); every scored check must pass, and so must the 2026 scenarios
the suite runs unscored (pending). Client: every 2025-11-25 client scenario except
``auth/*`` (those are ``test_conformance_client_auth.py``'s), each run with ``fixture_client.py``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from suitekit import (
    RESULTS,
    Suite,
    client_scenarios,
    fixture_server,
    parse_summary,
    record_client,
    run_client_scenario,
)

pytestmark = [pytest.mark.interop, pytest.mark.timeout(900)]

HERE = Path(__file__).resolve().parent
REQUIREMENTS = "2025-11-25"
#: The 2025-11-25 client scenarios outside ``auth/*``, plus one added after the release.
CLIENT_SCENARIOS = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]
EXTRA_CLIENT_SCENARIOS = ["json-schema-2020-12-preservation"]
CLIENT_RESULTS: dict[str, tuple[int, int]] = {}


#: Scenarios the suite runs for 2026-07-28 without scoring them yet; they must pass anyway.
PENDING_2026 = [
    "json-schema-2020-12",
    "http-header-validation",
    "http-custom-header-server-validation",
]


@pytest.fixture(scope="module")
def fixture_url() -> Iterator[str]:
    """ONE fixture server process, default configuration, for both requirement sets."""
    with fixture_server(HERE / "fixture_server.py") as url:
        yield url


@pytest.mark.parametrize("requirements", ["2025-11-25", "2026-07-28"])
def test_server_scenarios(
    conformance_suite: Suite,
    fixture_url: str,
    requirements: str,
    tmp_path: Path,
    record_property: pytest.RecordProperty,
) -> None:
    run = subprocess.run(
        [*conformance_suite.command, "server", "--url", fixture_url, "--requirements",
         requirements, "-o", str(tmp_path)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    summary = parse_summary(run.stdout + run.stderr)
    passed, failed = summary.totals()
    extra_passed, extra_failed = summary.totals(scored=False)
    line = (
        f"{passed} passed, {failed} failed in {len(summary.scenarios) - len(summary.unscored)} "
        f"scored scenarios; unscored: {extra_passed} passed, {extra_failed} failed"
    )
    RESULTS[f"server --requirements {requirements}"] = line
    record_property(f"conformance_server_{requirements}", line)
    assert len(summary.scenarios) >= 30, (
        f"the suite ran too few scenarios:\n{run.stdout}\n{run.stderr}"
    )
    assert failed == 0 and passed > 0, f"{line}; failing: {summary.failing()}\n{run.stdout[-4000:]}"
    if requirements == "2026-07-28":
        for scenario in PENDING_2026:
            checks = summary.scenarios.get(scenario)
            assert checks is not None, f"{scenario} did not run:\n{run.stdout[-4000:]}"
            assert checks[1] == 0 and checks[0] > 0, f"{scenario}: {checks}\n{run.stdout[-4000:]}"


def test_client_scenario_list_is_current(conformance_suite: Suite) -> None:
    """The parametrised list below is exactly what the suite requires (auth aside)."""
    required, _ = client_scenarios(conformance_suite, REQUIREMENTS)
    assert required == CLIENT_SCENARIOS


@pytest.mark.parametrize("scenario", CLIENT_SCENARIOS + EXTRA_CLIENT_SCENARIOS)
def test_client_scenario(
    conformance_suite: Suite, scenario: str, tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    run = run_client_scenario(conformance_suite, scenario, tmp_path)
    record_client(f"client {REQUIREMENTS} (non-auth)", CLIENT_RESULTS, scenario, run)
    record_property("conformance_client", f"{scenario}: {run.passed} passed, {run.failed} failed")
    assert run.ok, f"{scenario}: {run.passed} passed, {run.failed} failed\n{run.output[-6000:]}"
