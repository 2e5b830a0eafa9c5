"""The official conformance suite against a server written with the app layer
(``conformance_app.py``): every scored scenario of both requirement sets passes, on one
process serving both eras, including the stateless era's input-required rounds driven by
``Context`` (elicit, sample, list_roots under chosen keys). What the suite runs unscored
(the tasks extension, pending scenarios) is not asserted here."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from suitekit import Suite, cache_dir, install_suite, parse_summary

pytestmark = [pytest.mark.interop, pytest.mark.timeout(900)]

APP = Path(__file__).with_name("conformance_app.py")

REQUIREMENTS = ["2025-11-25", "2026-07-28"]
#: Scenarios that must be among those run and passed: the app's own tools, resources, prompts.
MUST_RUN = ["tools-call-mixed-content", "resources-templates-read", "prompts-get-with-args"]


@pytest.fixture(scope="module")
def suite() -> Suite:
    return install_suite(cache_dir())


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, str(APP), "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        process.kill()
        pytest.fail(f"the app did not start (printed {url!r})")
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.parametrize("requirements", REQUIREMENTS)
def test_every_scored_scenario_passes(
    suite: Suite, app_url: str, requirements: str, tmp_path: Path
) -> None:
    run = subprocess.run(
        [*suite.command, "server", "--url", app_url, "--requirements", requirements,
         "-o", str(tmp_path)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    summary = parse_summary(run.stdout + run.stderr)
    passed, failed = summary.totals()
    assert failed == 0 and summary.failing() == [], run.stdout[-3000:]
    assert passed > 60
    ran = {name for name, (ok, _) in summary.scenarios.items() if ok}
    assert set(MUST_RUN) <= ran
