"""The official conformance suite's 2026-07-28 client scenarios against ``fixture_client.py``.

Every client scenario ``--requirements 2026-07-28`` lists outside ``auth/*`` (those are
``test_conformance_client_auth.py``'s) runs at the 2026-07-28 wire (``--spec-version 2026-07-28``, so the suite
tells the fixture to speak that revision), plus the unscored one added after the release; each
must end with every check passed and none failed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from suitekit import Suite, client_scenarios, record_client, run_client_scenario

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]

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
    assert client_scenarios(conformance_suite, REQUIREMENTS) == (
        CLIENT_SCENARIOS,
        UNSCORED_SCENARIOS,
    )


@pytest.mark.parametrize("scenario", CLIENT_SCENARIOS + UNSCORED_SCENARIOS)
def test_client_scenario(
    conformance_suite: Suite, scenario: str, tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    run = run_client_scenario(conformance_suite, scenario, tmp_path, spec_version=REQUIREMENTS)
    record_client(f"client {REQUIREMENTS} (non-auth)", CLIENT_RESULTS, scenario, run)
    record_property("conformance_client", f"{scenario}: {run.passed} passed, {run.failed} failed")
    assert run.ok, f"{scenario}: {run.passed} passed, {run.failed} failed\n{run.output[-6000:]}"
