"""The conformance suite's 2026-07-28 multi round-trip and listen scenarios against one handler
set written for the handshake era (``mrtr_fixture.py``), over stateless Streamable HTTP.

Every check of the ``input-required-result-*`` scenarios must pass. Of ``server-stateless``,
the checks of what the server core does (listen streams, filters, list changes, -32021) must;
its HTTP status and header checks belong to the transport and are not asserted here.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from suitekit import Suite, fixture_server

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600)]

HERE = Path(__file__).resolve().parent
INPUT_REQUIRED = [
    "basic-elicitation",
    "basic-sampling",
    "basic-list-roots",
    "request-state",
    "multiple-input-requests",
    "multi-round",
    "missing-input-response",
    "non-tool-request",
    "result-type",
    "unsupported-methods",
    "tampered-state",
    "capability-check",
    "ignore-extra-params",
    "validate-input",
]
CORE_CHECKS = {
    "sep-2575-server-sends-subscription-ack",
    "sep-2575-server-tags-subscription-id",
    "sep-2575-server-honors-notification-filter",
    "sep-2575-server-sends-prompts-list-changed-on-subscription",
    "sep-2575-server-sends-tools-list-changed-on-subscription",
    "sep-2575-server-rejects-undeclared-capability",
}


@pytest.fixture(scope="module")
def fixture_url() -> Iterator[str]:
    with fixture_server(HERE / "mrtr_fixture.py") as url:
        yield url


def run_scenario(suite: Suite, url: str, scenario: str, out: Path) -> dict[str, str]:
    """Each check's status, from the suite's ``checks.json``."""
    run = subprocess.run(
        [*suite.command, "server", "--url", url, "--scenario", scenario, "-o", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    files = list(out.glob(f"server-{scenario}-*/checks.json"))
    assert len(files) == 1, f"no results for {scenario}:\n{run.stdout}\n{run.stderr}"
    return {check["id"]: check["status"] for check in json.loads(files[0].read_text())}


@pytest.mark.parametrize("scenario", INPUT_REQUIRED)
def test_input_required_result_scenarios(
    conformance_suite: Suite, fixture_url: str, tmp_path: Path, scenario: str
) -> None:
    checks = run_scenario(
        conformance_suite, fixture_url, f"input-required-result-{scenario}", tmp_path
    )
    assert checks and all(status == "SUCCESS" for status in checks.values()), checks


def test_listen_and_capability_checks_of_server_stateless(
    conformance_suite: Suite, fixture_url: str, tmp_path: Path
) -> None:
    checks = run_scenario(conformance_suite, fixture_url, "server-stateless", tmp_path)
    assert {check: checks.get(check) for check in CORE_CHECKS} == dict.fromkeys(
        CORE_CHECKS, "SUCCESS"
    )
